"""Documents with known tables for the ``pdf_tables`` quality benchmark, and their truth.

    python -m bench.corpora.tables_corpus [DIR]      (default: bench/.corpus/tables/)

One document per table style, each page with prose above and below its table:

* ``ruled``: a full grid, a two-row header whose first cell spans both rows and whose group
  cells span two columns each;
* ``partly_ruled``: rules above and below the header and under the last row only;
* ``shaded``: every other row filled grey, no lines at all;
* ``whitespace``: columns aligned by whitespace alone, numbers right-aligned;
* ``multiline``: description cells wrapped over several lines (one ruled, one whitespace table);
* ``continued``: a ruled table too long for its page, going on (header repeated) on the next;
* ``none``: prose, bulleted and numbered lists with hanging indents, two-column text: no table.

``NAME.json`` holds ``tables``: each ``{page, rows, bbox, header_rows, continued_from}`` (``rows``
as the tool reports them: a span's text at its top-left position, the covered positions empty;
``bbox`` in points from the page's top-left). Deterministic: a fixed seed per document.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from fpdf import FPDF

DEFAULT_DIR = Path(__file__).resolve().parents[1] / ".corpus" / "tables"
MARGIN = 60.0
SIZE = 10.0
LEADING = 13.0
PAD = 6.0  # cell padding (a 12-point gap between columns, as LaTeX's default)
GAP = 24.0  # gap between whitespace columns
GREY = (225, 225, 225)
WORDS = (
    "the", "system", "reads", "each", "page", "and", "keeps", "its", "structure", "for", "later",
    "steps", "while", "agents", "ask", "short", "answers", "about", "report", "data", "model",
    "review", "team", "budget", "growth", "quarter", "region", "cost", "value", "network",
    "storage", "service", "client", "server", "request", "latency", "memory", "process", "policy",
)  # fmt: skip
ITEMS = (
    "Bolts",
    "Brackets",
    "Cables",
    "Fasteners",
    "Hinges",
    "Panels",
    "Rails",
    "Screws",
    "Valves",
    "Washers",
)
REGIONS = ("North", "South", "East", "West", "Central", "Harbour", "Valley", "Ridge", "Coast", "Plains")
STYLES = ("ruled", "partly_ruled", "shaded", "whitespace", "multiline", "continued", "none")


@dataclass
class Truth:
    page: int
    rows: list[list[str]]
    bbox: list[float]
    header_rows: int
    continued_from: int | None = None


@dataclass
class Doc:
    pdf: FPDF
    rng: random.Random
    tables: list[Truth] = field(default_factory=list)
    y: float = MARGIN

    @property
    def page(self) -> int:
        return int(self.pdf.page_no())


def words(rng: random.Random, low: int, high: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


def wrap(pdf: FPDF, text: str, width: float) -> list[str]:
    lines: list[str] = []
    for word in text.split():
        if lines and pdf.get_string_width(f"{lines[-1]} {word}") <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


def prose(doc: Doc, sentences: int = 3, x: float = MARGIN, width: float = 0.0) -> None:
    pdf = doc.pdf
    pdf.set_font("Helvetica", size=SIZE)
    text = " ".join(words(doc.rng, 8, 14).capitalize() + "." for _ in range(sentences))
    for line in wrap(pdf, text, width or pdf.w - 2 * MARGIN):
        pdf.text(x, doc.y + SIZE, line)
        doc.y += LEADING
    doc.y += LEADING


def number(rng: random.Random) -> str:
    return f"{rng.randint(1, 9999):,}.{rng.randint(0, 99):02d}"


def simple_rows(rng: random.Random, rows: int, columns: int) -> list[list[str]]:
    header = ["Item", "Region", "Units", "Price", "Total", "Share"][:columns]
    body = [
        [
            rng.choice(ITEMS),
            rng.choice(REGIONS),
            str(rng.randint(1, 900)),
            number(rng),
            number(rng),
            f"{rng.randint(1, 99)}%",
        ][:columns]
        for _ in range(rows)
    ]
    return [header, *body]


def widths(pdf: FPDF, rows: list[list[str]], pad: float) -> list[float]:
    found = [0.0] * len(rows[0])
    for row in rows:
        for column, cell in enumerate(row):
            pdf.set_font("Helvetica", "B" if row is rows[0] else "", SIZE)
            found[column] = max(found[column], pdf.get_string_width(cell) + 2 * pad)
    return found


def numeric(text: str) -> bool:
    return bool(text) and text.replace(",", "").replace(".", "").replace("%", "").isdigit()


def put(pdf: FPDF, text: str, x: float, width: float, baseline: float, bold: bool, pad: float) -> None:
    pdf.set_font("Helvetica", "B" if bold else "", SIZE)
    x = x + width - pad - pdf.get_string_width(text) if numeric(text) else x + pad
    pdf.text(x, baseline, text)


def grid_table(doc: Doc, rows: list[list[str]], style: str, continued_from: int | None = None) -> None:
    """A table of single-line cells: ``ruled`` (full grid), ``partly_ruled``, ``shaded`` or
    ``whitespace``; the first row is a bold header."""
    pdf = doc.pdf
    pad = PAD if style != "whitespace" else GAP / 2
    cols = widths(pdf, rows, pad)
    height = LEADING + 2 * (PAD if style != "whitespace" else 1.0)
    x0, top = MARGIN, doc.y
    pdf.set_line_width(0.6)
    for number, row in enumerate(rows):
        y = top + number * height
        if style == "shaded" and number % 2 == 1:
            pdf.set_fill_color(*GREY)
            pdf.rect(x0, y, sum(cols), height, style="F")
        x = x0
        for column, cell in enumerate(row):
            if style == "ruled":
                pdf.rect(x, y, cols[column], height)
            put(pdf, cell, x, cols[column], y + height / 2 + SIZE * 0.35, number == 0, pad)
            x += cols[column]
    bottom = top + len(rows) * height
    if style == "partly_ruled":
        for y in (top, top + height, bottom):
            pdf.line(x0, y, x0 + sum(cols), y)
    header = 1
    doc.tables.append(
        Truth(
            doc.page, [list(row) for row in rows], [x0, top, x0 + sum(cols), bottom], header, continued_from
        )
    )
    doc.y = bottom + 2 * LEADING


def spanned_table(doc: Doc) -> None:
    """A ruled grid with a two-row header: "Region" spans both rows, each half-year two quarters."""
    pdf, rng = doc.pdf, doc.rng
    cols = [90.0, 60.0, 60.0, 60.0, 60.0]
    height = LEADING + 2 * PAD
    x0, top = MARGIN, doc.y
    body = [
        [rng.choice(REGIONS)] + [str(rng.randint(10, 999)) for _ in range(4)]
        for _ in range(rng.randint(3, 6))
    ]
    rows = [["Region", "First half", "", "Second half", ""], ["", "Q1", "Q2", "Q3", "Q4"], *body]
    edges = [x0 + sum(cols[:i]) for i in range(len(cols) + 1)]
    pdf.set_line_width(0.6)
    pdf.rect(x0, top, cols[0], 2 * height)
    put(pdf, "Region", x0, cols[0], top + height + SIZE * 0.35, True, PAD)
    for half, label in enumerate(("First half", "Second half")):
        left = edges[1 + 2 * half]
        pdf.rect(left, top, cols[1] * 2, height)
        put(pdf, label, left, cols[1] * 2, top + height / 2 + SIZE * 0.35, True, PAD)
    for column in range(1, 5):
        pdf.rect(edges[column], top + height, cols[column], height)
        put(pdf, f"Q{column}", edges[column], cols[column], top + 1.5 * height + SIZE * 0.35, True, PAD)
    for number, row in enumerate(body):
        y = top + (number + 2) * height
        for column, cell in enumerate(row):
            pdf.rect(edges[column], y, cols[column], height)
            put(pdf, cell, edges[column], cols[column], y + height / 2 + SIZE * 0.35, False, PAD)
    bottom = top + len(rows) * height
    doc.tables.append(Truth(doc.page, rows, [x0, top, edges[-1], bottom], 2))
    doc.y = bottom + 2 * LEADING


def multiline_table(doc: Doc, ruled: bool) -> None:
    """Item, a wrapped description, a price: the description runs over two to four lines."""
    pdf, rng = doc.pdf, doc.rng
    cols = [80.0, 200.0, 70.0] if ruled else [80.0 - PAD, 200.0, 70.0]
    pad = PAD if ruled else 0.0
    gap = 0.0 if ruled else GAP
    x0, top = MARGIN, doc.y
    rows = [["Item", "Description", "Price"]]
    y = top
    pdf.set_line_width(0.6)
    for number in range(rng.randint(3, 5) + 1):
        if number == 0:
            cells = [["Item"], ["Description"], ["Price"]]
        else:
            text = words(rng, 8, 20)
            pdf.set_font("Helvetica", size=SIZE)
            cells = [[rng.choice(ITEMS)], wrap(pdf, text, cols[1] - 2 * pad), [number_text := number_of(rng)]]
            rows.append([cells[0][0], " ".join(cells[1]), number_text])
        lines = max(len(c) for c in cells)
        height = lines * LEADING + 2 * (pad or 2.0)
        x = x0
        for column, cell_lines in enumerate(cells):
            if ruled:
                pdf.rect(x, y, cols[column], height)
            for line_number, line in enumerate(cell_lines):
                put(
                    pdf,
                    line,
                    x,
                    cols[column],
                    y + (pad or 2.0) + (line_number + 0.75) * LEADING,
                    number == 0,
                    pad,
                )
            x += cols[column] + gap
        y += height
    width = sum(cols) + 2 * gap
    doc.tables.append(Truth(doc.page, rows, [x0, top, x0 + width, y], 1))
    doc.y = y + 2 * LEADING


def number_of(rng: random.Random) -> str:
    return number(rng)


def lists_and_columns(doc: Doc) -> None:
    """Bulleted and numbered lists with hanging indents, then two columns of prose."""
    pdf, rng = doc.pdf, doc.rng
    pdf.set_font("Helvetica", size=SIZE)
    for marker in ("-", "1.", "2.", "3.", "*", "-"):
        pdf.text(MARGIN, doc.y + SIZE, marker)
        for line in wrap(pdf, words(rng, 10, 24), pdf.w - 2 * MARGIN - 18):
            pdf.text(MARGIN + 18, doc.y + SIZE, line)
            doc.y += LEADING
        doc.y += 3
    doc.y += LEADING
    column = (pdf.w - 2 * MARGIN - 24) / 2
    start = doc.y
    for side in range(2):
        doc.y = start
        for _ in range(3):
            prose(doc, 3, MARGIN + side * (column + 24), column)


def make(style: str, seed: int) -> tuple[bytes, list[Truth]]:
    """One document of the style and its truth."""
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    doc = Doc(pdf, random.Random(seed))
    rng = doc.rng
    prose(doc)
    if style in ("partly_ruled", "shaded", "whitespace"):
        grid_table(doc, simple_rows(rng, rng.randint(4, 10), rng.randint(3, 6)), style)
    elif style == "ruled":
        grid_table(doc, simple_rows(rng, rng.randint(3, 8), rng.randint(3, 6)), "ruled")
        spanned_table(doc)
    elif style == "multiline":
        multiline_table(doc, True)
        new_page(doc)
        multiline_table(doc, False)
    elif style == "continued":
        continued(doc)
    else:
        lists_and_columns(doc)
    prose(doc, 2)
    return bytes(pdf.output()), doc.tables


def new_page(doc: Doc) -> None:
    doc.pdf.add_page()
    doc.y = MARGIN
    prose(doc, 1)


def continued(doc: Doc) -> None:
    """A ruled table that fills the rest of its page and goes on, header repeated, on the next."""
    rng, pdf = doc.rng, doc.pdf
    columns = rng.randint(3, 5)
    rows = simple_rows(rng, 60, columns)
    height = LEADING + 2 * PAD
    fits = int((pdf.h - MARGIN - doc.y) // height)
    grid_table(doc, rows[:fits], "ruled")
    pdf.add_page()
    doc.y = MARGIN
    grid_table(doc, [rows[0], *rows[fits : fits + rng.randint(3, 8)]], "ruled", continued_from=doc.page - 1)


def build(folder: Path = DEFAULT_DIR, per_style: int = 3) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for number, style in enumerate(STYLES):
        for copy in range(per_style):
            data, tables = make(style, 1000 * number + copy)
            path = folder / f"{style}-{copy}.pdf"
            path.write_bytes(data)
            path.with_suffix(".json").write_text(
                json.dumps({"style": style, "tables": [t.__dict__ for t in tables]})
            )
            written.append(path)
    return written


if __name__ == "__main__":
    for path in build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR):
        sys.stderr.write(f"{path}\n")
