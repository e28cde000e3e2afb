"""Tables on a page: ruled grids from its rules, the others from the alignment of its text.

Input: a page's text lines (``layoutlines``, cut at vertical rules) and its rules and fills
(``graphics``), both from an untrusted document. Two finders run in turn:

* **Ruled grids.** The rules become edges and pdfplumber's table geometry (MIT; ``merge_edges``,
  ``edges_to_intersections``, ``intersections_to_cells``, ``cells_to_tables``) turns them into
  cells; the cells' edges give the grid's columns and rows, so a cell over several of them is a
  span. Each line goes to the cell that holds its centre.
* **Tables without a full grid** (rules only around the header, shaded rows, whitespace alone).
  Within each column of the page's reading order (two-column prose is split first, so its
  columns are not a table), consecutive rows of cells parted by wide gaps make a candidate; the
  columns are the x-ranges the body's cells cover. A row's text goes to the columns it overlaps
  (over several: a span). A table's logical rows are the bands its rules or shading draw when
  they part most text rows; otherwise a line with nothing in the first column and no wider gap
  above it goes on the cells of the row above (a multi-line cell).

Phantoms are refused: fewer than two columns, fewer than three rows without any rule or shading
to confirm them, a first column of list markers (a list with a hanging indent), cells as long
as prose, or cells that are mostly sentences (short lines of two columns side by side). The work
is bounded by the graphics cap (``graphics.MAX_GRAPHIC_OBJECTS``) and ``MAX_EDGE_PAIRS``.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Final

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.graphics import PageGraphics, page_graphics
from pdf_airlock.worker.pdf.headings import numbering
from pdf_airlock.worker.pdf.layoutlines import PageLines, TextLine, VerticalRules, pdfium_page_lines
from pdf_airlock.worker.pdf.readingorder import reading_order
from pdf_airlock.worker.pdf.structure import Row, join_line, rows_of, shown
from pdf_airlock.worker.pdf.visibility import DocumentFacts

__all__ = ["MAX_EDGE_PAIRS", "Table", "find_tables", "read_page"]

MAX_EDGE_PAIRS: Final = 2_000_000  # horizontal x vertical edges compared for intersections
MAX_COLUMNS: Final = 64
MAX_ROWS: Final = 5000
_SNAP: Final = 3.0  # pdfplumber's default snap, join and intersection tolerances (points)
_MIN_EDGE: Final = 3.0
_GRID_CLUSTER: Final = 1.5  # cell edges this close are one grid line
_CELL_GAP_EMS: Final = 1.0  # cells of a row are at least this many font sizes apart (as lines are cut)
_ROW_GAP_LINES: Final = 2.5  # a vertical gap over this many line heights ends a table
_CONTINUATION_GAP: Final = 1.5  # a line continues the row above if its gap is under this x median
_NARROW: Final = 0.45  # a line this share of its column's width or wider is prose, not a cell
_MIN_TEXT_ROWS: Final = 3  # rows a table needs when no rule or shading confirms it
_MAX_WORDS_PER_CELL: Final = 12.0  # more, on average, and the "cells" are prose
_MARKER_SHARE: Final = 0.6
_MIN_FILLED: Final = 0.6  # a table has at least this share of its cells filled
_FULL: Final = 0.85  # a line this share of its column's width fills it
_PROSE_WORDS: Final = 4
_PROSE_SHARE: Final = 0.5
_PROSE_CHARS: Final = 30
_WIDE_COLUMNS: Final = 8  # this many columns over ``_FEW_ROWS`` rows: scattered words, not a table
_FEW_ROWS: Final = 3
_NUMBERED_SHARE: Final = 0.8
_DIGIT_SHARE: Final = 0.6
_NUMBERED_MAX_COLUMNS: Final = 3
_NUMBERED_TEXT_WORDS: Final = 3.0
_GARBLED_SHARE: Final = 0.3
_DRAWING_MARKS: Final = 2  # curves or slanted lines among a table's cells: a figure
_RULED_MIN_FILLED: Final = 0.1
_UNMAPPED: Final = re.compile(r"[\x00-\x08\x0b-\x1f\ufffd]")
_NUMBER_AND_TITLE: Final = 2  # a section number and its title, a wide space apart
_CAPTION: Final = re.compile(r"^(table|tab\.|figure|fig\.)\s*[\dIVXLC]+\b", re.IGNORECASE)
_SENTENCE_WORDS: Final = 3
_SENTENCE_SHARE: Final = 0.5  # this share of cells reading as sentences: prose, not a table
_SENTENCE_END: Final = re.compile(r"[.!?]\W*$")
_SPAN_SHARE: Final = 0.5  # a rule or fill over this share of a table's width parts its rows
_MARKER: Final = re.compile(
    r"^([\u2022\u25e6\u25aa\u25cf\u25cb\u25a0\u25a1\u2013\u2014*\u00b7-]|\(?\d{1,3}[.)]|\(?[a-z][.)]"
    r"|\(?[ivx]{1,5}[.)]|\[\d{1,3}\])$"
)


@dataclass(slots=True)
class Table:
    """A table: its box (points from the top-left), rows of cell text (a span's text at its
    top-left position), spans ``(row, column, rows, columns)``, header rows, and the indices of
    the page's lines it holds."""

    x0: float
    top: float
    x1: float
    bottom: float
    rows: list[list[str]]
    spans: list[tuple[int, int, int, int]] = field(default_factory=list)
    header_rows: int = 0
    lines: set[int] = field(default_factory=set)

    @property
    def columns(self) -> int:
        return len(self.rows[0]) if self.rows else 0


