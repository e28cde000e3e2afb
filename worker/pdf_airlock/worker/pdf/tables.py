"""Tables on a page: ruled grids from its rules, the others from the alignment of its text.

Input: a page's text lines (``layoutlines``, cut at vertical rules) and its rules and fills
(``graphics``), both from an untrusted document. Two finders run in turn:

* **Ruled grids.** The rules become edges and pdfplumber's table geometry (MIT; ``merge_edges``,
  ``edges_to_intersections``, then its cell and table search made bounded: ``gridcells``) turns
  them into cells; the cells' edges give the grid's columns and rows, so a cell over several of them is a
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
is bounded by the graphics cap (``graphics.MAX_GRAPHIC_OBJECTS``), ``MAX_EDGE_PAIRS`` and the cell
search's (``gridcells.MAX_CELL_CHECKS``).
"""

from __future__ import annotations

import bisect
import itertools
import re
from typing import Any, Final

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.graphics import PageGraphics, page_graphics
from pdf_airlock.worker.pdf.gridcells import cells_of, tables_of
from pdf_airlock.worker.pdf.headings import numbering
from pdf_airlock.worker.pdf.layoutlines import PageLines, VerticalRules, pdfium_page_lines
from pdf_airlock.worker.pdf.tablealign import Candidate, candidates
from pdf_airlock.worker.pdf.tablegrid import Piece, Table, TextRow, boundaries, build, pieces_of, text_rows
from pdf_airlock.worker.pdf.tableguard import form, garbled, prose_column, prose_edge, refused
from pdf_airlock.worker.pdf.visibility import DocumentFacts

__all__ = ["MAX_EDGE_PAIRS", "Table", "find_tables", "read_page"]

MAX_EDGE_PAIRS: Final = 2_000_000  # horizontal x vertical edges compared for intersections
_SNAP: Final = 3.0  # pdfplumber's default snap, join and intersection tolerances (points)
_MIN_EDGE: Final = 3.0
_GRID_CLUSTER: Final = 1.5  # cell edges this close are one grid line
_MIN_TEXT_ROWS: Final = 3  # rows a table needs when no rule or shading confirms it
_MAX_WORDS_PER_CELL: Final = 12.0  # more, on average, and the "cells" are prose
_MARKER_SHARE: Final = 0.6
_MIN_FILLED: Final = 0.6  # a table has at least this share of its cells filled
_FULL: Final = 0.7  # a line this share of its column's longest line fills it
_PROSE_WORDS: Final = 4
_PROSE_SHARE: Final = 0.5
_PROSE_CHARS: Final = 25  # a line this long that fills its column is one of prose
_WIDE_COLUMNS: Final = 8  # this many columns over ``_FEW_ROWS`` rows: scattered words, not a table
_FEW_ROWS: Final = 3
_NUMBERED_SHARE: Final = 0.8
_DIGIT_SHARE: Final = 0.6
_NUMBERED_MAX_COLUMNS: Final = 3
_NUMBERED_TEXT_WORDS: Final = 3.0
_GARBLED_SHARE: Final = 0.3
_DRAWING_MARKS: Final = 2  # curves or slanted lines among a table's cells: a figure
_RULED_MIN_FILLED: Final = 0.4
_STACK_GAP: Final = 24.0  # points between two grids of the same columns that are one table
_BESIDE_COLUMNS: Final = 2.0  # labels beside a grid are at most this many of its columns' width away
_BESIDE_POINTS: Final = 100.0  # or this far
_TILED: Final = 0.9  # of a ruled grid's box its cells cover, or it is a drawing's boxes
_RULED_HOLDING: Final = 0.25  # of a ruled grid's cells hold text, or it is a drawing's boxes
_UNMAPPED: Final = re.compile(r"[\x00-\x08\x0b-\x1f\ufffd]")
_NUMBER_AND_TITLE: Final = 2  # a section number and its title, a wide space apart
_CAPTION: Final = re.compile(r"^(table|tab\.|figure|fig\.)\s*[\dIVXLC]+\b", re.IGNORECASE)
_SENTENCE_WORDS: Final = 3
_SENTENCE_SHARE: Final = 0.5  # this share of cells reading as sentences: prose, not a table
_SENTENCE_END: Final = re.compile(r"[.!?]\W*$")
_SPAN_SHARE: Final = 0.5  # a rule or fill over this share of a table's width parts its rows
_NOTE: Final = re.compile(r"^(source|sources|note|notes|\*|[a-z]\s)\b", re.IGNORECASE)
_MARKER: Final = re.compile(
    r"^([\u2022\u25e6\u25aa\u25cf\u25cb\u25a0\u25a1\u2013\u2014*\u00b7-]|\(?\d{1,3}[.)]|\(?[a-z][.)]"
    r"|\(?[ivx]{1,5}[.)]|\[\d{1,3}\])$"
)


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
    from pdfplumber.table import edges_to_intersections, merge_edges

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
    return tables_of(cells_of(edges_to_intersections(merged, _SNAP, _SNAP)))


