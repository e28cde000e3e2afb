"""The reading order of a page's lines: columns and bands from the whitespace between them.

A stage of the Markdown parser's pipeline (lines -> reading order). Input: the upright text lines
of one page of an untrusted document (``layoutlines.TextLine``; text set at an angle is kept
apart before this stage) and stand-in lines for tables; nothing is assumed about them. Output:
runs of lines in reading order, each run one column's (or one band's) lines, read top to bottom.

The algorithm is a recursive XY-cut over line boxes, after the XY-Cut++ idea (Liu, Li and Wei,
arXiv:2504.10258) as opendataloader-pdf's ``XYCutPlusPlusSorter`` and edgeparse apply it (both
Apache-2.0; the idea is ported here, no code): lines that span the column gap (a title, an
abstract, a figure across both columns) take no part in the column split; they are the edges of
horizontal bands instead. Its steps, for a region (at first the whole page):

1. Project the lines on the x axis and on the y axis. A *vertical gap* is an x range that no
   line covers from the region's top to its bottom (a gutter), at least ``_MIN_GUTTER_EMS``
   wide; a *horizontal gap* is a y range no line covers across the region's width.
2. The widest vertical gap splits the region into columns (read left to right) unless
   - the widest horizontal gap is wider than the gutter and ``_BAND_GAP_EMS`` line heights
     high, with an image across the gutter inside it or different columns above and below it
     (the space under a title block, around a figure across the columns; not a gap two columns
     of text happen to share), or a line height high with the lines above it much narrower
     than those below (author blocks side by side over two columns of text): then it splits
     the region into bands (read top to bottom); or
   - the lines on its two sides are rows of one layout rather than two columns of text: one
     side's lines are short, aligned on one edge, and most have a partner on the same baseline
     on the other side (a form's labels and fields, a table without rules, a table of
     contents; a short right side only beside ragged lines, not beside a justified column
     with notes in its margin): then the region is one run, read row by row.
   A line across the gutter leaves no vertical gap, so the band it sits in is cut off
   first and placed where a reader meets it: above the columns it precedes, below those it
   follows.
3. Recurse into each part. A region that is one row (its lines share a height: a heading's
   number and its title), has no gap of either kind, or lies past ``MAX_DEPTH`` cuts is one run, its
   lines top to bottom; so is a region none of whose bands (between all its horizontal gaps)
   has a vertical gap, since no order of cuts could change its reading. Consecutive bands that
   were never split into columns are joined again into one run, so a single-column page is one
   run and a paragraph is never cut at a gap between its lines.

Margin notes and sidebars have whitespace of their own around them, so they become runs of their
own (never merged into a body line: lines are cut at wide gaps in ``layoutlines``). Vertical CJK
lines (``TextLine.vertical``) are columns read right to left. The work is
O(depth x n log n) for n lines, the depth bounded by ``MAX_DEPTH``.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pdf_airlock.worker.pdf.layoutlines import TextLine

__all__ = ["MAX_DEPTH", "reading_order"]

MAX_DEPTH: Final = 64  # cuts deep; a region past it is read top to bottom
_MIN_GUTTER_EMS: Final = 0.8  # a vertical gap at least this many line heights wide splits columns
_MIN_BAND_GAP: Final = 0.5  # points: a horizontal gap at least this high splits bands
_BAND_GAP_EMS: Final = 1.5  # a horizontal gap this many line heights high may win over a gutter
_NARROWER: Final = 0.7  # lines above a gap this much narrower (median) than below: another band
_NARROW_BAND_GAP_EMS: Final = 1.0  # and the gap at least this many line heights high
_EDGE_SLACK: Final = 3.0  # points: columns whose edges at the gutter agree this well are the same
_ROW_SHARE: Final = 0.6  # of the left side's lines with a partner on the same baseline: rows
_ROW_OVERLAP: Final = 0.5  # of the lower line's height two lines share to be on one baseline
_TEXT_LINE_EMS: Final = 12.0  # left lines this many line heights wide (median) are a column's text
_ALIGNED: Final = 2.0  # points: cells of one column start (or end) within this of each other
_ALIGNED_SHARE: Final = 0.6
_MIN_ROWS: Final = 2
_LINE_NUMBER: Final = re.compile(r"[A-Z]?\d{1,5}[A-Z]?")  # "12", "31S", "S32": a margin's line numbers
_LINE_NUMBER_SHARE: Final = 0.8


@dataclass(frozen=True, slots=True)
class _Gap:
    start: float
    end: float

    @property
    def size(self) -> float:
        return self.end - self.start

    @property
    def middle(self) -> float:
        return (self.start + self.end) / 2


@dataclass(frozen=True, slots=True)
class _Page:
    em: float  # the lines' usual height
    figures: tuple[tuple[float, float, float, float], ...]  # images' boxes: x0, top, x1, bottom


def reading_order(
    lines: Sequence[TextLine], width: float, figures: Sequence[tuple[float, float, float, float]] = ()
) -> list[list[TextLine]]:
    """Lines grouped into runs in reading order (each run read top to bottom). ``width`` is the
    page's, kept for callers; the cuts depend on the lines and the ``figures`` (images' boxes:
    x0, top, x1, bottom) alone."""
    del width
    if not lines:
        return []
    heights = sorted(line.height for line in lines if not line.vertical) or [10.0]
    page = _Page(max(heights[len(heights) // 2], 1.0), tuple(figures))
    return [run for run, _ in _cut(list(lines), page, 0)]


def _top_down(lines: list[TextLine]) -> list[TextLine]:
    return sorted(lines, key=lambda line: (line.top, line.x0))


def _cut(lines: list[TextLine], page: _Page, depth: int) -> list[tuple[list[TextLine], bool]]:
    """The region's runs, each with whether it is a band never split into columns."""
    flat = [(_top_down(lines), True)]
    em = page.em
    one_row = max(line.top for line in lines) < min(line.bottom for line in lines)
    if len(lines) <= 1 or depth >= MAX_DEPTH or one_row:  # a row reads left to right
        return flat
    horizontal = _widest(lines, across=True)
    vertical = _widest(lines, across=False)
    if vertical is not None and vertical.size >= _MIN_GUTTER_EMS * em:
        left = [line for line in lines if line.x1 <= vertical.middle]
        right = [line for line in lines if line.x1 > vertical.middle]
        if horizontal is None or not _band_first(lines, horizontal, vertical, page):
            if _rows(left, right):
                return flat  # rows of cells: read row by row
            if all(line.vertical for line in lines):
                left, right = right, left  # vertical writing: columns right to left
            return _cut(left, page, depth + 1) + _cut(right, page, depth + 1)
    if horizontal is None or horizontal.size < _MIN_BAND_GAP or not _any_columns(lines, em):
        return flat
    above = [line for line in lines if line.bottom <= horizontal.middle]
    below = [line for line in lines if line.bottom > horizontal.middle]
    first, second = _cut(above, page, depth + 1), _cut(below, page, depth + 1)
    if len(first) == len(second) == 1 and first[0][1] and second[0][1]:
        return [(first[0][0] + second[0][0], True)]  # one band still: one run
    return first + second


