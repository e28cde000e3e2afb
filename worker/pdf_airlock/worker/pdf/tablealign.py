"""Where a page sets text in columns by whitespace alone: the text rows that may be a table.

Input: a page's text rows (``tablegrid.text_rows``) from an untrusted document, the rows a ruled
table holds left out; nothing is assumed about them. Two neighbouring rows of two or more pieces
belong to one table when neither runs text across the other's gaps: a line of prose crosses
the gaps of a table's row (and a table's row the gutter of two columns of prose), where a
table's rows keep to its columns (a header's short cell may span a few). So, top to bottom:

1. A run starts at a row of two or more pieces and goes on through the rows near below it
   (no wider gap than ``ROW_GAP_LINES`` line heights) that are compatible with its last row
   of two or more pieces and with its row of most pieces, or are lines of one piece within
   its columns or short (a section's label in the first column, the rest of a wrapped cell);
   one-piece rows at its end are left out, but the rest of its last cell.
2. A run of two such rows or more is a candidate; the short one-piece rows right above it
   (a spanning header's lines, not a caption or a long title) are its header's.

The candidates still have to pass ``tables``' checks against prose, lists and drawings. The work
is linear in the rows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pdf_airlock.worker.pdf.tablegrid import TextRow

__all__ = ["ROW_GAP_LINES", "Candidate", "candidates"]

ROW_GAP_LINES: Final = 2.5  # a vertical gap over this many line heights ends a table
_PROSE_WORDS: Final = 4  # a piece of this many words across another row's gap is a line of prose
_CROSSED_SHARE: Final = 0.5  # rows whose gaps are crossed this much are not of one table
_SHORT: Final = 0.5  # a one-piece row within a run is no wider than this share of the run
_HEADER_ROWS: Final = 4
_OUTDENT_EMS: Final = 2.0
_HEADER_WORDS: Final = 8
_SLACK: Final = 1.0  # points
_CAPTION: Final = re.compile(r"^(table|tab\.|figure|fig\.)\s*[\dIVXLC]+", re.IGNORECASE)
_NOTE: Final = re.compile(r"^(sources?|notes?|\*|[\d\u2020\u2021\u00a7]\s|\(?[a-z]\)\s)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Candidate:
    """Rows that may be a table: ``head`` of them at the top found as its header's lines."""

    rows: list[TextRow]
    head: int


def _gaps(row: TextRow) -> list[tuple[float, float]]:
    return [(a.x1, b.x0) for a, b in zip(row.pieces, row.pieces[1:], strict=False) if b.x0 > a.x1]


def _crossings(row: TextRow, other: TextRow) -> tuple[int, int, int]:
    """How many of ``other``'s gaps ``row``'s pieces run across, how many of them by a piece of
    prose, and how many gaps ``other`` has."""
    gaps = _gaps(other)
    crossed = prose = 0
    for left, right in gaps:
        over = [p for p in row.pieces if p.x0 < left - _SLACK and p.x1 > right + _SLACK]
        if over:
            crossed += 1
            prose += any(len(p.text.split()) >= _PROSE_WORDS for p in over)
    return crossed, prose, len(gaps)


def compatible(above: TextRow, below: TextRow) -> bool:
    """Whether two rows of two or more pieces may be rows of one table."""
    for row, other in ((above, below), (below, above)):
        crossed, prose, gaps = _crossings(row, other)
        if prose or (crossed >= 2 and crossed >= _CROSSED_SHARE * gaps):
            return False
    return True


def _extent(rows: Sequence[TextRow]) -> tuple[float, float]:
    pieces = [piece for row in rows for piece in row.pieces]
    return min(p.x0 for p in pieces), max(p.x1 for p in pieces)


def _short(row: TextRow, run: Sequence[TextRow]) -> bool:
    x0, x1 = _extent(run)
    piece = row.pieces[0]
    outdent = _OUTDENT_EMS * piece.size  # a section's label may stand out left of the rows
    return piece.x1 - piece.x0 <= _SHORT * max(x1 - x0, 1.0) and x0 - outdent <= piece.x0 <= x1


def _after(row: TextRow, last: TextRow | None) -> bool:
    """Whether a one-piece row at a run's foot is not the rest of its last cell: it runs across
    a gap of the last row of two or more pieces, or reads as a note."""
    return last is None or bool(_crossings(row, last)[0]) or bool(_NOTE.match(row.pieces[0].text))


def _near(above: TextRow, below: TextRow) -> bool:
    return below.top - above.bottom <= ROW_GAP_LINES * min(above.height, below.height)


def _header(row: TextRow, run: Sequence[TextRow]) -> bool:
    """A line of a header over the run: short pieces within its width, no caption."""
    x0, x1 = _extent(run)
    text = " ".join(p.text for p in row.pieces)
    return (
        not _CAPTION.match(text)
        and all(len(p.text.split()) <= _HEADER_WORDS for p in row.pieces)
        and x0 - _SLACK <= row.pieces[0].x0
        and row.pieces[-1].x1 <= x1 + _SLACK
        and (len(row.pieces) > 1 or row.pieces[0].x1 - row.pieces[0].x0 < (x1 - x0) / 2)
    )


def candidates(rows: Sequence[TextRow], rules: Sequence[tuple[float, float, float]] = ()) -> list[Candidate]:
    """The runs of rows that may be tables (the module's steps), top to bottom, with the header
    lines found over each; ``rules``: the page's horizontal rules ``(y, x0, x1)``, above which no
    header line is looked for."""
    runs: list[list[TextRow]] = []
    current: list[TextRow] = []
    last: TextRow | None = None
    fullest: TextRow | None = None  # the run's row of most pieces: its columns' best witness
    for row in rows:
        multi = len(row.pieces) >= 2
        if current and _near(current[-1], row):
            if (
                multi
                and last is not None
                and fullest is not None
                and compatible(last, row)
                and compatible(fullest, row)
            ):
                current.append(row)
                last = row
                fullest = row if len(row.pieces) > len(fullest.pieces) else fullest
                continue
            inside = last is not None and not _crossings(row, last)[0]
            if not multi and (inside or _short(row, [r for r in current if len(r.pieces) > 1])):
                current.append(row)
                continue
        if current:
            runs.append(current)
        current, last = ([row], row) if multi else ([], None)
        fullest = last
    if current:
        runs.append(current)
    found: list[list[TextRow]] = []
    taken: set[int] = set()
    for whole in runs:
        fuller = [row for row in whole if len(row.pieces) > 1]
        end = len(whole)
        while (
            end and len(whole[end - 1].pieces) < 2 and _after(whole[end - 1], fuller[-1] if fuller else None)
        ):
            end -= 1
        if len(fuller) < 2:
            continue
        taken.update(id(row) for row in whole[:end])
        found.append(whole[:end])
    order = {id(row): index for index, row in enumerate(rows)}
    result = []
    for run in found:
        start = order[id(run[0])]
        head: list[TextRow] = []
        x0, x1 = _extent(run)
        while start > 0 and len(head) < _HEADER_ROWS:
            above, below = rows[start - 1], (head or run)[0]
            ruled = any(
                above.bottom <= y <= below.top and min(b, x1) - max(a, x0) >= _SHORT * (x1 - x0)
                for y, a, b in rules
            )
            if ruled or id(above) in taken or not _near(above, below) or not _header(above, run):
                break
            head.insert(0, above)
            start -= 1
        result.append(Candidate(head + run, len(head)))
    return result
