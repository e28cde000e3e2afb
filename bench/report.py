"""The one way a benchmark writes its figures: a block of a docs page between markers.

``write_block(doc, "NAME", text)`` puts ``text`` between ``<!-- NAME -->`` and ``<!-- /NAME -->``
in ``doc``, keeping every other block (each written by its own benchmark, with its command). A
block written for the first time goes at the end of the page.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["PERFORMANCE", "write_block"]

PERFORMANCE = Path(__file__).resolve().parents[1] / "docs" / "performance.md"


def write_block(doc: Path, marker: str, text: str) -> None:
    block = f"<!-- {marker} -->\n{text.strip()}\n<!-- /{marker} -->"
    pattern = re.compile(rf"<!-- {re.escape(marker)} -->.*<!-- /{re.escape(marker)} -->", flags=re.S)
    old = doc.read_text() if doc.exists() else ""
    if pattern.search(old):
        doc.write_text(pattern.sub(lambda _: block, old))
    else:
        doc.write_text(old.rstrip("\n") + ("\n\n" if old else "") + block + "\n")