# -- ruled grids ---------------------------------------------------------------------------------


def _edges(graphics: PageGraphics) -> list[dict[str, Any]]:
    edges = []
    for rule in graphics.rules:
        if rule.horizontal:
            y = (rule.top + rule.bottom) / 2
            edges.append(_edge(rule.x0, y, rule.x1, y, "h"))
        else:
            x = (rule.x0 + rule.x1) / 2
            edges.append(_edge(x, rule.top, x, rule.bottom, "v"))
    return edges


def _edge(x0: float, top: float, x1: float, bottom: float, orientation: str) -> dict[str, Any]:
    return {
        "x0": x0,
        "x1": x1,
        "top": top,
        "bottom": bottom,
        "doctop": top,
        "width": x1 - x0,
        "height": bottom - top,
        "orientation": orientation,
    }


def _grid_cells(graphics: PageGraphics) -> list[list[tuple[float, float, float, float]]]:
    from pdfplumber.table import cells_to_tables, edges_to_intersections, intersections_to_cells, merge_edges

    edges = _edges(graphics)
    if not edges:
        return []
    merged = merge_edges(edges, _SNAP, _SNAP, _SNAP, _SNAP)
    merged = [edge for edge in merged if max(edge["width"], edge["height"]) >= _MIN_EDGE]
    across = sum(1 for edge in merged if edge["orientation"] == "h")
    if across * (len(merged) - across) > MAX_EDGE_PAIRS:
        raise WorkerError(
            "complexity_limit",
            f"a page has too many rules for the table finder ({len(merged)})",
            {"limit": MAX_EDGE_PAIRS},
        )
    cells = intersections_to_cells(edges_to_intersections(merged, _SNAP, _SNAP))
    return [[tuple(cell) for cell in table] for table in cells_to_tables(cells)]  # type: ignore[misc]


def _positions(values: list[float]) -> list[float]:
    """Grid lines: the values, those within ``_GRID_CLUSTER`` of each other made one."""
    found: list[float] = []
    for value in sorted(values):
        if not found or value - found[-1] > _GRID_CLUSTER:
            found.append(value)
    return found


