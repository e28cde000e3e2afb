"""Pages that stand for the real ones the table finder met on ICDAR 2013 and on papers, each
built with fpdf2 (and pikepdf for ``/Rotate``) so it can be committed: tables the finder has
to read whole, and pages of text set in columns that are no table.

Each builder returns the PDF's bytes; the tables' cells are in the constants beside them.
"""

from __future__ import annotations

import io

import pikepdf
from fpdf import FPDF

SIZE = 8.0
PITCH = 11.0  # points from one text row's baseline to the next
YEARS = ("2003", "2004", "2005", "2006", "2007", "2008", "2009", "2010", "2011", "2012")
STATES = ("Connecticut", "Maine", "Massachusetts", "New Hampshire", "New Jersey", "New York", "Vermont")
WORDS = [
    "the",
    "system",
    "reads",
    "each",
    "page",
    "and",
    "keeps",
    "its",
    "structure",
    "for",
    "later",
    "steps",
    "while",
    "agents",
    "ask",
    "short",
    "answers",
    "about",
    "report",
    "data",
    "model",
    "review",
    "team",
    "budget",
    "growth",
    "quarter",
    "region",
    "cost",
    "value",
    "network",
    "storage",
    "service",
    "client",
    "server",
    "request",
    "latency",
    "memory",
    "process",
    "policy",
]


def _figure(row: int, column: int) -> str:
    return f"{(row * 7919 + column * 104729) % 90000 + 10000:,}"


