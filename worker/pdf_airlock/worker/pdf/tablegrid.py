"""A table's grid from its text and its rules: columns, rows, spanning cells and header rows.

Input: the pieces of text inside one table's region (``pieces_of``: the page's lines, a line of
numbers cut between its numbers) and the rules and shaded rows drawn there, from an untrusted
document; nothing is assumed about either. One procedure serves a ruled table and one aligned
by whitespace alone:

1. Text rows (``text_rows``): pieces that share a baseline (their heights overlap), top to
   bottom.
2. Columns (``boundaries``): where a vertical rule runs inside the region, and where whitespace
   parts the text of every row: the x-ranges no piece covers, a few rows allowed across them
   (a spanning header, a note) when each of those pieces runs past the whitespace on both
   sides (a piece that ends inside it is a short column's, and keeps it apart).
3. Cells: a piece goes to the columns it overlaps; over several, it spans them.
4. Rows (``_logical_rows``): each text row is a row of the table, but a line that continues a
   cell joins the row above: one with nothing in the first column and no wider gap above it,
   or, where rules part the rows, every text row between the same two rules unless most of
   their cells hold a line of their own (a body under a ruled header, its rows unruled).
5. Header rows (``_header_rows``): the rows above the rule under the header, bold rows at the
   top, a row holding a spanning cell and the row under it.

The work is linear in the pieces, after sorting (the columns: one sweep over the pieces' edges).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from pdf_airlock.worker.pdf.layoutlines import TextLine
from pdf_airlock.worker.pdf.structure import join_line, shown

__all__ = ["Piece", "Table", "TextRow", "boundaries", "build", "pieces_of", "text_rows"]

MAX_COLUMNS: Final = 64
MAX_ROWS: Final = 5000
_ROW_OVERLAP: Final = 0.5  # of the lower line's height, shared with a text row to be on it
_NUMBER_GAP_EMS: Final = 0.35  # two numbers this far apart in a line are two cells
_CROSSERS: Final = 8  # one row in this many may run across a column's whitespace
_EDGE: Final = 1.0  # points: a piece overlapping a column by no more than this is not in it
_MIN_GAP: Final = 1.0  # points of whitespace that part two columns
_RULE_SNAP: Final = 3.0  # a rule this close to another boundary is that boundary
_CONTINUATION_GAP: Final = 1.5  # a line continues the row above if its gap is under this x median
_DENSE: Final = 0.9  # share of a band's cells holding a line on each of its text rows: rows apart
_LONE_ROWS: Final = 3  # a table this tall may have no column of one row's text
_TALL: Final = 3  # a band this many times as tall as most is rows no rule parts
_ROW_RULES: Final = 4  # rules parting the text into this many bands or more part its rows
_NUMERIC: Final = re.compile(  # digits, amounts, percentages; a dash (hyphen, en, em, minus) for none
    "^[(\\[]?[-+*$\u20ac\u00a3\u00a5\u00b1<>\u2264\u2265\u2013\u2014\u2212]*\\d[\\d.,:/\u2009'\u2013-]*[%*]?[)\\]]?[*\u2020\u2021]*$"
    "|^[-\u2013\u2014\u2212\u2021\u2020*]+$"
)
_CONTINUES: Final = re.compile(r"[-/,(&]$|\b(and|or|of|the|in|for|to|with|by)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Piece:
    """A run of one line's text with no column's whitespace in it: its box (points from the
    page's top-left), style, and the index of its line on the page."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool
    line: int

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 0.1)


@dataclass(slots=True)
class TextRow:
    """Pieces on one baseline, left to right."""

    pieces: list[Piece]
    top: float
    bottom: float

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 0.1)

    @property
    def middle(self) -> float:
        return (self.top + self.bottom) / 2


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
    edges: list[float] = field(default_factory=list)  # the columns' bounds, the outer ones too
    bands: list[tuple[float, float]] = field(default_factory=list)  # each row's top and bottom

    @property
    def columns(self) -> int:
        return len(self.rows[0]) if self.rows else 0


# -- pieces and text rows ------------------------------------------------------------------------


def numeric(text: str) -> bool:
    """A number, an amount, a percentage, or a dash standing for none."""
    return bool(_NUMERIC.match(text))


