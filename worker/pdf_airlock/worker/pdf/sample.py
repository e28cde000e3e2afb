"""The trusted sample document the zygote's warm-up parses: one page saying ``SAMPLE_TEXT``.

Built here, never read from disk; each parser's ``warm_up`` runs on it (``pdf_airlock.worker.warmup``).
"""

from __future__ import annotations

import io
from typing import Any, Final

__all__ = [
    "SAMPLE_HIDDEN",
    "SAMPLE_PASSWORD",
    "SAMPLE_TABLE",
    "SAMPLE_TEXT",
    "hidden_pdf",
    "table_pdf",
    "tiny_document",
    "tiny_pdf",
]

SAMPLE_TEXT: Final = "pdf-airlock warm-up"
SAMPLE_TABLE: Final = (("Name", "Count"), ("warm", "1"), ("up", "2"))
SAMPLE_HIDDEN: Final = "hidden warm-up"
SAMPLE_PASSWORD: Final = "warm-up"  # noqa: S105 - protects only the generated warm-up file


def tiny_document(attachment: bool = True) -> Any:
    """A trusted one-page pikepdf document saying ``SAMPLE_TEXT``, with an attachment."""
    import pikepdf

    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
        )
    )
    content = f"BT /F1 12 Tf 72 720 Td ({SAMPLE_TEXT}) Tj ET".encode()
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
        Contents=pdf.make_stream(content),
    )
    pdf.pages.append(pikepdf.Page(page))
    if attachment:
        pdf.attachments["warm-up.txt"] = pikepdf.AttachedFileSpec(
            pdf,
            b"warm-up",
            description="",
            filename="warm-up.txt",
            mime_type="text/plain",
            creation_date="",
            mod_date="",
        )
    return pdf


def tiny_pdf(encryption: object = None) -> bytes:
    import pikepdf

    pdf = tiny_document(attachment=encryption is None)
    if encryption is None:  # exercise the outline and attachment code paths too
        with pdf.open_outline() as outline:
            outline.root.append(pikepdf.OutlineItem(SAMPLE_TEXT, 0))
        with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:  # XMP: lxml and pikepdf's models
            meta["dc:title"] = SAMPLE_TEXT
            meta["xmp:CreateDate"] = "2026-01-01T00:00:00Z"
    out = io.BytesIO()
    pdf.save(out, encryption=encryption or False)
    return out.getvalue()


def table_pdf() -> bytes:
    """A trusted page with ``SAMPLE_TABLE`` twice: in a ruled grid, and aligned by whitespace
    alone (the table finder's two paths)."""

    ops = ["0.5 w"]
    for row, cells in enumerate(SAMPLE_TABLE):
        for column, text in enumerate(cells):
            x, y = 72 + 120 * column, 700 - 20 * row
            ops.append(f"{x} {y} 120 20 re S")
            ops.append(f"BT /F1 10 Tf {x + 4} {y + 6} Td ({text}) Tj ET")
            ops.append(f"BT /F1 10 Tf {x} {y - 200} Td ({text}) Tj ET")
    pdf = tiny_document(attachment=False)
    page = pdf.pages[0]
    page.obj.Contents = pdf.make_stream("\n".join(ops).encode())
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def hidden_pdf() -> bytes:
    """A trusted page saying ``SAMPLE_TEXT``, with ``SAMPLE_HIDDEN`` in white on the paper and
    again in invisible mode over an image that shows ink, and a line too small to read: each
    path of the visibility stage (``pdf_airlock.worker.pdf.visibility``)."""
    import pikepdf

    pdf = tiny_document(attachment=False)
    pixels = bytes(0 if (x // 2 + y // 2) % 2 else 255 for y in range(16) for x in range(64))
    image = pikepdf.Stream(pdf, pixels)
    image.Type, image.Subtype, image.Width, image.Height = pikepdf.Name.XObject, pikepdf.Name.Image, 64, 16
    image.ColorSpace, image.BitsPerComponent = pikepdf.Name.DeviceGray, 8
    page = pdf.pages[0]
    page.obj.Resources.XObject = pikepdf.Dictionary(Ink=image)
    page.obj.Contents = pdf.make_stream(
        f"BT /F1 12 Tf 72 720 Td ({SAMPLE_TEXT}) Tj ET "
        f"q 1 1 1 rg BT /F1 12 Tf 72 680 Td ({SAMPLE_HIDDEN}) Tj ET Q "
        f"q 200 0 0 20 72 600 cm /Ink Do Q BT 3 Tr /F1 12 Tf 74 604 Td ({SAMPLE_TEXT}) Tj ET "
        f"BT /F1 0.5 Tf 72 500 Td ({SAMPLE_HIDDEN}) Tj ET".encode()
    )
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()