def _ruled_table(
    cells: list[tuple[float, float, float, float]],
    pieces: list[Piece],
    others: list[tuple[float, float, float, float]],
) -> Table | None:
    """The table a ruled grid draws: its columns where its cells' edges run and where whitespace
    parts the text inside one of its cells on most rows, its rows where its rules and the
    text's lines part them; the text in its cells (by their centres), and a column of labels
    beside it (``_beside``), less a title or a note across the whole grid at its top or foot.
    None for a drawing's boxes (few of its cells hold text)."""
    xs = _positions([x for cell in cells for x in (cell[0], cell[2])])
    ys = _positions([y for cell in cells for y in (cell[1], cell[3])])
    if len(xs) < 2 or len(ys) < 2:
        return None
    at: dict[tuple[int, int], list[Piece]] = {}  # the grid's slots, by the pieces' centres
    for piece in pieces:
        x, y = (piece.x0 + piece.x1) / 2, (piece.top + piece.bottom) / 2
        if xs[0] <= x <= xs[-1] and ys[0] <= y <= ys[-1]:
            slot = (bisect.bisect_left(xs, x) - 1, bisect.bisect_left(ys, y) - 1)
            at.setdefault(slot, []).append(piece)
    cell_of: dict[int, int] = {}  # a piece's cell, by the piece's id
    for number, cell in enumerate(cells):
        columns = range(_slot(xs, cell[0]), _slot(xs, cell[2]))
        for r in range(_slot(ys, cell[1]), _slot(ys, cell[3])):
            for c in columns:
                cell_of.update((id(piece), number) for piece in at.get((c, r), []))
    area = sum((cell[2] - cell[0]) * (cell[3] - cell[1]) for cell in cells)
    if len(set(cell_of.values())) < _RULED_HOLDING * len(cells) or area < _TILED * (xs[-1] - xs[0]) * (
        ys[-1] - ys[0]
    ):
        return None  # boxes and arrows of a drawing (not a grid of cells), a few of them labelled
    inside = [piece for piece in pieces if id(piece) in cell_of]
    free = [p for p in pieces if not any(_holds(box, p) for box in others)]
    side = _beside(free, cell_of, xs, ys) if len(xs) > 2 and len(ys) > 2 else []
    rows = _trimmed(text_rows(inside + side))
    split = [x for x in boundaries(rows) if _split(rows, cells, cell_of, x)]
    outer = [
        x
        for x in (xs[0], xs[-1])
        if any(p.x1 <= x + _SNAP and p.x0 < x - _SNAP for p in side)
        or any(p.x0 >= x - _SNAP and p.x1 > x + _SNAP for p in side)
    ]
    table = build(rows, xs[1:-1] + outer + split, ys[1:-1], whitespace=False)
    if table is None:
        return None
    table.x0, table.top, table.x1, table.bottom = min(xs[0], table.x0), ys[0], max(xs[-1], table.x1), ys[-1]
    _cell_spans(table, cells)
    filled = [cell for row in table.rows for cell in row if cell]
    if len(filled) < max(2, _RULED_MIN_FILLED * len(table.rows) * table.columns) or garbled(filled):
        return None
    if form(table):
        return None
    return table