def pieces_of(lines: Sequence[TextLine], indices: Iterable[int]) -> list[Piece]:
    """The pieces of the lines at ``indices``: each line whole, but a line of two or more numbers
    a wide space apart (a row of figures set tighter than the line finder's gap) cut between
    them (not before a "±", the error of the figure before it)."""
    found: list[Piece] = []
    for index in indices:
        line = lines[index]
        words = line.text.split()
        if len(line.words) < 2 or len(line.words) != len(words):
            found.append(_piece(line, index, line.text, line.x0, line.x1))
            continue
        start = 0
        for at in range(1, len(words) + 1):
            if at < len(words):
                gap = line.words[at][0] - line.words[at - 1][1]
                wide = gap >= _NUMBER_GAP_EMS * max(line.size, 1.0)
                apart = numeric(words[at - 1]) and numeric(words[at]) and not words[at].startswith("\u00b1")
                if not (wide and apart):
                    continue
            x0 = line.x0 if start == 0 else line.words[start][0]
            x1 = line.x1 if at == len(words) else line.words[at - 1][1]
            found.append(_piece(line, index, " ".join(words[start:at]), x0, x1))
            start = at
    return found


def _piece(line: TextLine, index: int, text: str, x0: float, x1: float) -> Piece:
    return Piece(text, x0, x1, line.top, line.bottom, line.size, line.bold, index)


def text_rows(pieces: Iterable[Piece]) -> list[TextRow]:
    """Pieces grouped by baseline: a piece joins the row above when their heights overlap by
    half the smaller's; rows top to bottom, pieces left to right."""
    rows: list[TextRow] = []
    for piece in sorted(pieces, key=lambda piece: (piece.top, piece.x0)):
        if rows:
            row = rows[-1]
            overlap = min(row.bottom, piece.bottom) - max(row.top, piece.top)
            if overlap >= _ROW_OVERLAP * min(piece.height, row.height):
                row.pieces.append(piece)
                row.top, row.bottom = min(row.top, piece.top), max(row.bottom, piece.bottom)
                continue
        rows.append(TextRow([piece], piece.top, piece.bottom))
    for row in rows:
        row.pieces.sort(key=lambda piece: piece.x0)
    return rows


# -- columns -------------------------------------------------------------------------------------


def _coverage(rows: Sequence[TextRow]) -> list[tuple[float, float, int]]:
    """Steps ``(x0, x1, rows)``: how many rows have text over each stretch of x."""
    events: list[tuple[float, int]] = []
    for row in rows:
        spans: list[list[float]] = []
        for piece in row.pieces:  # left to right: a row's overlapping pieces count once
            if spans and piece.x0 <= spans[-1][1]:
                spans[-1][1] = max(spans[-1][1], piece.x1)
            else:
                spans.append([piece.x0, piece.x1])
        for x0, x1 in spans:
            events += [(x0, 1), (x1, -1)]
    events.sort()
    steps: list[tuple[float, float, int]] = []
    count = 0
    for (x, change), (after, _) in itertools.pairwise(events):
        count += change
        if after > x:
            steps.append((x, after, count))
    return steps


def _holes(left: float, right: float, inside: list[Piece]) -> list[tuple[float, float]]:
    """The stretches of [left, right] no piece of ``inside`` covers."""
    holes: list[tuple[float, float]] = []
    at = left
    for piece in sorted(inside, key=lambda piece: piece.x0):
        if piece.x0 > at:
            holes.append((at, min(piece.x0, right)))
        at = max(at, piece.x1)
    if at < right:
        holes.append((at, right))
    return [(a, b) for a, b in holes if b - a >= _MIN_GAP]


def boundaries(rows: Sequence[TextRow], verticals: Sequence[float] = ()) -> list[float]:
    """The x of each boundary between two columns: the vertical rules inside the text's extent,
    and the middle of the whitespace that parts the rows' text where no rule runs (a few rows may
    cross it, each with a piece running past it on both sides)."""
    pieces = [piece for row in rows for piece in row.pieces]
    if not pieces:
        return []
    left, right = min(p.x0 for p in pieces), max(p.x1 for p in pieces)
    allowed = len(rows) // _CROSSERS
    rules = [x for x in verticals if left < x < right]
    found: list[float] = list(rules)
    run: list[tuple[float, float, int]] = []
    for step in [*_coverage(rows), (right, right, len(rows) + 1)]:
        if step[2] <= allowed and left < step[0] and step[1] < right:
            run.append(step)
            continue
        if run:
            for a, b, middle in _gap_middles(run, pieces):
                if not any(a - _RULE_SNAP <= x <= b + _RULE_SNAP for x in rules):
                    found.append(middle)
            run = []
    return sorted(found)


def _gap_middles(
    run: list[tuple[float, float, int]], pieces: list[Piece]
) -> list[tuple[float, float, float]]:
    """Where to part the columns in a stretch of little text: each hole the pieces that end
    inside it leave (the pieces that run across it from both sides do not count: a spanning
    cell), and the middle of its least covered part."""
    left, right = run[0][0], run[-1][1]
    inside = [p for p in pieces if p.x0 >= left and p.x1 <= right]
    middles = []
    for a, b in _holes(left, right, inside):
        fewest = min((count for x0, x1, count in run if x1 > a and x0 < b), default=0)
        low = [(max(x0, a), min(x1, b)) for x0, x1, count in run if count == fewest and x1 > a and x0 < b]
        middles.append((a, b, (low[0][0] + low[-1][1]) / 2 if low else (a + b) / 2))
    return middles


