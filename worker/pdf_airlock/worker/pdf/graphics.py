"""The rules and shaded rectangles of a page, from PDFium's path objects.

Input: one page of an untrusted document, loaded by PDFium. Tables are drawn with straight
lines (strokes, or rectangles so thin they are lines) and with filled rectangles behind rows or
cells. This module reads the page's path objects (and those inside form XObjects, with their
matrices) and keeps the axis-aligned ones: ``Rule`` for a line, ``Fill`` for a shaded,
non-white rectangle. Curves and slanted segments are not table rules: only where they are is
kept (a drawing's labels are not a table).

The work is bounded: at most ``MAX_GRAPHIC_OBJECTS`` objects and path segments are examined per
page; a page with more gets the typed ``complexity_limit`` error rather than minutes of work
(a page of a million rules is a known way to stall table finders).
"""

from __future__ import annotations

import ctypes
import itertools
from dataclasses import dataclass, field
from typing import Any, Final

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.layoutlines import page_turn
from pdf_airlock.worker.pdf.pdfium_calls import Matrix, compose

__all__ = ["MAX_GRAPHIC_OBJECTS", "Fill", "PageGraphics", "Rule", "page_graphics"]

MAX_GRAPHIC_OBJECTS: Final = 50_000  # objects plus path segments examined on one page
MAX_FORM_DEPTH: Final = 4
_THIN: Final = 2.0  # a rectangle this thin (points) is a line
_AXIS_TOLERANCE: Final = 0.5  # how far a segment may slant and still be a horizontal/vertical rule
_MIN_RULE: Final = 2.0  # shorter segments are ticks and dots, not rules
_WHITE: Final = 240  # a fill whose red, green and blue all reach this is the paper's colour
_PAGE_SHARE: Final = 0.9  # a fill over this share of the page's width and height is a background

_Matrix = Matrix
_IDENTITY: Final[_Matrix] = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


@dataclass(frozen=True, slots=True)
class Rule:
    """A horizontal or vertical line, in points from the page's top-left corner."""

    x0: float
    top: float
    x1: float
    bottom: float

    @property
    def horizontal(self) -> bool:
        return self.x1 - self.x0 >= self.bottom - self.top


@dataclass(frozen=True, slots=True)
class Fill:
    """A filled, non-white rectangle (a shaded row or cell), in points from the top-left."""

    x0: float
    top: float
    x1: float
    bottom: float


@dataclass(slots=True)
class PageGraphics:
    """Rules, fills, and ``marks``: where curves and slanted lines are (points from the top-left),
    the strokes of drawings and plots rather than of tables."""

    rules: list[Rule] = field(default_factory=list)
    fills: list[Fill] = field(default_factory=list)
    marks: list[tuple[float, float]] = field(default_factory=list)


