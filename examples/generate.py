"""Regenerate the bundled sample PDFs in this folder: ``python examples/generate.py``.

The PDFs are committed so ``make serve`` works without the test extras; this script shows
exactly how they were made (fpdf2 for layout, pikepdf for encryption, labels and bookmarks).
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pikepdf
from fpdf import FPDF

HERE = Path(__file__).resolve().parent

WELCOME = [
    "Welcome to pdf-airlock\n\nThis document was opened by a sandboxed job child.\n"
    "The supervisor never parses a PDF: it passes an open file descriptor to a fresh,\n"
    "resource-limited process forked from a warmed zygote, and validates what comes back.",
    "Page two\n\nAsk for pages with a selector such as 1-3,7.\nLong text comes back in parts: "
    "follow the cursor.",
]

LEFT = ["Left column, line one.", "Left column, line two.", "Left column, line three."]
RIGHT = ["Right column, line one.", "Right column, line two.", "Right column, line three."]


def _document(title: str) -> FPDF:
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_title(title)
    pdf.set_author("pdf-airlock")
    pdf.set_creation_date(datetime(2026, 1, 1, tzinfo=UTC))  # reproducible bytes
    pdf.set_font("helvetica", size=12)
    return pdf


def welcome() -> bytes:
    pdf = _document("Welcome to pdf-airlock")
    for text in WELCOME:
        pdf.add_page()
        for line in text.split("\n"):
            if line:
                pdf.cell(text=line, new_x="LMARGIN", new_y="NEXT")
            else:
                pdf.ln(14)
    return bytes(pdf.output())


def two_columns() -> bytes:
    pdf = _document("Two columns")
    pdf.add_page()
    for x, lines in ((60, LEFT), (320, RIGHT)):
        for row, line in enumerate(lines):
            pdf.set_xy(x, 80 + 18 * row)
            pdf.cell(text=line)
    return bytes(pdf.output())


def report() -> bytes:
    """Three pages labelled i, 1, 2 with bookmarks, and a chart image on page 2."""
    from PIL import Image, ImageDraw

    pdf = _document("Quarterly report")
    chart = Image.new("RGB", (240, 120), (255, 255, 255))
    draw = ImageDraw.Draw(chart)
    for bar, height in enumerate((40, 70, 55, 100)):
        draw.rectangle((20 + 55 * bar, 115 - height, 60 + 55 * bar, 115), fill=(40, 90, 160))
    pages = [
        ["Contents", "1 Revenue", "2 Outlook"],
        ["Revenue", "Revenue grew in every quarter; the chart shows the totals."],
        ["Outlook", "The outlook is stable. Revenue is expected to grow again."],
    ]
    for number, lines in enumerate(pages):
        pdf.add_page()
        for line in lines:
            pdf.cell(text=line, new_x="LMARGIN", new_y="NEXT")
        if number == 1:
            pdf.image(chart, x=60, y=140, w=240)
    out = io.BytesIO()
    with pikepdf.open(io.BytesIO(bytes(pdf.output()))) as doc:
        doc.Root.PageLabels = pikepdf.Dictionary(
            Nums=[0, pikepdf.Dictionary(S=pikepdf.Name.r), 1, pikepdf.Dictionary(S=pikepdf.Name.D)]
        )
        with doc.open_outline() as outline:
            outline.root.extend(
                [
                    pikepdf.OutlineItem("Contents", 0),
                    pikepdf.OutlineItem("Revenue", 1),
                    pikepdf.OutlineItem("Outlook", 2),
                ]
            )
        doc.save(out, deterministic_id=True)
    return out.getvalue()


def encrypted() -> bytes:
    out = io.BytesIO()
    with pikepdf.open(io.BytesIO(welcome())) as pdf:
        pdf.save(out, encryption=pikepdf.Encryption(user="airlock", owner="airlock-owner", R=6))
    return out.getvalue()


def main() -> None:
    for name, build in (
        ("welcome.pdf", welcome),
        ("two-columns.pdf", two_columns),
        ("encrypted.pdf", encrypted),
        ("report.pdf", report),
    ):
        (HERE / name).write_bytes(build())


if __name__ == "__main__":
    main()