def _cell_spans(table: Table, cells: list[tuple[float, float, float, float]]) -> None:
    """The spans the grid's cells draw: a cell over several of the table's rows (its text in the
    first, the others empty there) or columns, in place of what the text alone says there."""
    spans = {(row, column): (rows, columns) for row, column, rows, columns in table.spans}
    for x0, top, x1, bottom in cells:
        columns = [
            i
            for i, (a, b) in enumerate(itertools.pairwise(table.edges))
            if x0 - _SNAP <= (a + b) / 2 <= x1 + _SNAP
        ]
        rows = [i for i, (a, b) in enumerate(table.bands) if top - _SNAP <= (a + b) / 2 <= bottom + _SNAP]
        if not rows or not columns or len(rows) * len(columns) == 1 or not table.rows[rows[0]][columns[0]]:
            continue
        covered = [(r, c) for r in rows for c in columns if (r, c) != (rows[0], columns[0])]
        if all(not table.rows[r][c] for r, c in covered):
            spans[(rows[0], columns[0])] = (len(rows), len(columns))
    table.spans = [(row, column, rows, columns) for (row, column), (rows, columns) in sorted(spans.items())]


def _beside(pieces: list[Piece], cell_of: dict[int, int], xs: list[float], ys: list[float]) -> list[Piece]:
    """Columns of labels or figures beside a ruled grid, level with its rows and no rule round
    them (a grid drawn round some columns alone): the pieces that end just left of it, and those
    that start just right of it, within its height, two rows of them at least, not prose."""
    width = (xs[-1] - xs[0]) / max(len(xs) - 1, 1)
    reach = max(_BESIDE_COLUMNS * width, _BESIDE_POINTS)
    level = [p for p in pieces if id(p) not in cell_of and ys[0] <= (p.top + p.bottom) / 2 <= ys[-1]]
    found: list[Piece] = []
    for side in (
        [p for p in level if xs[0] - reach <= p.x1 <= xs[0] + _SNAP],
        [p for p in level if xs[-1] - _SNAP <= p.x0 <= xs[-1] + reach],
    ):
        rows = text_rows(side)
        if len(rows) >= 2 and not prose_column(rows):
            found += side
    return found


def _split(
    rows: list[TextRow], cells: list[tuple[float, float, float, float]], cell_of: dict[int, int], x: float
) -> bool:
    """Whether whitespace at ``x`` parts two pieces inside one ruled cell on most of the text rows
    with text in a cell there (two columns the grid draws no rule between)."""
    straddled = spread = 0
    for row in rows:
        held = [(p, cell_of[id(p)]) for p in row.pieces if id(p) in cell_of]
        spread += any(cells[c][0] < x < cells[c][2] for _, c in held)
        straddled += any(a == b and p.x1 <= x <= q.x0 for (p, a), (q, b) in itertools.pairwise(held))
    return straddled >= 2 and straddled >= spread / 2


def _stacked(
    grids: list[list[tuple[float, float, float, float]]],
) -> list[list[tuple[float, float, float, float]]]:
    """Grids one under the other with the same columns, a short gap between them (a group's title
    across the table, no rule down its sides), as one grid: the gap a cell across them."""
    found: list[list[tuple[float, float, float, float]]] = []
    for cells in sorted(grids, key=lambda cells: _box(cells)[1]):
        if found:
            above, below = _box(found[-1]), _box(cells)
            upper, lower = _columns(found[-1]), _columns(cells)
            same = len(upper) == len(lower) and all(
                abs(a - b) <= _GRID_CLUSTER for a, b in zip(upper, lower, strict=True)
            )
            if same and 0 <= below[1] - above[3] <= _STACK_GAP:
                found[-1] = [*found[-1], (above[0], above[3], above[2], below[1]), *cells]
                continue
        found.append(cells)
    return found