def _index(positions: list[float], value: float) -> int:
    return min(range(len(positions)), key=lambda i: abs(positions[i] - value))


def _ruled_table(
    cells: list[tuple[float, float, float, float]], page: PageLines, free: set[int]
) -> Table | None:
    xs = _positions([x for cell in cells for x in (cell[0], cell[2])])
    ys = _positions([y for cell in cells for y in (cell[1], cell[3])])
    columns, rows = len(xs) - 1, len(ys) - 1
    if not 2 <= columns <= MAX_COLUMNS or not 2 <= rows <= MAX_ROWS:
        return None
    table = Table(xs[0], ys[0], xs[-1], ys[-1], [[""] * columns for _ in range(rows)])
    placed: dict[tuple[int, int], list[int]] = {}
    boxes = []
    for x0, top, x1, bottom in cells:
        col, row = _index(xs, x0), _index(ys, top)
        cols, spanned = _index(xs, x1) - col, _index(ys, bottom) - row
        if cols < 1 or spanned < 1:
            continue
        boxes.append((x0, top, x1, bottom, row, col))
        if cols > 1 or spanned > 1:
            table.spans.append((row, col, spanned, cols))
    for index in sorted(free):
        line = page.lines[index]
        cx, cy = (line.x0 + line.x1) / 2, (line.top + line.bottom) / 2
        for x0, top, x1, bottom, row, col in boxes:
            if x0 <= cx <= x1 and top <= cy <= bottom:
                placed.setdefault((row, col), []).append(index)
                table.lines.add(index)
                break
    for (row, col), indices in placed.items():
        table.rows[row][col] = _cell_text([page.lines[i] for i in indices])
    filled = [cell for row in table.rows for cell in row if cell]
    if len(filled) < max(2, _RULED_MIN_FILLED * rows * columns) or _garbled(filled):
        return None
    by_row = [
        [page.lines[i] for (row, _), indices in placed.items() if row == number for i in indices]
        for number in range(rows)
    ]
    table.header_rows = _bold_rows(by_row)
    return table


def _cell_text(lines: list[TextLine]) -> str:
    parts: list[str] = []
    for line in sorted(lines, key=lambda line: (round(line.top), line.x0)):
        join_line(parts, line.text)
    return shown("".join(parts))


def _bold_rows(rows: list[list[TextLine]]) -> int:
    """How many rows at the top are all bold while the rest are not: the header."""
    bold = [bool(row) and all(line.bold for line in row) for row in rows]
    count = bold.index(False) if False in bold else 0
    return count if count < len(rows) else 0


# -- tables drawn by alignment -------------------------------------------------------------------


def _separated(row: Row) -> bool:
    """Two or more cells, each a wide gap from the next."""
    if len(row.cells) < 2:
        return False
    em = max(row.first.size, 1.0)
    return all(b.x0 - a.x1 >= _CELL_GAP_EMS * em for a, b in zip(row.cells, row.cells[1:], strict=False))


def _candidates(rows: list[Row], width: float) -> list[list[Row]]:
    """Runs of rows that may be tables: rows of separated cells, with the narrow lines between
    and after them that may be the rest of a multi-line cell."""
    found: list[list[Row]] = []
    current: list[Row] = []
    for row in rows:
        if current:
            last = current[-1]
            near = row.top - last.bottom <= _ROW_GAP_LINES * max(last.first.height, 1.0)
            narrow = all(cell.x1 - cell.x0 < _NARROW * width for cell in row.cells)
            if near and (_separated(row) or narrow):
                current.append(row)
                continue
            found.append(current)
            current = []
        if _separated(row):
            current = [row]
    if current:
        found.append(current)
    return [run for run in found if sum(1 for row in run if _separated(row)) >= 2]