def _columns_of(piece: Piece, edges: list[float]) -> tuple[int, int]:
    """The first column a piece is in and how many it covers (``edges``: the columns' bounds,
    the outer ones included)."""
    hit = [
        i
        for i, (a, b) in enumerate(itertools.pairwise(edges))
        if min(b, piece.x1) - max(a, piece.x0) > min(_EDGE, (piece.x1 - piece.x0) / 2)
    ]
    if not hit:
        middle = (piece.x0 + piece.x1) / 2
        nearest = min(range(len(edges) - 1), key=lambda i: abs((edges[i] + edges[i + 1]) / 2 - middle))
        return nearest, 1
    return hit[0], hit[-1] - hit[0] + 1


def _without_empty(edges: list[float], pieces: list[Piece]) -> list[float]:
    """The bounds, less one of each column no piece is in (a rule beside whitespace): the
    column joins the next one (the last one, the one before it)."""
    used = {_columns_of(piece, edges)[0] for piece in pieces}
    last = len(edges) - 2
    kept = [edges[0]]
    for column in range(last + 1):
        if column in used:
            kept.append(edges[column + 1])
        elif column == last and len(kept) > 1:
            kept[-1] = edges[column + 1]
    if len(kept) == 1:
        kept.append(edges[-1])
    return kept


def _without_lone(rows: list[TextRow], edges: list[float]) -> list[float]:
    """The bounds, less the one between a column with text on one row alone (a header's cell
    set beside the figures under it, a stray mark) and the neighbour nearest that text, when
    that neighbour is empty on its row."""
    if len(rows) < _LONE_ROWS:
        return edges
    changed = True
    while changed and len(edges) > 3:
        changed = False
        held: dict[int, set[int]] = {}
        for number, row in enumerate(rows):
            for piece in row.pieces:
                held.setdefault(_columns_of(piece, edges)[0], set()).add(number)
        for column, numbers in sorted(held.items()):
            if len(numbers) != 1:
                continue
            (number,) = numbers
            row = rows[number]
            mine = [p for p in row.pieces if _columns_of(p, edges)[0] == column]
            options = []
            for other, bound in ((column - 1, column), (column + 1, column + 1)):
                if 0 <= other < len(edges) - 1 and number not in held.get(other, set()) and other in held:
                    far = abs((edges[other] + edges[other + 1]) / 2 - (mine[0].x0 + mine[-1].x1) / 2)
                    options.append((far, bound))
            if options:
                edges = edges[: min(options)[1]] + edges[min(options)[1] + 1 :]
                changed = True
                break
    return edges


# -- rows ----------------------------------------------------------------------------------------


def _band(separators: list[float], y: float) -> int:
    return sum(1 for s in separators if s < y)


def _dense(band: list[TextRow], edges: list[float], typical: int) -> bool:
    """Rows no rule parts inside one band: most cells of the band hold a line on each of its
    text rows, and these are figures or the band is much taller than the others (a body under a
    ruled header), not one row of wrapped cells."""
    if len(band) < 2:
        return False
    filled = [{_columns_of(p, edges)[0] for p in row.pieces} for row in band]
    used = set().union(*filled)
    share = sum(len(columns) for columns in filled) / (len(band) * max(len(used), 1))
    if share < _DENSE or len(used) < 2:
        return False
    figures = [p for row in band for p in row.pieces if _columns_of(p, edges)[0] > 0]
    return len(band) >= _TALL * typical or sum(numeric(p.text) for p in figures) >= _DENSE * len(figures)


