"""``page_count``: how many pages PDFium sees (the supervisor uses it to split a long read).

Input: untrusted bytes; returns one bounded integer.
"""

from __future__ import annotations

from typing import Any

from pdf_airlock.worker.pdf.opening import open_pdfium

__all__ = ["run"]


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    document = open_pdfium(data, args.get("password"))
    try:
        return {"page_count": len(document)}
    finally:
        document.close()