class _Reader:
    """Walks a page's objects and gathers its rules and fills."""

    def __init__(self, width: float, height: float, turn: Any = None) -> None:
        import pypdfium2.raw as pdfium_c

        self.c = pdfium_c
        self.width = width
        self.height = height
        self.turn = turn
        self.examined = 0
        self.found = PageGraphics()
        self.matrix = pdfium_c.FS_MATRIX()
        self.px = ctypes.c_float()
        self.py = ctypes.c_float()
        self.fill_mode = ctypes.c_int()
        self.stroke = ctypes.c_int()
        self.rgba = tuple(ctypes.c_uint() for _ in range(4))

    def _count(self, more: int) -> None:
        self.examined += more
        if self.examined > MAX_GRAPHIC_OBJECTS:
            raise WorkerError(
                "complexity_limit",
                f"a page has more than {MAX_GRAPHIC_OBJECTS} graphic objects for the table finder "
                "(select the other pages with `pages`)",
                {"limit": MAX_GRAPHIC_OBJECTS},
            )

    def _own_matrix(self, obj: Any) -> _Matrix:
        if not self.c.FPDFPageObj_GetMatrix(obj, self.matrix):
            return _IDENTITY
        m = self.matrix
        return (m.a, m.b, m.c, m.d, m.e, m.f)

    def objects(self, objects: list[Any], outer: _Matrix, depth: int) -> None:
        """The objects' rules and fills (the caller has counted the objects)."""
        for obj in objects:
            kind = self.c.FPDFPageObj_GetType(obj)
            if kind == self.c.FPDF_PAGEOBJ_PATH:
                self._path(obj, compose(self._own_matrix(obj), outer))
            elif kind == self.c.FPDF_PAGEOBJ_FORM and depth < MAX_FORM_DEPTH:
                count = max(int(self.c.FPDFFormObj_CountObjects(obj)), 0)
                self._count(count)
                inner = [self.c.FPDFFormObj_GetObject(obj, i) for i in range(count)]
                self.objects(inner, compose(self._own_matrix(obj), outer), depth + 1)

    def _path(self, obj: Any, matrix: _Matrix) -> None:
        c = self.c
        if not c.FPDFPath_GetDrawMode(obj, self.fill_mode, self.stroke):
            return
        stroked, filled = bool(self.stroke.value), self.fill_mode.value != 0
        if not stroked and not filled:
            return  # a clipping path, or one drawn invisibly
        count = max(int(c.FPDFPath_CountSegments(obj)), 0)
        self._count(count)
        subpath: list[tuple[float, float]] = []
        for index in range(count):
            segment = c.FPDFPath_GetPathSegment(obj, index)
            kind = c.FPDFPathSegment_GetType(segment)
            if not c.FPDFPathSegment_GetPoint(segment, self.px, self.py):
                continue
            point = self._page_point(self.px.value, self.py.value, matrix)
            if kind == c.FPDF_SEGMENT_MOVETO:
                self._subpath(subpath, stroked, filled, obj)
                subpath = [point]
            elif kind == c.FPDF_SEGMENT_LINETO:
                subpath.append(point)
            else:  # a curve: this subpath is no rule or rectangle, but a drawing's
                self.found.marks.append(point)
                subpath = []
            if c.FPDFPathSegment_GetClose(segment) and subpath:
                subpath.append(subpath[0])
        self._subpath(subpath, stroked, filled, obj)

    def _page_point(self, x: float, y: float, m: _Matrix) -> tuple[float, float]:
        px = m[0] * x + m[2] * y + m[4]
        py = m[1] * x + m[3] * y + m[5]
        if self.turn is not None:
            px, py = self.turn.point(px, py)
        return px, self.height - py

    def _subpath(self, points: list[tuple[float, float]], stroked: bool, filled: bool, obj: Any) -> None:
        if len(points) < 2:
            return
        xs = [x for x, _ in points]
        ys = [y for _, y in points]
        x0, x1, top, bottom = min(xs), max(xs), min(ys), max(ys)
        axis_aligned = all(
            abs(a[0] - b[0]) <= _AXIS_TOLERANCE or abs(a[1] - b[1]) <= _AXIS_TOLERANCE
            for a, b in itertools.pairwise(points)
        )
        if not axis_aligned:  # a slanted line or shape: a drawing's (arrows, plots)
            self.found.marks.append(((x0 + x1) / 2, (top + bottom) / 2))
            return
        thin = min(x1 - x0, bottom - top) <= _THIN
        if thin and max(x1 - x0, bottom - top) >= _MIN_RULE and (stroked or self._dark(obj)):
            self._rule(x0, top, x1, bottom)
            return
        if stroked:
            for a, b in itertools.pairwise(points):
                self._rule(min(a[0], b[0]), min(a[1], b[1]), max(a[0], b[0]), max(a[1], b[1]))
        closed = len(points) >= 4
        background = x1 - x0 >= _PAGE_SHARE * self.width and bottom - top >= _PAGE_SHARE * self.height
        if filled and closed and not thin and not background and self._dark(obj):
            self.found.fills.append(Fill(x0, top, x1, bottom))

    def _rule(self, x0: float, top: float, x1: float, bottom: float) -> None:
        if max(x1 - x0, bottom - top) >= _MIN_RULE:
            self.found.rules.append(Rule(x0, top, x1, bottom))

    def _dark(self, obj: Any) -> bool:
        """Whether the object's fill shows on white paper (not white, not transparent)."""
        r, g, b, a = self.rgba
        if not self.c.FPDFPageObj_GetFillColor(obj, r, g, b, a):
            return True
        return a.value > 0 and min(r.value, g.value, b.value) < _WHITE


def page_graphics(page: Any) -> PageGraphics:
    """The rules and fills of one PDFium page (``complexity_limit`` past the bound)."""
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    reader = _Reader(width, height, page_turn(page))
    count = max(int(pdfium_c.FPDFPage_CountObjects(page.raw)), 0)
    reader._count(count)  # before a million objects are listed
    objects = [pdfium_c.FPDFPage_GetObject(page.raw, index) for index in range(count)]
    reader.objects(objects, _IDENTITY, 0)
    return reader.found