def _logical_rows(rows: list[TextRow], edges: list[float], separators: list[float]) -> list[list[TextRow]]:
    """Text rows grouped into the table's rows (see the module's step 4)."""
    bands = [_band(separators, row.middle) for row in rows]
    ruled = len(set(bands)) >= _ROW_RULES
    sizes = sorted(bands.count(band) for band in set(bands))
    median = sizes[len(sizes) // 2]
    gaps = sorted(b.top - a.bottom for a, b in itertools.pairwise(rows))
    typical = gaps[len(gaps) // 2] if gaps else 0.0
    grouped: list[list[TextRow]] = []
    for _, members in itertools.groupby(zip(bands, rows, strict=True), key=lambda pair: pair[0]):
        band = [row for _, row in members]
        if ruled and not _dense(band, edges, median):
            grouped.append(band)
            continue
        start = len(grouped)
        for row in band:
            if len(grouped) > start and _continues(grouped[-1], row, edges, typical):
                grouped[-1].append(row)
            else:
                grouped.append([row])
    return grouped


def _continues(above: list[TextRow], row: TextRow, edges: list[float], typical: float) -> bool:
    """Whether a text row is the rest of the row above: nothing in its first column (a cell
    wrapped there), or, in the first column alone, the rest of a first cell that breaks off
    mid-phrase; and no wider gap above it than between rows."""
    if row.top - above[-1].bottom > max(typical, 0.0) * _CONTINUATION_GAP + 0.5:
        return False
    columns = [_columns_of(piece, edges)[0] for piece in row.pieces]
    if 0 not in columns:
        return True
    if columns != [0]:
        return False
    before = [p for r in above for p in r.pieces if _columns_of(p, edges)[0] == 0]
    text = row.pieces[0].text
    return bool(before) and (bool(_CONTINUES.search(before[-1].text)) or text[:1].islower())


def _header_rows(
    grid: list[list[str]],
    groups: list[list[TextRow]],
    spans: list[tuple[int, int, int, int]],
    separators: list[float],
) -> int:
    """How many rows at the top are the header (the module's step 5), never all of them."""
    count = 0
    bold = [all(p.bold for row in group for p in row.pieces) for group in groups]
    while count < len(groups) and bold[count]:
        count += 1
    if count == len(groups):
        count = 0
    for row, _, rows, columns in spans:
        if columns > 1 and row < len(groups) - 1 and row <= count:
            count = max(count, row + rows + 1)
    if len(groups) >= 2 and separators:
        first = next((s for s in separators if groups[0][0].top < s), None)
        if first is not None:
            above = sum(1 for group in groups if group[-1].bottom <= first + 1.0)
            if 0 < above <= max(count, 1) + 1 and above < len(groups) and _body_numeric(grid[above:]):
                count = max(count, above)
    return count if count < len(groups) else 0


def _body_numeric(rows: list[list[str]]) -> bool:
    cells = [cell for row in rows for cell in row[1:] if cell]
    return not cells or sum(1 for cell in cells if numeric(cell)) >= 0.5 * len(cells)


def _cell_text(pieces: list[Piece]) -> str:
    parts: list[str] = []
    for piece in sorted(pieces, key=lambda piece: (round(piece.top), piece.x0)):
        join_line(parts, piece.text)
    return shown("".join(parts))


# -- the grid ------------------------------------------------------------------------------------


def build(
    rows: list[TextRow],
    verticals: Sequence[float] = (),
    separators: Sequence[float] = (),
    head: int = 0,
    whitespace: bool = True,
) -> Table | None:
    """The table these text rows make, with the x of the vertical rules inside it and the y of
    the rules and shading edges that part its rows (``head``: how many rows at the top are a
    header found over the body, left out where whitespace parts the columns; ``whitespace``:
    whether whitespace parts columns at all, or the rules alone do); None where they
    make no grid of two columns and two rows (or more than ``MAX_COLUMNS`` and ``MAX_ROWS``)."""
    if len(rows) <= head:
        return None
    cuts = boundaries(rows[head:], verticals) if whitespace else sorted(verticals)
    pieces = [piece for row in rows for piece in row.pieces]
    x0, x1 = min(p.x0 for p in pieces), max(p.x1 for p in pieces)
    edges = _without_lone(rows, _without_empty([x0, *cuts, x1], pieces))
    columns = len(edges) - 1
    if not 2 <= columns <= MAX_COLUMNS or len(rows) > MAX_ROWS:
        return None
    seps = sorted(separators)
    groups = _logical_rows(rows, edges, seps)
    if len(groups) < 2:
        return None
    table = Table(x0, rows[0].top, x1, max(row.bottom for row in rows), [[""] * columns for _ in groups])
    table.edges = edges
    table.bands = [(group[0].top, max(row.bottom for row in group)) for group in groups]
    for number, group in enumerate(groups):
        parts: dict[int, list[Piece]] = {}
        widths: dict[int, int] = {}
        for row in group:
            for piece in row.pieces:
                column, width = _columns_of(piece, edges)
                parts.setdefault(column, []).append(piece)
                widths[column] = max(widths.get(column, 1), width)
                table.lines.add(piece.line)
        taken: set[int] = set()
        for column in sorted(parts):
            if column in taken:  # under a span to its left: its own cell after all
                continue
            width = widths[column]
            covered = range(column + 1, column + width)
            if width > 1 and not any(other in parts for other in covered):
                table.spans.append((number, column, 1, width))
                taken.update(covered)
            table.rows[number][column] = _cell_text(parts[column])
        for column in taken:
            if column in parts:
                table.rows[number][column] = ""
    table.header_rows = _header_rows(table.rows, groups, table.spans, seps)
    return table