def _columns(cells: list[tuple[float, float, float, float]]) -> list[float]:
    return _positions([x for cell in cells for x in (cell[0], cell[2])])


def _box(cells: list[tuple[float, float, float, float]]) -> tuple[float, float, float, float]:
    return (
        min(c[0] for c in cells),
        min(c[1] for c in cells),
        max(c[2] for c in cells),
        max(c[3] for c in cells),
    )


def _slot(positions: list[float], value: float) -> int:
    """The index of the grid line at ``value`` (the nearest)."""
    at = bisect.bisect_left(positions, value)
    if at == len(positions) or (at > 0 and value - positions[at - 1] <= positions[at] - value):
        return at - 1
    return at


def _holds(cell: tuple[float, float, float, float], piece: Piece) -> bool:
    x, y = (piece.x0 + piece.x1) / 2, (piece.top + piece.bottom) / 2
    return cell[0] <= x <= cell[2] and cell[1] <= y <= cell[3]


def _trimmed(rows: list[TextRow]) -> list[TextRow]:
    """The rows less a caption, a title or a note of one piece across all the others at the top
    or the foot."""
    while len(rows) > 2 and _across(rows[0], rows[1:]):
        rows = rows[1:]
    while len(rows) > 2 and _across(rows[-1], rows[:-1]):
        rows = rows[:-1]
    return rows


def _across(row: TextRow, others: list[TextRow]) -> bool:
    if len(row.pieces) != 1:
        return False
    piece = row.pieces[0]
    x0 = min(p.x0 for other in others for p in other.pieces)
    x1 = max(p.x1 for other in others for p in other.pieces)
    over = piece.x0 <= x0 + _SNAP or piece.x1 >= x1 - _SNAP or (piece.x0 + piece.x1) / 2 > x0 + (x1 - x0) / 4
    wordy = len(piece.text.split()) >= _PROSE_WORDS or bool(_NOTE.match(piece.text))
    return _titles(row) or (wordy and over and piece.x1 - piece.x0 >= _SPAN_SHARE * (x1 - x0))


def _positions(values: list[float]) -> list[float]:
    """Grid lines: the values, those within ``_GRID_CLUSTER`` of each other made one."""
    found: list[float] = []
    for value in sorted(values):
        if not found or value - found[-1] > _GRID_CLUSTER:
            found.append(value)
    return found


# -- tables drawn by alignment -------------------------------------------------------------------


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


def _verticals(graphics: PageGraphics, x0: float, x1: float, top: float, bottom: float) -> list[float]:
    """The x of vertical rules inside the table's width down most of its height."""
    height = max(bottom - top, 1.0)
    return _positions(
        [
            (rule.x0 + rule.x1) / 2
            for rule in graphics.rules
            if not rule.horizontal
            and x0 < (rule.x0 + rule.x1) / 2 < x1
            and min(rule.bottom, bottom) - max(rule.top, top) >= _SPAN_SHARE * height
        ]
    )


