"""What only looks like a table: the checks a grid found by alignment must pass.

Input: a grid ``tablegrid.build`` made, the text rows it came from, and whether rules or
shading confirm it; all from an untrusted document. Text set in columns is not always a table.
A grid is refused when it is:

* prose side by side: two columns (or all) whose lines are long and fill the column (two
  columns of a page, a list of references); such columns at the grid's edges beside the
  others are the page's text next to a table (``prose_edge`` says where the rest lies, the
  caller keeps that);
* a list: a first column of list markers (a hanging indent), or a column of line numbers
  ("12", "12:") beside runs of text (a listing, an algorithm, a margin's numbers);
* mathematics: a last column of equation numbers, "(12)";
* a paper's authors: a row of e-mail addresses side by side;
* a form (``form``, asked of ruled grids too): few figures among fields' labels ending in a
  colon or beside a first column of line numbers;
* scattered: mostly empty cells or many columns over a few rows (a figure's labels), cells of
  prose (many words, sentences), text the fonts do not map;
* unaligned: a column (but the first, indented by level) whose pieces share no edge (neither
  left, right nor middle): the words of justified prose that wide spaces cut apart.

Each check is linear in the grid's cells.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Final

from pdf_airlock.worker.pdf.tablegrid import Piece, Table, TextRow, numeric

__all__ = ["form", "garbled", "prose_column", "prose_edge", "refused"]

_SNAP: Final = 3.0
_MAX_WORDS_PER_CELL: Final = 12.0  # more, on average, and the "cells" are prose
_MARKER_SHARE: Final = 0.6
_MIN_FILLED: Final = 0.6  # a table has at least this share of its cells filled
_FULL: Final = 0.7  # a line this share of its column's longest line fills it
_PROSE_CHARS: Final = 25  # a line this long that fills its column is one of prose
_PROSE_SHARE: Final = 0.5
_WIDE_COLUMNS: Final = 8  # this many columns over ``_FEW_ROWS`` rows: scattered words, not a table
_FEW_ROWS: Final = 3
_NUMBERED_SHARE: Final = 0.8
_DIGIT_SHARE: Final = 0.6
_NUMBERED_MAX_COLUMNS: Final = 3
_NUMBERED_TEXT_WORDS: Final = 3.0
_GARBLED_SHARE: Final = 0.3
_SENTENCE_WORDS: Final = 3
_SENTENCE_SHARE: Final = 0.5  # this share of cells reading as sentences: prose, not a table
_EQUATION_SHARE: Final = 0.5  # of a last column's cells numbering equations
_ALIGN: Final = 2.0  # points: pieces whose edges are this close share that edge
_ALIGNED_SHARE: Final = 0.5  # of a column's pieces sharing one edge
_ALIGNED_PIECES: Final = 4  # a column of fewer pieces is not asked
_UNMAPPED: Final = re.compile(r"[\x00-\x08\x0b-\x1f\ufffd]")
_SENTENCE_END: Final = re.compile(r"[.!?]\W*$")
_FORM_LABELS: Final = 3  # cells ending in a colon, for a grid of text to be a form
_FORM_LINES: Final = 4  # line numbers a form's first column holds at least
_LINE_DIGITS: Final = 3
_FORM_FIGURES: Final = 0.2  # a form has fewer figures than this share of its cells (line numbers aside)
_EMAIL: Final = re.compile(r"\S@\S+\.\w")
_EQUATION: Final = re.compile(r"^\(\d{1,4}[a-z]?\)$")
_MARKER: Final = re.compile(
    r"^([\u2022\u25e6\u25aa\u25cf\u25cb\u25a0\u25a1\u2013\u2014*\u00b7-]|\(?\d{1,3}[.)]|\(?[a-z][.)]"
    r"|\(?[ivx]{1,5}[.)]|\[\d{1,3}\])$"
)


def _column_pieces(rows: Sequence[TextRow], x0: float, x1: float) -> list[Piece]:
    return [p for row in rows for p in row.pieces if x0 - _SNAP <= p.x0 and p.x1 <= x1 + _SNAP]


def _prose(rows: Sequence[TextRow], x0: float, x1: float) -> bool:
    """Most of the column's lines (a text row's pieces in it, together) are long and run about
    the width of its longest."""
    lines: list[tuple[float, int]] = []
    for row in rows:
        inside = [p for p in row.pieces if x0 - _SNAP <= p.x0 and p.x1 <= x1 + _SNAP]
        if inside:
            lines.append((inside[-1].x1 - inside[0].x0, sum(len(p.text) + 1 for p in inside)))
    if not lines:
        return False
    widest = max(width for width, _ in lines)
    full = [width for width, length in lines if width >= _FULL * widest and length >= _PROSE_CHARS]
    return len(full) >= _PROSE_SHARE * len(lines)


def prose_column(rows: Sequence[TextRow]) -> bool:
    """Whether text rows of one column read as prose (long lines that fill it)."""
    pieces = [p for row in rows for p in row.pieces]
    return bool(pieces) and _prose(rows, min(p.x0 for p in pieces), max(p.x1 for p in pieces))


def prose_edge(rows: Sequence[TextRow], table: Table) -> tuple[float, float] | None:
    """The x-range of the columns that are not prose where prose columns stand at the grid's
    left or right edge, or both, and nowhere between (the page's text beside a table), else
    None."""
    prose = [_prose(rows, x0, x1) for x0, x1 in itertools.pairwise(table.edges)]
    if not any(prose) or all(prose):
        return None
    first = prose.index(False)
    last = len(prose) - 1 - prose[::-1].index(False)
    if any(prose[first : last + 1]):
        return None
    return table.edges[first], table.edges[last + 1]


def _prose_columns(rows: Sequence[TextRow], table: Table) -> bool:
    prose = sum(1 for x0, x1 in itertools.pairwise(table.edges) if _prose(rows, x0, x1))
    return prose >= min(2, table.columns)


def _unaligned(rows: Sequence[TextRow], table: Table) -> bool:
    """A column of several pieces of which no half share a left, right or middle edge (but the
    first, whose labels may be indented by level)."""
    for x0, x1 in itertools.pairwise(table.edges[1:]):
        pieces = _column_pieces(rows, x0, x1)
        if len(pieces) < _ALIGNED_PIECES:
            continue
        best = max(
            _shared([p.x0 for p in pieces]),
            _shared([p.x1 for p in pieces]),
            _shared([(p.x0 + p.x1) / 2 for p in pieces]),
        )
        if best < _ALIGNED_SHARE * len(pieces):
            return True
    return False


def _shared(values: list[float]) -> int:
    """The most values within ``_ALIGN`` of one another."""
    values.sort()
    most = start = 0
    for end, value in enumerate(values):
        while value - values[start] > _ALIGN:
            start += 1
        most = max(most, end - start + 1)
    return most


def garbled(cells: list[str]) -> bool:
    """Most cells hold control characters or U+FFFD: text the document's fonts do not map."""
    bad = sum(1 for cell in cells if _UNMAPPED.search(cell))
    return bad >= _GARBLED_SHARE * len(cells)


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
    cells = [cell.replace(" ", "").rstrip(":.") for cell in column if cell]
    digits = sum(
        1 for cell in cells if cell.isalnum() and sum(ch.isdigit() for ch in cell) >= _DIGIT_SHARE * len(cell)
    )
    return bool(cells) and digits >= _NUMBERED_SHARE * len(cells)


def _mean_words(column: tuple[str, ...]) -> float:
    cells = [cell for cell in column if cell]
    return sum(len(cell.split()) for cell in cells) / len(cells) if cells else 0.0


def _equations(rows: list[list[str]]) -> bool:
    """The last column numbers equations: a display of mathematics."""
    last = [row[-1] for row in rows if row[-1]]
    return bool(last) and sum(1 for cell in last if _EQUATION.match(cell)) >= _EQUATION_SHARE * len(last)


def _wordy(cells: list[str]) -> bool:
    """Cells of prose: many words on average, or mostly sentences (two short columns of text)."""
    if sum(len(cell.split()) for cell in cells) / len(cells) > _MAX_WORDS_PER_CELL:
        return True
    sentences = sum(
        1 for cell in cells if len(cell.split()) >= _SENTENCE_WORDS and _SENTENCE_END.search(cell)
    )
    return sentences >= _SENTENCE_SHARE * len(cells)


def _scattered(table: Table, cells: list[str]) -> bool:
    """Mostly empty cells, or many columns over a few rows: a figure's labels, scattered words."""
    wide = len(table.rows) <= _FEW_ROWS and table.columns >= _WIDE_COLUMNS
    return wide or len(cells) < _MIN_FILLED * sum(len(row) for row in table.rows)


def _markers(rows: list[list[str]]) -> bool:
    """A first column of list markers: a list with a hanging indent."""
    first = [row[0] for row in rows if row[0]]
    return bool(first) and sum(1 for cell in first if _MARKER.match(cell)) >= _MARKER_SHARE * len(first)


def _authors(rows: list[list[str]]) -> bool:
    """A row of e-mail addresses in every cell: the authors' names and addresses of a paper."""
    return any(
        len(cells) > 1 and all(_EMAIL.search(cell) for cell in cells)
        for cells in ([cell for cell in row if cell] for row in rows)
    )


def form(table: Table) -> bool:
    """A form to fill in, not a table: few figures (line numbers aside) among fields' labels
    ("name:") or beside a first column that numbers its lines."""
    cells = [cell for row in table.rows for cell in row[1:] if cell]
    figures = sum(1 for cell in cells if numeric(cell))
    if figures >= _FORM_FIGURES * len(cells):
        return False
    labels = sum(1 for cell in cells if cell.rstrip().endswith(":"))
    return labels >= _FORM_LABELS or _line_numbers([row[0] for row in table.rows if row[0]])


def _line_numbers(cells: list[str]) -> bool:
    """Numbers that count up one by one (a few may hold two: "17 18"), as a form numbers its
    lines."""
    numbers = [int(n) for cell in cells for n in cell.split() if n.isdecimal() and len(n) <= _LINE_DIGITS]
    steps = sum(1 for a, b in itertools.pairwise(numbers) if b == a + 1)
    return len(numbers) >= _FORM_LINES and steps >= _NUMBERED_SHARE * (len(numbers) - 1)


def refused(table: Table, rows: Sequence[TextRow]) -> bool:
    """Whether the grid only looks like a table (the module's list)."""
    cells = [cell for row in table.rows for cell in row if cell]
    return (
        not cells
        or _wordy(cells)
        or _scattered(table, cells)
        or garbled(cells)
        or (table.columns <= _NUMBERED_MAX_COLUMNS and _numbered_lines(table.rows))
        or _equations(table.rows)
        or _markers(table.rows)
        or _authors(table.rows)
        or form(table)
        or _prose_columns(rows, table)
        or _unaligned(rows, table)
    )