def _column_ranges(rows: list[Row]) -> list[tuple[float, float]]:
    """The x-ranges the body's cells cover (the first row left out when it may be a spanning
    header over a longer body)."""
    separated = [row for row in rows if _separated(row)]
    body = separated[1:] if len(separated) >= _MIN_TEXT_ROWS else separated
    spans = sorted((cell.x0, cell.x1) for row in body for cell in row.cells)
    ranges: list[tuple[float, float]] = []
    for x0, x1 in spans:
        if ranges and x0 <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(ranges[-1][1], x1))
        else:
            ranges.append((x0, x1))
    return ranges


def _columns_of(cell: TextLine, ranges: list[tuple[float, float]]) -> tuple[int, int]:
    """The first column a cell falls in and how many it covers."""
    hit = [i for i, (x0, x1) in enumerate(ranges) if min(x1, cell.x1) - max(x0, cell.x0) > 0]
    if not hit:
        middle = (cell.x0 + cell.x1) / 2
        nearest = min(range(len(ranges)), key=lambda i: abs((ranges[i][0] + ranges[i][1]) / 2 - middle))
        return nearest, 1
    return hit[0], hit[-1] - hit[0] + 1


def _separators(graphics: PageGraphics, x0: float, x1: float, top: float, bottom: float) -> list[float]:
    """The y of rules and shading edges across most of the table's width, within its height."""
    width = max(x1 - x0, 1.0)
    found: list[float] = []
    for rule in graphics.rules:
        if rule.horizontal and min(rule.x1, x1) - max(rule.x0, x0) >= _SPAN_SHARE * width:
            found.append((rule.top + rule.bottom) / 2)
    for fill in graphics.fills:
        if min(fill.x1, x1) - max(fill.x0, x0) >= _SPAN_SHARE * width:
            found += [fill.top, fill.bottom]
    return _positions([y for y in found if top - _SNAP <= y <= bottom + _SNAP])


def _band(separators: list[float], y: float) -> int:
    return sum(1 for s in separators if s < y)