def _aligned_table(candidate: Candidate, graphics: PageGraphics) -> Table | None:
    """The table a candidate run of rows makes, or None where it only looks like one
    (``tableguard``); the page's prose beside it, as a column at its edge, is left out."""
    run, head = candidate.rows, candidate.head
    for _ in range(2):
        while run and _titles(run[0]):
            run, head = run[1:], max(head - 1, 0)  # a caption or a section's title over it is not in it
        while run and _titles(run[-1]):
            run = run[:-1]  # nor a caption under it
        if len(run) < 2:
            return None
        pieces = [piece for row in run for piece in row.pieces]
        x0, x1 = min(p.x0 for p in pieces), max(p.x1 for p in pieces)
        top, bottom = run[0].top, max(row.bottom for row in run)
        separators = _separators(graphics, x0, x1, top, bottom)
        table = build(run, _verticals(graphics, x0, x1, top, bottom), separators, head)
        if table is None or len(table.rows) < (2 if separators else _MIN_TEXT_ROWS):
            return None
        kept = prose_edge(run, table)
        if kept is None:
            break
        left, right = kept
        narrowed = [
            TextRow(
                [p for p in row.pieces if left - _SNAP <= p.x0 and p.x1 <= right + _SNAP], row.top, row.bottom
            )
            for row in run
        ]
        if sum(1 for row in narrowed if len(row.pieces) > 1) < 2:
            if separators:
                break  # terms beside their descriptions, in a ruled or shaded table
            return None  # terms beside their descriptions (a list), or prose beside prose
        head = sum(1 for row in narrowed[:head] if row.pieces)
        run = [row for row in narrowed if row.pieces]
        while run and len(run[-1].pieces) < 2:
            run = run[:-1]
    else:
        return None
    if refused(table, run) or _in_drawing(table, graphics):
        return None
    return table


def _titles(row: TextRow) -> bool:
    """A caption ("Table 2. Solver statistics") or a numbered section title: a table's
    neighbour, not one of its rows."""
    text = " ".join(piece.text for piece in row.pieces)
    first = row.pieces[0].text
    numbered = len(row.pieces) == 1 and numbering(text) is not None and text[:1].isdigit()
    bare = first[:1].isdigit() and not any(ch.isalpha() for ch in first)
    set_apart = len(row.pieces) == _NUMBER_AND_TITLE and bare and numbering(f"{first} Ab") is not None
    return numbered or set_apart or bool(_CAPTION.match(text))


def _in_drawing(table: Table, graphics: PageGraphics) -> bool:
    """Curves or slanted lines among the cells: the labels of a figure or a plot."""
    x0, x1 = table.x0 - _SNAP, table.x1 + _SNAP
    top, bottom = table.top - _SNAP, table.bottom + _SNAP
    inside = sum(1 for x, y in graphics.marks if x0 <= x <= x1 and top <= y <= bottom)
    return inside >= _DRAWING_MARKS


# -- the page ------------------------------------------------------------------------------------


def find_tables(page: PageLines, graphics: PageGraphics) -> list[Table]:
    """The page's tables, top to bottom."""
    pieces = pieces_of(page.lines, range(len(page.lines)))
    tables: list[Table] = []
    grids = _stacked(_grid_cells(graphics))
    boxes = [_box(cells) for cells in grids]
    for number, cells in enumerate(grids):
        table = _ruled_table(cells, pieces, boxes[:number] + boxes[number + 1 :])
        if table is not None:
            tables.append(table)
            pieces = [piece for piece in pieces if piece.line not in table.lines]
    rules = [((r.top + r.bottom) / 2, r.x0, r.x1) for r in graphics.rules if r.horizontal]
    for candidate in candidates(text_rows(pieces), rules):
        table = _aligned_table(candidate, graphics)
        if table is not None:
            tables.append(table)
    return sorted(tables, key=lambda table: (table.top, table.x0))


def read_page(page: Any, image_names: list[str], facts: DocumentFacts) -> tuple[PageLines, PageGraphics]:
    """A PDFium page's lines (cut where its vertical rules run, without what a person would not
    see) and its graphics: what ``find_tables`` takes, when the page's tables are wanted."""
    graphics = page_graphics(page)
    cuts = VerticalRules([((r.x0 + r.x1) / 2, r.top, r.bottom) for r in graphics.rules if not r.horizontal])
    return pdfium_page_lines(page, image_names, facts, cuts), graphics