def _pdf(landscape: bool = False) -> FPDF:
    pdf = FPDF(orientation="L" if landscape else "P", unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", size=SIZE)
    return pdf


def _right(pdf: FPDF, x1: float, y: float, text: str) -> None:
    """Text ending at ``x1`` on the baseline ``y``."""
    pdf.text(x1 - pdf.get_string_width(text), y, text)


def _prose(pdf: FPDF, x: float, y: float, width: float, words: int, seed: int) -> float:
    """A justified paragraph of ``words`` words; the y under it."""
    text = " ".join(WORDS[(seed + i * 7) % len(WORDS)] for i in range(words))
    pdf.set_xy(x, y)
    pdf.multi_cell(width, PITCH, text.capitalize() + ".", align="J")
    return pdf.get_y()


def _bytes(pdf: FPDF) -> bytes:
    return bytes(pdf.output())


# -- tables ----------------------------------------------------------------------------------------

WIDE_HEADER = ["State", *YEARS]


def wide_booktabs_pdf() -> bytes:
    """A table across a whole page, ruled only above and under its header and at its foot (as
    LaTeX's booktabs draws): a spanning header over two groups of years, figures right-aligned,
    a bold total row set tighter than a space of an em, a caption above and a note under it.
    Whitespace parts its columns down the whole table, so a reading order would cut it into
    column strips."""
    pdf = _pdf()
    pdf.text(40, 60, "Table 3. Enrollment by state and year (in thousands)")
    pdf.line(40, 68, 555, 68)
    pdf.text(200, 80, "Actual")
    pdf.text(440, 80, "Projected")
    columns = [118 + 44 * i for i in range(10)]
    y = 94.0
    pdf.text(40, y, "State")
    for x, year in zip(columns, YEARS, strict=True):
        _right(pdf, x + 30, y, year)
    pdf.line(40, y + 4, 555, y + 4)
    for row, state in enumerate(STATES):
        y += PITCH
        pdf.text(40, y, state)
        for column, x in enumerate(columns):
            _right(pdf, x + 30, y, _figure(row, column))
    y += PITCH
    pdf.set_font("Helvetica", "B", SIZE)
    pdf.text(40, y, "Total")
    for column, x in enumerate(columns):
        _right(pdf, x + 30, y, f"{column + 11},{100 + column:03d},{200 + column:03d}")
    pdf.set_font("Helvetica", size=SIZE)
    pdf.line(40, y + 4, 555, y + 4)
    pdf.text(40, y + 16, "NOTE: Figures are rounded; some states are left out of this table.")
    _prose(pdf, 40, y + 30, 515, 60, 3)
    return _bytes(pdf)


def wide_booktabs_rows() -> list[list[str]]:
    rows = [["", "", "", "Actual", "", "", "", "", "", "Projected", ""], WIDE_HEADER]
    rows += [[state, *(_figure(row, column) for column in range(10))] for row, state in enumerate(STATES)]
    rows.append(["Total", *(f"{column + 11},{100 + column:03d},{200 + column:03d}" for column in range(10))])
    return rows


HEADER_RULED = [["Country", "Domestic (%)", "Imported (%)", "Total (n)"]] + [
    [name, f"{10 + i * 7 % 80}.{i}", f"{i * 3 % 20}.{9 - i}", f"{1000 + i * 331:,}"]
    for i, name in enumerate(("Austria", "Belgium", "Bulgaria", "Cyprus", "Czech Republic", "Denmark"))
]


def header_ruled_pdf() -> bytes:
    """Vertical rules between the header's cells only, a rule under every row, none between the
    body's columns: a grid of one cell a row below the header, its columns drawn by whitespace."""
    pdf = _pdf()
    x0, widths = 80.0, (110.0, 90.0, 90.0, 90.0)
    edges = [x0]
    for width in widths:
        edges.append(edges[-1] + width)
    top = 100.0
    pdf.line(edges[0], top, edges[-1], top)
    pdf.line(edges[0], top + 18, edges[-1], top + 18)
    for x in edges:
        pdf.line(x, top, x, top + 18)
    pdf.line(edges[0], top + 18, edges[0], top + 18 + 14 * (len(HEADER_RULED) - 1))
    pdf.line(edges[-1], top + 18, edges[-1], top + 18 + 14 * (len(HEADER_RULED) - 1))
    y = top + 12
    for row in HEADER_RULED:
        for index, cell in enumerate(row):
            if index == 0:
                pdf.text(edges[0] + 4, y, cell)
            else:
                _right(pdf, edges[index + 1] - 20, y, cell)
        y += 14
        pdf.line(edges[0], y - 10, edges[-1], y - 10)
    return _bytes(pdf)


DENSE = [
    ["Category", "Number", "Percent", "Error"],
    ["All ages", "291,099", "100.0", "0.3"],
    ["With a disability", "54,425", "18.7", "0.3"],
    ["Severe disability", "34,947", "12.0", "0.2"],
    ["Aged 15 and older", "230,391", "100.0", "0.1"],
    ["With a disability", "49,069", "21.3", "0.3"],
    ["Severe disability", "32,771", "14.2", "0.2"],
]


def dense_band_pdf() -> bytes:
    """A ruled grid whose header is ruled cell by cell and whose body is one band the rules do
    not part: its rows are the lines of text in it, one a row in every column."""
    pdf = _pdf()
    edges = [60.0, 180.0, 260.0, 330.0, 400.0]
    top, head, bottom = 100.0, 118.0, 118.0 + 12 * (len(DENSE) - 1) + 6
    for y in (top, head, bottom):
        pdf.line(edges[0], y, edges[-1], y)
    for x in edges:
        pdf.line(x, top, x, bottom)
    for index, cell in enumerate(DENSE[0]):
        pdf.text(edges[index] + 4, top + 12, cell)
    y = head + 10
    for row in DENSE[1:]:
        pdf.text(edges[0] + 4, y, row[0])
        for index, cell in enumerate(row[1:], 1):
            _right(pdf, edges[index + 1] - 6, y, cell)
        y += 12
    return _bytes(pdf)


SPLIT = [
    ["Age", "Male", "Female", "Total"],
    ["2-11 months", "1,087,948", "1,022,490", "2,110,438"],
    ["1-2", "2,586,688", "2,568,738", "5,155,426"],
    ["3-5", "3,867,692", "3,576,723", "7,444,415"],
]


def unruled_pair_pdf() -> bytes:
    """A fully ruled grid but for the rule between two columns of figures: the whitespace
    between them parts them on every row."""
    pdf = _pdf()
    edges = [60.0, 140.0, 300.0, 380.0]  # no rule between Male and Female
    rows_y = [100.0 + 16 * i for i in range(len(SPLIT) + 1)]
    for y in rows_y:
        pdf.line(edges[0], y, edges[-1], y)
    for x in edges:
        pdf.line(x, rows_y[0], x, rows_y[-1])
    for number, row in enumerate(SPLIT):
        y = rows_y[number] + 11
        pdf.text(edges[0] + 4, y, row[0])
        _right(pdf, 210, y, row[1])
        _right(pdf, 290, y, row[2])
        _right(pdf, edges[3] - 4, y, row[3])
    return _bytes(pdf)


ROTATED = [["Topic", "Enquiries"], ["EU institutions", "3,597"], ["Employment", "1,783"]]
ROTATED += [["Air passengers rights", "1,726"], ["Consumer affairs", "1,241"], ["Total", "8,347"]]


def rotated_pdf() -> bytes:
    """A landscape table on a portrait page turned by ``/Rotate 90`` (its text set at 270
    degrees in the page's own space, upright as the page is shown)."""
    pdf = _pdf(landscape=True)
    pdf.text(60, 50, "Enquiries by topic")
    x0, x1, x2 = 60.0, 260.0, 330.0
    y = 80.0
    pdf.set_fill_color(200, 200, 200)
    pdf.rect(x0, y - 10, x2 - x0, 14, style="F")
    for number, (topic, count) in enumerate(ROTATED):
        pdf.text(x0 + 4, y, topic)
        _right(pdf, x2 - 6, y, count)
        pdf.line(x0, y + 4, x2, y + 4)
        if number == 0:
            pdf.line(x1, y - 10, x1, y + 4 + 16 * (len(ROTATED) - 1))
        y += 16
    return _turned(_bytes(pdf))


def _turned(landscape: bytes) -> bytes:
    """The landscape page's content drawn on a portrait page that ``/Rotate 90`` shows as it was."""
    with pikepdf.open(io.BytesIO(landscape)) as pdf:
        page = pdf.pages[0]
        width, height = (float(v) for v in page.mediabox[2:])
        page.contents_coalesce()
        inner = page.obj.Contents.read_bytes()
        turn = f"q 0 1 -1 0 {height:g} 0 cm\n".encode()
        page.obj.Contents = pdf.make_stream(turn + inner + b"\nQ")
        page.mediabox = [0, 0, height, width]
        page.obj.Rotate = 90
        out = io.BytesIO()
        pdf.save(out)
        return out.getvalue()


STACKED = [["Solver", "Tile", "Bandwidth", "Speedup"], ["Ivy Bridge", "", "", ""]]
STACKED += [["MKL", "Any", "22.49", "1.0"], ["SSTA ijk", "256 KB", "44.00", "2.0"], ["Haswell", "", "", ""]]
STACKED += [["MKL", "Any", "31.65", "1.0"], ["SSTA ijk", "128 KB", "54.30", "1.7"]]


def stacked_pdf() -> bytes:
    """A ruled table whose groups' titles run across it with no rule down its sides: one grid a
    group, one under the other, the same columns."""
    pdf = _pdf()
    edges = [100.0, 180.0, 250.0, 330.0, 400.0]

    def grid(top: float, rows: list[list[str]]) -> float:
        for number, row in enumerate(rows):
            y = top + 14 * number
            pdf.line(edges[0], y, edges[-1], y)
            for x in edges:
                pdf.line(x, y, x, y + 14)
            for index, cell in enumerate(row):
                pdf.text(edges[index] + 4, y + 10, cell)
        bottom = top + 14 * len(rows)
        pdf.line(edges[0], bottom, edges[-1], bottom)
        return bottom

    y = grid(100, STACKED[:1])
    for title, group in ((STACKED[1][0], STACKED[2:4]), (STACKED[4][0], STACKED[5:7])):
        pdf.text(220, y + 11, title)
        y = grid(y + 16, group)
    return _bytes(pdf)


BESIDE = [["Feature", "FastSocket", "LibVMA", "SocksDirect"], ["Category", "Kernel", "User", "User"]]
BESIDE += [
    ["Transparent to applications", "yes", "yes", "yes"],
    ["Intra-host communication", "no", "yes", "yes"],
]
BESIDE += [["Multiple applications", "yes", "no", "yes"]]


def beside_pdf() -> bytes:
    """A grid ruled round its figures only, the row labels beside it, level with its rows."""
    pdf = _pdf()
    edges = [200.0, 260.0, 320.0, 380.0]
    for number, row in enumerate(BESIDE):
        y = 100 + 14 * number
        pdf.line(edges[0], y, edges[-1], y)
        for x in edges:
            pdf.line(x, y, x, y + 14)
        pdf.text(60, y + 10, row[0])
        for index, cell in enumerate(row[1:]):
            pdf.text(edges[index] + 4, y + 10, cell)
    pdf.line(edges[0], 100 + 14 * len(BESIDE), edges[-1], 100 + 14 * len(BESIDE))
    return _bytes(pdf)


BESIDE_PROSE = [["PubChem ID", "Hours", "Speedup"]] + [
    [f"{5957 + i * 4441}", f"{4.1 + i * 3.7:.1f}", f"{51.3 - i * 2.9:.1f}"] for i in range(8)
]


def beside_prose_pdf() -> bytes:
    """A two-column page: a table in the left column, level with the right column's prose."""
    pdf = _pdf()
    y = 100.0
    for number, row in enumerate(BESIDE_PROSE):
        pdf.text(50, y + PITCH * number, row[0])
        _right(pdf, 190, y + PITCH * number, row[1])
        _right(pdf, 260, y + PITCH * number, row[2])
    pdf.line(50, y - 9, 270, y - 9)
    pdf.line(50, y + 2, 270, y + 2)
    pdf.line(50, y + PITCH * (len(BESIDE_PROSE) - 1) + 3, 270, y + PITCH * (len(BESIDE_PROSE) - 1) + 3)
    _prose(pdf, 310, y - 8, 240, 170, 5)
    return _bytes(pdf)


# -- no tables -------------------------------------------------------------------------------------


def two_columns_pdf() -> bytes:
    """Two columns of justified prose, narrow enough for wide spaces, then two columns of
    references with their labels hanging."""
    pdf = _pdf()
    left = _prose(pdf, 40, 60, 245, 140, 1)
    right = _prose(pdf, 310, 60, 245, 140, 2)
    y = max(left, right) + 12
    for column, x in enumerate((40.0, 310.0)):
        at = y
        for number in range(6):
            label = f"[{column * 6 + number + 1}]"
            pdf.text(x, at + 8, label)
            at = _prose(pdf, x + 22, at, 223, 18, number + column)
    return _bytes(pdf)


def equations_pdf() -> bytes:
    """Display equations, each numbered at the right margin."""
    pdf = _pdf()
    for number in range(5):
        y = 100 + 20 * number
        pdf.text(150, y, f"q{number}(X) = phi(X) - v{number}")
        pdf.text(300, y, f"= (X - w{number}) L{number}(X) + d")
        pdf.text(520, y, f"({number + 7})")
    return _bytes(pdf)


def authors_pdf() -> bytes:
    """A paper's authors side by side: names, e-mail addresses, departments."""
    pdf = _pdf()
    people = (("Michael Zhang", "lebo"), ("Chandra Krintz", "ckrintz"), ("Rich Wolski", "rich"))
    for column, (name, user) in enumerate(people):
        x = 90 + 160 * column
        for row, text in enumerate(
            (name, f"{user}@cs.ucsb.edu", "Dept. Computer Science", "University of California")
        ):
            pdf.text(x, 100 + 12 * row, text)
    return _bytes(pdf)


def form_pdf() -> bytes:
    """A ruled form: numbered lines, fields' labels ending in a colon, boxes to fill in."""
    pdf = _pdf()
    labels = (
        ("A) gross pay", "name:"),
        ("", "address:"),
        ("B) deductions", "telephone:"),
        ("1. social security contributions", ""),
        ("2. other deductions", "file number:"),
        ("C) exemptions", "signature:"),
    )
    edges = [40.0, 60.0, 260.0, 330.0, 540.0]
    for number, (left, right) in enumerate(labels):
        y = 100 + 18 * number
        pdf.line(edges[0], y, edges[-1], y)
        for x in edges:
            pdf.line(x, y, x, y + 18)
        pdf.text(edges[0] + 3, y + 12, str(number + 1))
        pdf.text(edges[1] + 3, y + 12, left)
        pdf.text(edges[3] + 3, y + 12, right)
    pdf.line(edges[0], 100 + 18 * len(labels), edges[-1], 100 + 18 * len(labels))
    return _bytes(pdf)


def diagram_pdf() -> bytes:
    """A drawing inside a frame: labelled boxes in its corners, lines between them; the boxes'
    edges meet the frame's, so the rules make cells, but they cover little of the frame."""
    pdf = _pdf()
    pdf.rect(60, 90, 240, 160)
    boxes = ((60, 90, "Application"), (220, 90, "Monitor"), (60, 210, "libsd"), (220, 210, "libsd"))
    for x, y, label in boxes:
        pdf.rect(x, y, 80, 40)
        pdf.text(x + 8, y + 24, label)
    pdf.line(140, 110, 220, 110)
    pdf.line(100, 130, 100, 210)
    pdf.line(260, 130, 260, 210)
    pdf.text(150, 170, "shm queue")
    return _bytes(pdf)