def _band_first(lines: list[TextLine], horizontal: _Gap, vertical: _Gap, page: _Page) -> bool:
    """Whether the horizontal gap cuts bands before the gutter cuts columns:

    - it is wider than the gutter and ``_BAND_GAP_EMS`` line heights high, and either an image
      spans the gutter inside it (a figure across the columns) or the columns above and below
      it are not the same (their edges at the gutter differ: not a gap two columns of text
      happen to share at one height);
    - or it is a line height high and the lines above it are much narrower than those below
      (author blocks side by side over two columns of text).
    """
    em = page.em
    above = [line for line in lines if line.bottom <= horizontal.middle]
    below = [line for line in lines if line.bottom > horizontal.middle]
    if horizontal.size >= _BAND_GAP_EMS * em and horizontal.size > vertical.size:
        return _figure_across(page, horizontal, vertical) or not _same_columns(above, below, vertical)
    if horizontal.size < _NARROW_BAND_GAP_EMS * em:
        return False
    widths_above = sorted(line.x1 - line.x0 for line in above)
    widths_below = sorted(line.x1 - line.x0 for line in below)
    return widths_above[len(widths_above) // 2] < _NARROWER * widths_below[len(widths_below) // 2]


def _figure_across(page: _Page, horizontal: _Gap, vertical: _Gap) -> bool:
    return any(
        x0 < vertical.start and x1 > vertical.end and top < horizontal.end and bottom > horizontal.start
        for x0, top, x1, bottom in page.figures
    )


def _same_columns(above: list[TextLine], below: list[TextLine], gutter: _Gap) -> bool:
    """Whether both sides of the gutter hold lines above and below, their edges at the gutter
    the same (within ``_EDGE_SLACK``): one pair of columns going on past the gap."""
    edges = []
    for part in (above, below):
        left = [line.x1 for line in part if line.x1 <= gutter.middle]
        right = [line.x0 for line in part if line.x1 > gutter.middle]
        if not left or not right:
            return False
        edges.append((max(left), min(right)))
    (left_a, right_a), (left_b, right_b) = edges
    return abs(left_a - left_b) <= _EDGE_SLACK and abs(right_a - right_b) <= _EDGE_SLACK


def _any_columns(lines: list[TextLine], em: float) -> bool:
    """Whether any band between the region's horizontal gaps has a vertical gap (if none has,
    the region reads top to bottom whatever the order of the cuts: no need to make them)."""
    band: list[TextLine] = []
    reach = -1.0
    for line in sorted(lines, key=lambda line: line.top):
        if band and line.top > reach:
            gap = _widest(band, across=False)
            if gap is not None and gap.size >= _MIN_GUTTER_EMS * em:
                return True
            band = []
        band.append(line)
        reach = max(reach, line.bottom) if len(band) > 1 else line.bottom
    gap = _widest(band, across=False)
    return gap is not None and gap.size >= _MIN_GUTTER_EMS * em


def _widest(lines: list[TextLine], *, across: bool) -> _Gap | None:
    """The widest gap in the lines' projection on the y axis (``across``: a horizontal gap) or
    the x axis (a vertical gap), None without one."""
    spans = sorted((line.top, line.bottom) if across else (line.x0, line.x1) for line in lines)
    best: _Gap | None = None
    reach = spans[0][1]
    for start, end in spans[1:]:
        if start > reach and (best is None or start - reach > best.size):
            best = _Gap(reach, start)
        reach = max(reach, end)
    return best


def _rows(left: list[TextLine], right: list[TextLine]) -> bool:
    """Whether the two sides of a vertical gap are the cells of rows rather than two columns:
    one side's lines are short (no column's lines of text), aligned on one edge (a table's or a
    form's column; not centred blocks side by side) and mostly share a baseline with a line of
    the other side; and when that side is the right one, the left lines are ragged (a table's
    cells of text, not a justified column with notes in its margin). Page numbers on the right,
    each beside a line, are rows whatever their number (a table of contents)."""
    page_numbers = all(_LINE_NUMBER.fullmatch(line.text) for line in right)  # a table of contents
    if page_numbers and left and _partnered(right, left):
        return True
    if len(left) < _MIN_ROWS or len(right) < _MIN_ROWS:
        return False
    if _cells(left) and _partnered(left, right):
        return True
    if not _cells(right, numbers=True) or not _partnered(right, left):
        return False
    return not _aligned([line.x1 for line in left])


def _cells(lines: list[TextLine], *, numbers: bool = False) -> bool:
    """Short lines aligned on one edge; on the left, not all bare numbers (a margin's line
    numbers beside the text they count are a column of their own), while ``numbers`` on the
    right are cells (a table of contents' page numbers)."""
    counted = sum(1 for line in lines if _LINE_NUMBER.fullmatch(line.text))
    if not numbers and counted >= _LINE_NUMBER_SHARE * len(lines):
        return False
    widths = sorted(line.x1 - line.x0 for line in lines)
    heights = sorted(line.height for line in lines)
    if widths[len(widths) // 2] >= _TEXT_LINE_EMS * heights[len(heights) // 2]:
        return False
    return _aligned([line.x0 for line in lines]) or _aligned([line.x1 for line in lines])


def _partnered(lines: list[TextLine], others: list[TextLine]) -> bool:
    """Whether most of ``lines`` share a baseline with one of ``others``."""
    by_top = sorted(others, key=lambda line: line.top)
    tops = [line.top for line in by_top]
    tallest = max(line.height for line in others)
    partnered = 0
    for line in lines:
        start = bisect.bisect_left(tops, line.top - tallest)
        for other in by_top[start : bisect.bisect_left(tops, line.bottom)]:
            shared = min(line.bottom, other.bottom) - max(line.top, other.top)
            if shared >= _ROW_OVERLAP * min(line.height, other.height):
                partnered += 1
                break
    return partnered >= _ROW_SHARE * len(lines)


def _aligned(edges: list[float]) -> bool:
    """Whether most of the edges are within ``_ALIGNED`` of the most common one."""
    ordered = sorted(edges)
    best = 0
    start = 0
    for end, value in enumerate(ordered):
        while value - ordered[start] > _ALIGNED:
            start += 1
        best = max(best, end - start + 1)
    return best >= _ALIGNED_SHARE * len(edges)