def _logical_rows(
    rows: list[Row], ranges: list[tuple[float, float]], separators: list[float]
) -> list[list[Row]]:
    """Text rows grouped into the table's rows: by the bands rules or shading draw when they part
    most text rows (a row with a cell in the first column starts a row within a band too), else a
    row with nothing in the first column and no wider gap above it joins
    the row above."""
    bands = [_band(separators, (row.top + row.bottom) / 2) for row in rows]
    if len(set(bands)) >= max(2, len(rows) * 0.5):
        grouped: list[list[Row]] = []
        for row, band in zip(rows, bands, strict=True):
            first_column = any(_columns_of(cell, ranges)[0] == 0 for cell in row.cells)
            same = grouped and _band(separators, (grouped[-1][0].top + grouped[-1][0].bottom) / 2) == band
            if same and not first_column:
                grouped[-1].append(row)
            else:  # a new band, or a new first cell within one (rules only under the header)
                grouped.append([row])
        return grouped
    gaps = sorted(b.top - a.bottom for a, b in itertools.pairwise(rows))
    typical = gaps[len(gaps) // 2] if gaps else 0.0
    grouped = []
    for row in rows:
        first_column = any(_columns_of(cell, ranges)[0] == 0 for cell in row.cells)
        gap = row.top - grouped[-1][-1].bottom if grouped else 0.0
        if grouped and not first_column and gap <= max(typical, 0.0) * _CONTINUATION_GAP + 0.5:
            grouped[-1].append(row)
        else:
            grouped.append([row])
    return grouped


def _text_table(
    run: list[Row], page: PageLines, graphics: PageGraphics, index_of: dict[int, int]
) -> Table | None:
    while run and _titles(run[0]):
        run = run[1:]  # a caption or a section's title over the table is not in it
    while run and _titles(run[-1]):
        run = run[:-1]  # nor a caption under it
    ranges = _column_ranges(run)
    while run and not _separated(run[-1]) and _starts_first_column(run[-1], ranges):
        run = run[:-1]  # a line after the table that starts at its left edge is not in it
        ranges = _column_ranges(run)
    if not 2 <= len(ranges) <= MAX_COLUMNS or len(run) > MAX_ROWS:
        return None
    lines = [cell for row in run for cell in row.cells]
    x0, x1 = min(line.x0 for line in lines), max(line.x1 for line in lines)
    top, bottom = min(line.top for line in lines), max(line.bottom for line in lines)
    separators = _separators(graphics, x0, x1, top, bottom)
    groups = _logical_rows(run, ranges, separators)
    if len(groups) < (2 if separators else _MIN_TEXT_ROWS):
        return None
    table = Table(x0, top, x1, bottom, [[""] * len(ranges) for _ in groups])
    for number, group in enumerate(groups):
        parts: dict[int, list[TextLine]] = {}
        for row in group:
            for cell in row.cells:
                column, width = _columns_of(cell, ranges)
                parts.setdefault(column, []).append(cell)
                if width > 1 and (number, column, 1, width) not in table.spans:
                    table.spans.append((number, column, 1, width))
        for column, cells in parts.items():
            table.rows[number][column] = _cell_text(cells)
    if not _plausible(table) or _prose_columns(run, ranges) or _in_drawing(table, graphics):
        return None
    table.lines = {index_of[id(line)] for line in lines}
    under_header = bool(separators) and any(
        groups[0][-1].bottom - _SNAP <= s <= groups[1][0].top + _SNAP for s in separators
    )
    bold = _bold_rows([[cell for row in group for cell in row.cells] for group in groups])
    table.header_rows = max(bold, int(under_header))
    return table


def _titles(row: Row) -> bool:
    """A caption ("Table 2. Solver statistics") or a numbered section title: a table's
    neighbour, not one of its rows."""
    text = row.text
    first = row.cells[0].text
    numbered = len(row.cells) == 1 and numbering(text) is not None and text[:1].isdigit()
    bare = first[:1].isdigit() and not any(ch.isalpha() for ch in first)
    set_apart = len(row.cells) == _NUMBER_AND_TITLE and bare and numbering(f"{first} Ab") is not None
    return numbered or set_apart or bool(_CAPTION.match(text))


def _in_drawing(table: Table, graphics: PageGraphics) -> bool:
    """Curves or slanted lines among the cells: the labels of a figure or a plot."""
    x0, x1 = table.x0 - _SNAP, table.x1 + _SNAP
    top, bottom = table.top - _SNAP, table.bottom + _SNAP
    inside = sum(1 for x, y in graphics.marks if x0 <= x <= x1 and top <= y <= bottom)
    return inside >= _DRAWING_MARKS


def _starts_first_column(row: Row, ranges: list[tuple[float, float]]) -> bool:
    return bool(ranges) and row.first.x0 <= ranges[0][1] and _columns_of(row.first, ranges)[0] == 0


def _plausible(table: Table) -> bool:
    """Refuses what only looks like a table: a list with a hanging indent, prose in columns."""
    cells = [cell for row in table.rows for cell in row if cell]
    if not cells or sum(len(cell.split()) for cell in cells) / len(cells) > _MAX_WORDS_PER_CELL:
        return False
    sentences = sum(
        1 for cell in cells if len(cell.split()) >= _SENTENCE_WORDS and _SENTENCE_END.search(cell)
    )
    if sentences >= _SENTENCE_SHARE * len(cells):
        return False  # lines of prose side by side (two short columns), not cells
    if len(table.rows) <= _FEW_ROWS and table.columns >= _WIDE_COLUMNS:
        return False
    if _garbled(cells) or len(cells) < _MIN_FILLED * sum(len(row) for row in table.rows):
        return False  # mostly empty: the labels of a figure, scattered words
    if table.columns <= _NUMBERED_MAX_COLUMNS and _numbered_lines(table.rows):
        return False  # numbered lines of a listing, or a margin's line numbers beside the text
    first = [row[0] for row in table.rows if row[0]]
    markers = sum(1 for cell in first if _MARKER.match(cell))
    return not first or markers < _MARKER_SHARE * len(first)


def _numbered_lines(rows: list[list[str]]) -> bool:
    """A column holds numbers alone, another runs of text: numbered lines, not a table."""
    columns = list(zip(*rows, strict=True))
    numbered = [i for i, column in enumerate(columns) if _numbers(column)]
    return any(
        _mean_words(column) >= _NUMBERED_TEXT_WORDS
        for i, column in enumerate(columns)
        if numbered and i not in numbered
    )


def _numbers(column: tuple[str, ...]) -> bool:
    """Mostly line numbers: cells of digits and letters only, mostly digits (a margin's "31 S32"
    too; not amounts such as "1,534.92")."""
    cells = [cell.replace(" ", "") for cell in column if cell]
    digits = sum(
        1 for cell in cells if cell.isalnum() and sum(ch.isdigit() for ch in cell) >= _DIGIT_SHARE * len(cell)
    )
    return bool(cells) and digits >= _NUMBERED_SHARE * len(cells)


def _mean_words(column: tuple[str, ...]) -> float:
    cells = [cell for cell in column if cell]
    return sum(len(cell.split()) for cell in cells) / len(cells) if cells else 0.0


def _garbled(cells: list[str]) -> bool:
    """Most cells hold control characters or U+FFFD: text the document's fonts do not map."""
    bad = sum(1 for cell in cells if _UNMAPPED.search(cell))
    return bad >= _GARBLED_SHARE * len(cells)


def _prose_columns(run: list[Row], ranges: list[tuple[float, float]]) -> bool:
    """Every column reads as prose: most of its lines run the column's width with several words,
    or are as long as lines of text (two columns of text that the reading order did not split)."""
    if len(run) <= _MIN_TEXT_ROWS:
        return False
    for index, (x0, x1) in enumerate(ranges):
        lines = [cell for row in run for cell in row.cells if _columns_of(cell, ranges) == (index, 1)]
        wordy = [line for line in lines if len(line.text.split()) >= _PROSE_WORDS]
        full = [line for line in wordy if line.x1 - line.x0 >= _FULL * (x1 - x0)]
        long = [line for line in wordy if len(line.text) >= _PROSE_CHARS]
        if not lines or max(len(full), len(long)) < _PROSE_SHARE * len(lines):
            return False
    return True


# -- the page ------------------------------------------------------------------------------------


def find_tables(page: PageLines, graphics: PageGraphics) -> list[Table]:
    """The page's tables, top to bottom."""
    free = set(range(len(page.lines)))
    tables: list[Table] = []
    for cells in _grid_cells(graphics):
        table = _ruled_table(cells, page, free)
        if table is not None:
            tables.append(table)
            free -= table.lines
    index_of = {id(line): index for index, line in enumerate(page.lines)}
    lines = [page.lines[index] for index in sorted(free)]
    for run in reading_order(lines, page.width):
        width = max(line.x1 for line in run) - min(line.x0 for line in run)
        for candidate in _candidates(rows_of(run), max(width, 1.0)):
            table = _text_table(candidate, page, graphics, index_of)
            if table is not None:
                tables.append(table)
    return sorted(tables, key=lambda table: (table.top, table.x0))


def read_page(page: Any, image_names: list[str], facts: DocumentFacts) -> tuple[PageLines, PageGraphics]:
    """A PDFium page's lines (cut where its vertical rules run, without what a person would not
    see) and its graphics: what ``find_tables`` takes, when the page's tables are wanted."""
    graphics = page_graphics(page)
    cuts = VerticalRules([((r.x0 + r.x1) / 2, r.top, r.bottom) for r in graphics.rules if not r.horizontal])
    return pdfium_page_lines(page, image_names, facts, cuts), graphics
