"""Warm-up run in the zygote before it accepts jobs.

Imports every parser library and runs each engine once over a tiny document built here, so the
modules, codecs and lazily-loaded tables a parse needs are already in memory when a job child
is forked. The child inherits them and never has to open a file.
"""

from __future__ import annotations

import io
from typing import Final, Literal

__all__ = ["warm_up"]

_WARMUP_TEXT: Final = "pdf-airlock warm-up"
_WARMUP_PASSWORD: Final = "warm-up"  # noqa: S105 - protects only the generated warm-up file


def _tiny_pdf(encryption: object = None) -> bytes:
    import pikepdf

    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
        )
    )
    content = f"BT /F1 12 Tf 72 720 Td ({_WARMUP_TEXT}) Tj ET".encode()
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
        Contents=pdf.make_stream(content),
    )
    pdf.pages.append(pikepdf.Page(page))
    if encryption is None:  # exercise the outline and attachment code paths too
        pdf.attachments["warm-up.txt"] = pikepdf.AttachedFileSpec(
            pdf,
            b"warm-up",
            description="",
            filename="warm-up.txt",
            mime_type="text/plain",
            creation_date="",
            mod_date="",
        )
        with pdf.open_outline() as outline:
            outline.root.append(pikepdf.OutlineItem(_WARMUP_TEXT, 0))
    out = io.BytesIO()
    pdf.save(out, encryption=encryption or False)  # type: ignore[arg-type]
    return out.getvalue()


def warm_up() -> None:
    """Import and exercise every engine; raises if an engine does not work at all."""
    from worker.parsers import get_parser

    data = _tiny_pdf()
    info = get_parser("pdf_info")(data, {})
    outline = get_parser("pdf_outline")(data, {"max_depth": 4, "max_items": 10})
    attachments = get_parser("pdf_attachments")(data, {"max_bytes": 100, "extract": "warm-up.txt"})
    get_parser("pdf_annotations")(data, {"max_items": 10})
    get_parser("pdf_forms")(data, {"max_items": 10})
    get_parser("pdf_security")(data, {})
    if outline["items"][0]["page"] != 1 or attachments["extracted"] is None:
        raise RuntimeError("outline or attachment parsing failed its warm-up")
    get_parser("page_count")(data, {})
    fast = get_parser("pdf_read")(data, {"max_chars": 1000})
    layout = get_parser("pdf_read")(data, {"max_chars": 1000, "engine": "layout"})
    if info["page_count"] != 1 or _WARMUP_TEXT not in fast["pages"][0]["text"]:
        raise RuntimeError("PDF engines failed their warm-up")
    if _WARMUP_TEXT not in layout["pages"][0]["text"]:
        raise RuntimeError("pdfminer failed its warm-up")
    _warm_crypto()


def _warm_crypto() -> None:
    """qpdf's crypto provider initialises itself (and may read its config) on first use, which
    a sandboxed child cannot do: decrypt once per supported handler here, with every engine."""
    import pikepdf

    from worker.parsers import get_parser

    handlers: tuple[tuple[Literal[2, 3, 4, 5, 6], bool], ...] = (
        (6, True),
        (4, True),
        (4, False),
        (3, False),
        (2, False),
    )
    for revision, aes in handlers:
        data = _tiny_pdf(
            pikepdf.Encryption(
                user=_WARMUP_PASSWORD, owner=_WARMUP_PASSWORD, R=revision, aes=aes, metadata=aes
            )
        )
        args = {"password": _WARMUP_PASSWORD, "max_chars": 1000}
        get_parser("pdf_info")(data, args)
        get_parser("pdf_read")(data, args)
        get_parser("pdf_read")(data, args | {"engine": "layout"})
