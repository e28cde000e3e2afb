"""A report with known structure for the ``pdf_markdown`` tests, built with fpdf2's core fonts.

Three pages with a running header and a "Page N of 3" footer: a title, numbered sections and
subsections in three sizes of Helvetica Bold, Times body paragraphs (one word hyphenated across
a line break), a bullet list with a nested item, a numbered list, a whitespace-aligned table,
an image, and a two-column page under a full-width heading.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from fpdf import FPDF
from PIL import Image

HEADER: Final = "ACME Annual Report"
HEADINGS: Final = [
    (1, "Annual Report 2026"),
    (2, "1 Introduction"),
    (3, "1.1 Scope"),
    (2, "2 Results"),
    (3, "2.1 Details"),
    (2, "3 Discussion"),
]
BULLETS: Final = [
    "- First item of the list",
    "    - Nested item under the first",
    "- Second item of the list",
]
NUMBERED: Final = ["1. Alpha step", "2. Beta step"]
TABLE: Final = [("Region", "Units", "Revenue"), ("North", "120", "4.5"), ("South", "95", "3.1")]
LEFT: Final = [
    "Left column text opens the discussion",
    "and continues in this column down to",
    "the end of the left side of the page.",
]
RIGHT: Final = [
    "Right column text follows the left one",
    "and goes on in its own column until it",
    "closes the page with its last words.",
]
_LEFT_X: Final = 20
_BODY: Final = ("Times", "", 11)


def _header_footer(pdf: FPDF, page: int, pages: int) -> None:
    pdf.set_font("Helvetica", "", 9)
    pdf.set_xy(_LEFT_X, 8)
    pdf.cell(0, 5, HEADER)
    pdf.set_xy(_LEFT_X, 285)
    pdf.cell(0, 5, f"Page {page} of {pages}")


def _heading(pdf: FPDF, level: int, text: str) -> None:
    pdf.set_font("Helvetica", "B", {1: 20, 2: 16, 3: 13}[level])
    pdf.set_x(_LEFT_X)
    pdf.cell(0, 10, text, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(2)


def _lines(pdf: FPDF, lines: list[str], x: float = _LEFT_X, gap: float = 3) -> None:
    pdf.set_font(*_BODY)
    for line in lines:
        pdf.set_x(x)
        pdf.cell(0, 5.5, line, new_x="LMARGIN", new_y="NEXT")
    pdf.ln(gap)


def build(folder: Path) -> Path:
    """Writes ``report-structured.pdf`` (and the image it embeds) into ``folder``."""
    image = folder / "chart.png"
    Image.new("RGB", (40, 20), (30, 90, 200)).save(image)
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_margins(_LEFT_X, 20)
    pdf.add_page()
    _header_footer(pdf, 1, 3)
    pdf.set_y(20)
    _heading(pdf, *HEADINGS[0])
    _heading(pdf, *HEADINGS[1])
    _lines(
        pdf, ["This report describes the trans-", "formation of the company over the year.", "It is short."]
    )
    _heading(pdf, *HEADINGS[2])
    pdf.set_font(*_BODY)
    for item in BULLETS:
        indent = 8 if item.startswith(" ") else 0
        pdf.set_x(_LEFT_X + indent)
        pdf.cell(0, 5.5, item.strip(), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    _lines(pdf, NUMBERED)
    pdf.add_page()
    _header_footer(pdf, 2, 3)
    pdf.set_y(20)
    _heading(pdf, *HEADINGS[3])
    _lines(pdf, ["Sales grew in every region; the table gives the totals."])
    pdf.set_font(*_BODY)
    for row in TABLE:
        for column, cell in enumerate(row):
            pdf.set_x(_LEFT_X + 60 * column)
            pdf.cell(40, 6, cell)
        pdf.ln(6)
    pdf.ln(4)
    pdf.image(str(image), x=_LEFT_X, w=30)
    pdf.ln(4)
    _heading(pdf, *HEADINGS[4])
    _lines(pdf, ["The details follow the results and end the section."])
    pdf.add_page()
    _header_footer(pdf, 3, 3)
    pdf.set_y(20)
    _heading(pdf, *HEADINGS[5])
    top = pdf.get_y()
    _lines(pdf, LEFT, x=_LEFT_X)
    pdf.set_y(top)
    _lines(pdf, RIGHT, x=115)
    path = folder / "report-structured.pdf"
    pdf.output(str(path))
    return path


OUTLINED: Final = [(1, "Overview"), (2, "Setup"), (2, "Usage"), (1, "Summary"), (1, "Appendix")]


def build_outlined(folder: Path) -> Path:
    """``outlined.pdf``: every heading in the same bold face (one style, one level by style
    alone), and "Appendix" in the body's own face; the bookmarks give the levels."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_y(20)
    for level, title in OUTLINED:
        pdf.start_section(title, level=level - 1)
        if title == "Appendix":
            pdf.set_font(*_BODY)
        else:
            pdf.set_font("Helvetica", "B", 12)
        pdf.set_x(_LEFT_X)
        pdf.cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
        _lines(pdf, [f"Body text of the {title.lower()} section, long enough to be a paragraph."])
    path = folder / "outlined.pdf"
    pdf.output(str(path))
    return path
