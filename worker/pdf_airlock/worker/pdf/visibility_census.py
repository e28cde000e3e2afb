"""The visibility stage's first step: what each text object of a page is drawn with, and the
cheap proofs that most of them show.

Input: one page of an untrusted document, loaded by PDFium; nothing about its objects is assumed.
The page's objects are walked once in drawing order (form XObjects flattened, with their
matrices, clips, transparency and optional content carried down to what they draw), at most
``MAX_OBJECTS`` of them, and its annotations are listed (a viewer draws them over the page).

A text object is **shown** without further work when every one of these holds: it is filled
(render mode 0, 2, 4 or 6) in an opaque dark colour, with no transparency (alpha, soft mask,
blend mode) on it or on a form around it; no clip path that might cut it (none, or rectangles
that hold its box); no optional content mark on it or a form around it (and it is not inside a
form XObject when the document may give forms an ``/OC`` entry); its type is large enough to
read (``MIN_LEGIBLE_PT``); its box is inside the crop box; nothing is drawn over it later (a
filled path, a stroke at least ``COVER_STROKE_PT`` wide, an image, a shading, an annotation, or
a text object that is itself in doubt over half of it); and nothing but paper-like fills and
strokes lies beneath it. Otherwise it carries the facts that put it in doubt (``DOUBT`` flags),
and ``visibility_pixels`` decides its characters from renders of its region. A page with more
objects than the bound, or forms nested deeper than ``MAX_FORM_DEPTH``, is judged by renders
alone.

The walk is the stage's cost on every page with text: a handful of PDFium calls per object
through ``pdfium_calls``, and per-object facts kept as columns and bit flags.
"""

from __future__ import annotations

import ctypes
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any, Final, cast

import pypdfium2.raw as pdfium_c

from pdf_airlock.worker.pdf.pdfium_calls import F, Matrix, address, compose

__all__ = [
    "BENEATH",
    "CLIPPED",
    "COVERED",
    "COVERED_BY_IMAGE",
    "COVER_STROKE_PT",
    "DOUBT",
    "FORM_MAY_HIDE",
    "INVISIBLE",
    "MAX_OBJECTS",
    "MIN_LEGIBLE_PT",
    "NOT_DARK",
    "OPTIONAL",
    "OUTSIDE",
    "SMALL",
    "STROKED",
    "TRANSPARENT",
    "Box",
    "Census",
    "TextObject",
    "take_census",
]

MAX_OBJECTS: Final = 20_000  # page objects (forms' contents included) walked on one page
MAX_FORM_DEPTH: Final = 8
MAX_ANNOTATIONS: Final = 500
MIN_LEGIBLE_PT: Final = 2.0  # an em below this (in points on the page) is too small to read
DARK_MAX: Final = 110  # a paint whose luminance (0-255) is at most this shows on white paper
LIGHT_MIN: Final = 235  # a fill at least this light is paper: dark text on it shows
COVER_STROKE_PT: Final = 3.0  # a stroke this wide over text may hide it; thinner ones rule or underline
PROOF_CONTRAST: Final = 96  # of 255 in some channel: text of this contrast with the fill under it shows
_INSIDE_SLACK: Final = 0.5  # points a box may stick out of a clip or the crop box and be inside
_CLIP_SLACK_SHARE: Final = 0.3
_TEXT_COVER_SHARE: Final = 0.5  # a doubtful text object over this share of another's box covers it
_LARGE_IMAGE_SHARE: Final = 0.5  # of the page: an image this large laid over text is a scan
_THIN_PT: Final = 4.0  # a text object this thin (or thinner) has its em measured exactly
_GRID: Final = 36.0  # points: the cells of the index of text objects
_FAR: Final = 1e7  # points: a box reaching this far is looked at with every text object
_FAR_CELLS: Final = (0, 0, 1 << 20, 1 << 20)  # more cells than any page has texts
_SCAN_PAIRS: Final = 4096  # text x other pairs checked one by one without the grid
_ANNOT_HIDDEN_FLAGS: Final = 2 | 32  # Hidden, NoView
_LINK: Final = 2  # FPDF_ANNOT_LINK
_OC_MARK: Final = "OC"
_MARK_NAME_UNITS: Final = 16
_TEXT: Final = pdfium_c.FPDF_PAGEOBJ_TEXT
_PATH: Final = pdfium_c.FPDF_PAGEOBJ_PATH
_IMAGE: Final = pdfium_c.FPDF_PAGEOBJ_IMAGE
_FORM: Final = pdfium_c.FPDF_PAGEOBJ_FORM
_ANNOTATION: Final = -1
_LINETO: Final = pdfium_c.FPDF_SEGMENT_LINETO

# What puts a text object in doubt, as bit flags.
INVISIBLE: Final = 1 << 0  # render mode 3 or 7
STROKED: Final = 1 << 1  # render mode 1 or 5: outlines only
NOT_DARK: Final = 1 << 2  # its paint is not opaque and dark
TRANSPARENT: Final = 1 << 3  # alpha, soft mask or blend mode on it or a form around it
CLIPPED: Final = 1 << 4  # a clip that may cut it
OPTIONAL: Final = 1 << 5  # an optional content mark on it or a form around it
FORM_MAY_HIDE: Final = 1 << 6  # inside a form XObject that may carry optional content
COVERED: Final = 1 << 7  # something drawn after it overlaps it
BENEATH: Final = 1 << 8  # something not paper-like lies under it
COVERED_BY_IMAGE: Final = 1 << 9  # a large image is laid over it (a scan over its text layer)
OUTSIDE: Final = 1 << 10  # its box is not all inside the crop box
SMALL: Final = 1 << 11  # its em is under MIN_LEGIBLE_PT
DRAWN_IN_DOUBT: Final = INVISIBLE | STROKED | NOT_DARK | TRANSPARENT | CLIPPED | OPTIONAL | FORM_MAY_HIDE
DOUBT: Final = DRAWN_IN_DOUBT | COVERED | BENEATH  # decided from pixels
_ALPHA_OR_STROKE: Final = STROKED | INVISIBLE | TRANSPARENT
_BLACK: Final = (0, 0, 0, 255)
_OPAQUE_BLACK: Final = bytes((ctypes.c_uint * 4)(0, 0, 0, 255))  # one object's paint, as PDFium writes it
_STROKED_MODES: Final = frozenset({1, 5})
_INVISIBLE_MODES: Final = frozenset({3, 7})

Box = tuple[float, float, float, float]  # left, bottom, right, top in page space (points)
_Matrix = Matrix
_IDENTITY: Final[_Matrix] = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)


@dataclass(slots=True)
class TextObject:
    """One text object in doubt: its handle, place in drawing order, box and what may hide it."""

    handle: int
    order: int
    box: Box
    mode: int
    paint: tuple[int, int, int, int]  # the colour its glyphs show in (fill, or stroke when stroked only)
    em: float  # its font size on the page in points (inf: not measured, the object is not thin)
    flags: int

    @property
    def invisible(self) -> bool:
        """Drawn so that it paints nothing: render mode 3 or 7, or a paint of alpha 0 (like an
        invisible text layer, it is kept only over ink that shows where its glyphs are)."""
        return bool(self.flags & INVISIBLE) or self.paint[3] == 0

    @property
    def doubtful(self) -> bool:
        return bool(self.flags & DOUBT)


@dataclass(slots=True)
class Census:
    """The page's text objects as columns (handle, order, box, flags; mode, paint and em where
    they matter), its crop box, and whether every object was walked."""

    crop: Box
    page_area: float
    handles: list[int] = field(default_factory=list)
    orders: list[int] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)
    flags: list[int] = field(default_factory=list)
    modes: dict[int, int] = field(default_factory=dict)  # by position, where not 0
    paints: dict[int, tuple[int, int, int, int]] = field(default_factory=dict)  # where not opaque black
    ems: dict[int, float] = field(default_factory=dict)  # where measured
    complete: bool = True
    _objects: dict[int, TextObject] = field(default_factory=dict)
    _positions: dict[int, int] | None = None

    def any_doubt(self) -> bool:
        return not self.complete or any(self.flags)

    def text_object(self, handle: int) -> TextObject | None:
        """The text object with this handle, or None when the walk did not reach it."""
        if self._positions is None:
            self._positions = {h: n for n, h in enumerate(self.handles)}
        position = self._positions.get(handle)
        if position is None:
            return None
        found = self._objects.get(position)
        if found is None:
            found = TextObject(
                handle,
                self.orders[position],
                self.boxes[position],
                self.modes.get(position, 0),
                self.paints.get(position, (0, 0, 0, 255)),
                self.ems.get(position, math.inf),
                self.flags[position],
            )
            self._objects[position] = found
        return found


def _transform_box(m: _Matrix, box: Box) -> Box:
    if m is _IDENTITY:
        return box
    xs, ys = [], []
    for x, y in ((box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])):
        xs.append(m[0] * x + m[2] * y + m[4])
        ys.append(m[1] * x + m[3] * y + m[5])
    return min(xs), min(ys), max(xs), max(ys)


def _inside(inner: Box, outer: Box, slack: float = _INSIDE_SLACK) -> bool:
    s = slack
    return (
        inner[0] >= outer[0] - s
        and inner[1] >= outer[1] - s
        and inner[2] <= outer[2] + s
        and inner[3] <= outer[3] + s
    )


def _clip_slack(box: Box) -> float:
    """How far a text object's box may stick out of a clip and its text still read: its glyphs'
    descenders and ascenders (``_CLIP_SLACK_SHARE`` of its thickness)."""
    return max(_INSIDE_SLACK, _CLIP_SLACK_SHARE * min(box[2] - box[0], box[3] - box[1]))


def _intersect(a: Box, b: Box) -> Box:
    return max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])


@dataclass(slots=True)
class _Other:
    """An object that is not text (path, image, shading), or an annotation, in drawing order."""

    handle: int
    order: int
    box: Box
    kind: int
    cover: bool | None = None  # may hide text drawn before it (asked of PDFium when it meets text)
    dark: bool | None = None  # not paper-like under text drawn after it
    fill: tuple[int, int, int] | None = None  # an opaque solid fill's colour
    rect: bool | None = None  # that fill is one upright rectangle (asked only under light text)


@dataclass(frozen=True, slots=True)
class _Context:
    """What the forms around an object give it: their matrix (to page space), the rectangle
    they clip it to (None: none known), and flags (a clip of unknown shape, transparency,
    optional content)."""

    matrix: _Matrix = _IDENTITY
    clip: Box | None = None
    flags: int = 0


_PAGE: Final = _Context()


def _addresses(array: Any, count: int, size: int, offset: int = 0) -> range:
    """The address of each of ``count`` items of ``size`` bytes in a ctypes array, plus
    ``offset``: what a PDFium call in a ``map`` writes each object's answer to."""
    base = ctypes.addressof(array) + offset
    return range(base, base + count * size, size)


class _Walker:
    """Walks a page's objects once, in drawing order, into a census. The objects are listed
    first (form XObjects flattened), then each question is asked of all text objects at once
    (``map`` over their handles and over the addresses of ctypes arrays the answers go to), so
    the common case costs the PDFium calls and little else; the rare objects (turned, clipped,
    marked, thin, stroked, in a form) are then looked at one by one."""

    def __init__(self, census: Census, forms_may_hide: Callable[[], bool]) -> None:
        self.census = census
        self.forms_may_hide = forms_may_hide
        self.handles: list[int] = []
        self.kinds: list[int] = []
        self.contexts: list[_Context] = []
        self.has_forms = False
        self.others: list[_Other] = []
        self.rgba = (ctypes.c_uint * 4)()
        self.rgba_refs = tuple(ctypes.byref(self.rgba, 4 * i) for i in range(4))
        self.size = ctypes.c_float()
        self.matrix = (ctypes.c_float * 6)()
        self.point = (ctypes.c_float(), ctypes.c_float())
        self.clips: dict[tuple[int, int], Box | None] = {}
        self.mark_name = (ctypes.c_ushort * _MARK_NAME_UNITS)()
        self.mark_length = ctypes.c_ulong()

    def flatten(self, handles: list[int], context: _Context, depth: int) -> None:
        """The objects in drawing order, each with the context of the forms around it (a form
        takes a place in the order too)."""
        kinds = list(map(F.FPDFPageObj_GetType, handles))
        start = 0
        for end in [n for n, kind in enumerate(kinds) if kind == _FORM]:
            self._extend(handles[start : end + 1], kinds[start : end + 1], context)
            self.has_forms = True
            self._form(handles[end], context, depth)  # its objects follow it in drawing order
            start = end + 1
        self._extend(handles[start:], kinds[start:], context)

    def _extend(self, handles: list[int], kinds: list[int], context: _Context) -> None:
        room = MAX_OBJECTS - len(self.handles)
        if len(handles) > room:
            self.census.complete = False
            handles, kinds = handles[:room], kinds[:room]
        self.has_forms = self.has_forms or context is not _PAGE
        self.handles += handles
        self.kinds += kinds
        self.contexts += [context] * len(handles)

    def _form(self, handle: int, context: _Context, depth: int) -> None:
        if depth >= MAX_FORM_DEPTH or len(self.handles) >= MAX_OBJECTS:
            self.census.complete = False
            return
        clip, flags = context.clip, context.flags
        own = self._clip_rect_of(handle, context.matrix)
        if isinstance(own, tuple):
            clip = own if clip is None else _intersect(clip, own)
        elif own is False:
            flags |= CLIPPED
        if F.FPDFPageObj_HasTransparency(handle):
            flags |= TRANSPARENT
        if F.FPDFPageObj_CountMarks(handle) and self._optional(handle):
            flags |= OPTIONAL
        if self.forms_may_hide():
            flags |= FORM_MAY_HIDE
        inner = _Context(compose(self._matrix(handle), context.matrix), clip, flags)
        count = min(max(int(F.FPDFFormObj_CountObjects(handle)), 0), MAX_OBJECTS)
        self.flatten(
            [F.FPDFFormObj_GetObject(handle, index) or 0 for index in range(count)], inner, depth + 1
        )

    def texts(self) -> None:
        """Every text object's box and flags, into the census's columns."""
        positions = [n for n, kind in enumerate(self.kinds) if kind == _TEXT]
        handles = [self.handles[n] for n in positions]
        count = len(handles)
        if not count:
            return
        contexts = [self.contexts[n] for n in positions]
        quads = (ctypes.c_float * (8 * count))()
        bounded = list(map(F.FPDFPageObj_GetRotatedBounds, handles, _addresses(quads, count, 32)))
        q = cast(list[float], memoryview(quads).cast("B").cast("f").tolist())
        upright = q[1::8] == q[3::8] and q[2::8] == q[4::8]
        if upright:  # corners 1 and 3 make each box, in either order (a matrix that flips, like
            # a Type 3 font's /FontMatrix [1 0 0 -1 0 0], puts corner 1 on top)
            boxes = list(zip(q[0::8], q[1::8], q[4::8], q[5::8], strict=True))
            for number in [n for n, box in enumerate(boxes) if box[2] < box[0] or box[3] < box[1]]:
                boxes[number] = _quad_box(q[8 * number : 8 * number + 8])
        else:
            boxes = [_quad_box(q[8 * n : 8 * n + 8]) for n in range(count)]
        flags = [context.flags for context in contexts] if self.has_forms else [0] * count
        for number in (
            [n for n, context in enumerate(contexts) if context is not _PAGE] if self.has_forms else []
        ):
            flags[number] |= self._in_form(number, q, boxes, contexts[number])
        self._drawing(handles, flags)
        clips = list(map(F.FPDFClipPath_CountPaths, map(F.FPDFPageObj_GetClipPath, handles)))
        clipped = [n for n, paths in enumerate(clips) if paths >= 0]
        if clipped:
            self._clips(clipped, [handles[n] for n in clipped], boxes, [contexts[n] for n in clipped], flags)
        for number in [n for n, found in enumerate(map(F.FPDFPageObj_CountMarks, handles)) if found]:
            flags[number] |= OPTIONAL if self._optional(handles[number]) else 0
        if upright:  # the box's height is each object's thickness
            thin = [n for n, box in enumerate(boxes) if box[3] - box[1] < _THIN_PT]
        else:
            thin = [n for n in range(count) if _thickness(tuple(q[8 * n : 8 * n + 8])) < _THIN_PT]
        for number in thin:
            flags[number] |= self._small(number, handles[number], contexts[number])
        self._keep([n for n in range(count) if bounded[n]], positions, handles, boxes, flags)

    def _drawing(self, handles: list[int], flags: list[int]) -> None:
        """The flags of how each object is drawn: its render mode, its paint, transparency."""
        count = len(handles)
        rgba = (ctypes.c_uint * (4 * count))()
        list(
            map(F.FPDFPageObj_GetFillColor, handles, *(_addresses(rgba, count, 16, i) for i in (0, 4, 8, 12)))
        )
        paints = memoryview(rgba).cast("B").cast("I").tolist()
        modes = list(map(F.FPDFTextObj_GetTextRenderMode, handles))
        for number in [n for n, mode in enumerate(modes) if mode]:
            flags[number] |= self._mode(number, modes[number], handles[number], paints)
        if bytes(rgba) != _OPAQUE_BLACK * count or not _STROKED_MODES.isdisjoint(modes):
            stroked = {n for n, mode in enumerate(modes) if mode in _STROKED_MODES}
            for number in range(count):
                red, green, blue, alpha = paints[4 * number : 4 * number + 4]
                if red or green or blue or alpha != 255 or number in stroked:
                    flags[number] |= self._paint(number, paints)
        for number in [n for n, found in enumerate(map(F.FPDFPageObj_HasTransparency, handles)) if found]:
            flags[number] |= TRANSPARENT

    def _keep(
        self, keep: list[int], positions: list[int], handles: list[int], boxes: list[Box], flags: list[int]
    ) -> None:
        """The objects with bounds, into the census (PDFium's text page leaves the others out
        too); the tables kept by position follow."""
        census = self.census
        census.handles = [handles[n] for n in keep]
        census.boxes = [boxes[n] for n in keep]
        census.flags = [flags[n] for n in keep]
        census.orders = [positions[n] + 1 for n in keep]
        if len(keep) < len(handles):
            moved = {old: new for new, old in enumerate(keep)}
            census.modes = {moved[old]: value for old, value in census.modes.items() if old in moved}
            census.paints = {moved[old]: value for old, value in census.paints.items() if old in moved}
            census.ems = {moved[old]: value for old, value in census.ems.items() if old in moved}

    def _in_form(self, number: int, q: list[float], boxes: list[Box], context: _Context) -> int:
        """An object inside forms: its box on the page, and whether their clip may cut it."""
        corners = _corners(q[8 * number : 8 * number + 8], context.matrix)
        xs, ys = corners[0::2], corners[1::2]
        boxes[number] = box = (min(xs), min(ys), max(xs), max(ys))
        q[8 * number : 8 * number + 8] = corners
        clip = context.clip
        return CLIPPED if clip is not None and not _inside(box, clip, _clip_slack(box)) else 0

    def _mode(self, number: int, mode: int, handle: int, paints: list[int]) -> int:
        self.census.modes[number] = mode
        if mode in _STROKED_MODES and F.FPDFPageObj_GetStrokeColor(handle, *self.rgba_refs):
            paints[4 * number : 4 * number + 4] = list(self.rgba)
        return INVISIBLE if mode in _INVISIBLE_MODES else STROKED if mode in _STROKED_MODES else 0

    def _paint(self, number: int, paints: list[int]) -> int:
        red, green, blue, alpha = paints[4 * number : 4 * number + 4]
        self.census.paints[number] = (red, green, blue, alpha)
        dark = alpha == 255 and 0.299 * red + 0.587 * green + 0.114 * blue <= DARK_MAX
        return 0 if dark else NOT_DARK

    def _small(self, number: int, handle: int, context: _Context) -> int:
        """The em of a thin object."""
        em = self._em(handle, context.matrix)
        self.census.ems[number] = em
        return SMALL if em < MIN_LEGIBLE_PT else 0

    def others_of(self) -> None:
        """The objects that are not text and may hide text or lie under it: images, shadings,
        filled paths, thick strokes (thin strokes, a rule or an underline, do neither)."""
        positions = [n for n, kind in enumerate(self.kinds) if kind not in (_TEXT, _FORM)]
        paths = [n for n in positions if self.kinds[n] == _PATH]
        drop: set[int] = set()
        if paths:
            handles = [self.handles[n] for n in paths]
            fills, strokes = (ctypes.c_int * len(paths))(), (ctypes.c_int * len(paths))()
            list(
                map(
                    F.FPDFPath_GetDrawMode,
                    handles,
                    _addresses(fills, len(paths), 4),
                    _addresses(strokes, len(paths), 4),
                )
            )
            outlines = [n for n, fill in enumerate(fills) if not fill]
            widths = (ctypes.c_float * len(outlines))()
            got = list(
                map(
                    F.FPDFPageObj_GetStrokeWidth,
                    [handles[n] for n in outlines],
                    _addresses(widths, len(outlines), 4),
                )
            )
            drop = {
                paths[n]
                for n, found, width in zip(outlines, got, widths, strict=True)
                if not strokes[n] or (found and width < COVER_STROKE_PT)
            }
        kept = [n for n in positions if n not in drop]
        floats = (ctypes.c_float * (4 * len(kept)))()
        corners = [_addresses(floats, len(kept), 16, offset) for offset in (0, 4, 8, 12)]
        bounded = list(map(F.FPDFPageObj_GetBounds, [self.handles[n] for n in kept], *corners))
        values = list(floats)
        for number, position in enumerate(kept):
            if bounded[number]:
                box = (
                    values[4 * number],
                    values[4 * number + 1],
                    values[4 * number + 2],
                    values[4 * number + 3],
                )
                box = _transform_box(self.contexts[position].matrix, box)
                self.others.append(_Other(self.handles[position], position + 1, box, self.kinds[position]))

    def _matrix(self, handle: int) -> _Matrix:
        m = self.matrix
        if not F.FPDFPageObj_GetMatrix(handle, m):
            return _IDENTITY
        return (m[0], m[1], m[2], m[3], m[4], m[5])

    def _em(self, handle: int, matrix: _Matrix) -> float:
        """The font size on the page: the size times the text matrix's scale, times the scale of
        the forms around it."""
        if not F.FPDFTextObj_GetFontSize(handle, ctypes.byref(self.size)):
            return math.inf
        a, b, c, d, _, _ = compose(self._matrix(handle), matrix)
        return abs(self.size.value) * math.sqrt(abs(a * d - b * c))

    def _optional(self, handle: int) -> bool:
        count = int(F.FPDFPageObj_CountMarks(handle))
        for index in range(max(count, 0)):
            mark = F.FPDFPageObj_GetMark(handle, index)
            name, length = self.mark_name, self.mark_length
            if mark and F.FPDFPageObjMark_GetName(mark, name, ctypes.sizeof(name), ctypes.byref(length)):
                units = max(int(length.value) // 2 - 1, 0)  # a NUL ends the name
                if "".join(map(chr, name[:units])) == _OC_MARK:
                    return True
        return False

    def _clips(
        self,
        numbers: list[int],
        handles: list[int],
        boxes: list[Box],
        contexts: list[_Context],
        flags: list[int],
    ) -> None:
        """Flags the objects (``numbers``, with their ``handles`` and ``contexts``) whose own clip
        may cut them. Objects drawn under one clip share its path: its rectangle is worked out
        once per context."""
        clips = list(map(F.FPDFPageObj_GetClipPath, handles))
        firsts = list(map(F.FPDFClipPath_GetPathSegment, clips, repeat(0), repeat(0)))
        counts = list(map(F.FPDFClipPath_CountPaths, clips))
        rects: dict[tuple[int, int, int], Box | None] = {}
        share = _CLIP_SLACK_SHARE
        for number, clip, first, paths, context in zip(numbers, clips, firsts, counts, contexts, strict=True):
            key = (first or 0, paths, id(context))
            if key not in rects:
                rects[key] = self._clip_rect(clip, context.matrix)
            rect = rects[key]
            x0, y0, x1, y1 = boxes[number]
            slack = max(_INSIDE_SLACK, share * min(x1 - x0, y1 - y0))
            if rect is None or not (
                x0 >= rect[0] - slack
                and y0 >= rect[1] - slack
                and x1 <= rect[2] + slack
                and y1 <= rect[3] + slack
            ):
                flags[number] |= CLIPPED

    def _clipped(self, clip: int, matrix: _Matrix, box: Box) -> int:
        rect = self._clip_rect(clip, matrix)
        return CLIPPED if rect is None or not _inside(box, rect, _clip_slack(box)) else 0

    def _clip_rect_of(self, handle: int, matrix: _Matrix) -> Box | bool | None:
        """An object's own clip: None when it has none, the rectangle (page space) when it is
        rectangles only, False when it is of another shape (or clips by text)."""
        clip = F.FPDFPageObj_GetClipPath(handle)
        if not clip or F.FPDFClipPath_CountPaths(clip) < 0:
            return None
        rect = self._clip_rect(clip, matrix)
        return False if rect is None else rect

    def _clip_rect(self, clip: int, matrix: _Matrix) -> Box | None:
        """The rectangle (page space) a clip path of rectangles makes; None for another shape."""
        paths = int(F.FPDFClipPath_CountPaths(clip))
        if paths <= 0:
            return None  # text used as a clip: no shape PDFium tells
        key = (F.FPDFClipPath_GetPathSegment(clip, 0, 0) or 0, paths)
        if key not in self.clips:  # objects drawn under one clip share its path
            self.clips[key] = self._rectangles(clip, paths)
        rect = self.clips[key]
        if rect is None or matrix is _IDENTITY:
            return rect
        if matrix[1] or matrix[2]:
            return None  # a rectangle turned by the form's matrix is not one on the page
        return _transform_box(matrix, rect)

    def _rectangles(self, clip: int, paths: int) -> Box | None:
        x, y = self.point
        rect: Box | None = None
        for path in range(paths):
            count = int(F.FPDFClipPath_CountPathSegments(clip, path))
            if not 4 <= count <= 5:
                return None
            points = []
            for index in range(count):
                segment = F.FPDFClipPath_GetPathSegment(clip, path, index)
                if not segment or not F.FPDFPathSegment_GetPoint(segment, ctypes.byref(x), ctypes.byref(y)):
                    return None
                if index and F.FPDFPathSegment_GetType(segment) != _LINETO:
                    return None
                points.append((x.value, y.value))
            box = _rectangle(points)
            if box is None:
                return None
            rect = box if rect is None else _intersect(rect, box)
        return rect


_minus: Final = operator.sub


def _quad_box(quad: list[float]) -> Box:
    xs, ys = quad[0::2], quad[1::2]
    return min(xs), min(ys), max(xs), max(ys)


def _corners(quad: Any, matrix: _Matrix) -> tuple[float, ...]:
    """A rotated bounding box's four corners on the page: x1, y1 ... x4, y4."""
    if matrix is _IDENTITY:
        return tuple(quad)
    a, b, c, d, e, f = matrix
    points = tuple(quad)
    out: list[float] = []
    for x, y in zip(points[0::2], points[1::2], strict=True):
        out += (a * x + c * y + e, b * x + d * y + f)
    return tuple(out)


def _thickness(corners: tuple[float, ...]) -> float:
    """The shorter side of a rotated box (a line of text: its height)."""
    x1, y1, x2, y2, x3, y3 = corners[:6]
    if y1 == y2 and x2 == x3:  # upright
        return abs(y3 - y2)
    return min(math.hypot(x2 - x1, y2 - y1), math.hypot(x3 - x2, y3 - y2))


def _rectangle(points: list[tuple[float, float]]) -> Box | None:
    """The box of four (or five, closed) corners when they make an axis-aligned rectangle."""
    xs = sorted({round(x, 3) for x, _ in points})
    ys = sorted({round(y, 3) for _, y in points})
    if len(xs) > 2 or len(ys) > 2:
        return None
    return xs[0], ys[0], xs[-1], ys[-1]


def _annotations(page: Any, order: int) -> list[_Other]:
    """The page's annotations a viewer may draw (not links, not hidden), over everything."""
    c = pdfium_c
    count = min(max(int(c.FPDFPage_GetAnnotCount(page.raw)), 0), MAX_ANNOTATIONS)
    found: list[_Other] = []
    if not count:
        return found
    rect = c.FS_RECTF()
    for index in range(count):
        annot = c.FPDFPage_GetAnnot(page.raw, index)
        if not annot:
            continue
        try:
            if c.FPDFAnnot_GetSubtype(annot) == _LINK or c.FPDFAnnot_GetFlags(annot) & _ANNOT_HIDDEN_FLAGS:
                continue
            if c.FPDFAnnot_GetRect(annot, rect):
                box = (
                    min(rect.left, rect.right),
                    min(rect.bottom, rect.top),
                    max(rect.left, rect.right),
                    max(rect.bottom, rect.top),
                )
                found.append(_Other(0, order + 1 + index, box, _ANNOTATION, cover=True, dark=False))
        finally:
            c.FPDFPage_CloseAnnot(annot)
    return found


class _Buffers:
    """ctypes buffers the classification of objects reuses (one thread per job child)."""

    def __init__(self) -> None:
        self.fill, self.stroke, self.width = ctypes.c_int(), ctypes.c_int(), ctypes.c_float()
        self.mode_refs = (ctypes.byref(self.fill), ctypes.byref(self.stroke))
        self.width_ref = ctypes.byref(self.width)
        self.rgba = (ctypes.c_uint * 4)()
        self.rgba_refs = tuple(ctypes.byref(self.rgba, 4 * i) for i in range(4))


_BUFFERS: Final = _Buffers()


def _thin_stroke(handle: int) -> bool:
    """A path that is only stroked, thinner than ``COVER_STROKE_PT`` (two PDFium calls)."""
    buffers = _BUFFERS
    if not F.FPDFPath_GetDrawMode(handle, *buffers.mode_refs) or buffers.fill.value:
        return False
    if not buffers.stroke.value:
        return False  # neither filled nor stroked: a clipping path's leftover, drawn by no one
    return (
        bool(F.FPDFPageObj_GetStrokeWidth(handle, buffers.width_ref))
        and buffers.width.value < COVER_STROKE_PT
    )


def _classify(other: _Other) -> None:
    """Whether an object may hide text drawn before it, and whether it is not paper under text
    drawn after it; a path's opaque fill colour."""
    if other.cover is not None:
        return
    if other.kind != _PATH:
        other.cover, other.dark = True, True
        return
    buffers = _BUFFERS
    if not F.FPDFPath_GetDrawMode(other.handle, *buffers.mode_refs):
        other.cover, other.dark = True, True
        return
    if buffers.fill.value == 0:  # strokes only: rules, frames, underlines
        got = F.FPDFPageObj_GetStrokeWidth(other.handle, buffers.width_ref)
        other.cover = bool(buffers.stroke.value) and (not got or buffers.width.value >= COVER_STROKE_PT)
        other.dark = False
        return
    rgba = buffers.rgba
    solid = F.FPDFPageObj_GetFillColor(other.handle, *buffers.rgba_refs) and rgba[3] == 255
    if solid and not F.FPDFPageObj_HasTransparency(other.handle):
        other.fill = (rgba[0], rgba[1], rgba[2])
    paper = other.fill is not None and 0.299 * rgba[0] + 0.587 * rgba[1] + 0.114 * rgba[2] >= LIGHT_MIN
    other.cover, other.dark = True, not paper


def _contrasts(paint: tuple[int, int, int, int], fill: tuple[int, int, int] | None) -> bool:
    """An opaque paint that stands out from an opaque fill (``PROOF_CONTRAST`` in some channel)."""
    if fill is None or paint[3] != 255:
        return False
    return max(abs(paint[0] - fill[0]), abs(paint[1] - fill[1]), abs(paint[2] - fill[2])) >= PROOF_CONTRAST


def _is_rectangle(other: _Other) -> bool:
    """Whether a path is one upright rectangle (then its box is where it paints)."""
    if other.rect is None:
        other.rect = False
        count = int(F.FPDFPath_CountSegments(other.handle))
        matrix = (ctypes.c_float * 6)()
        if (
            4 <= count <= 5
            and F.FPDFPageObj_GetMatrix(other.handle, matrix)
            and not matrix[1]
            and not matrix[2]
        ):
            x, y = ctypes.c_float(), ctypes.c_float()
            points = []
            for index in range(count):
                segment = F.FPDFPath_GetPathSegment(other.handle, index)
                if not segment or not F.FPDFPathSegment_GetPoint(segment, ctypes.byref(x), ctypes.byref(y)):
                    return False
                if index and F.FPDFPathSegment_GetType(segment) != _LINETO:
                    return False
                points.append((x.value, y.value))
            other.rect = _rectangle(points) is not None
    return other.rect


def _cells(box: Box) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = box
    if -_FAR < x0 <= x1 < _FAR and -_FAR < y0 <= y1 < _FAR:  # also false for NaN
        return int(x0 // _GRID), int(y0 // _GRID), int(x1 // _GRID), int(y1 // _GRID)
    return _FAR_CELLS


class _TextGrid:
    """The text objects' positions by the cells of a coarse grid their boxes touch."""

    def __init__(self, boxes: list[Box]) -> None:
        self.boxes = boxes
        self.cells: dict[tuple[int, int], list[int]] = {}
        self.huge: list[int] = []  # boxes over more cells than there are texts: always looked at
        for number, box in enumerate(boxes):
            x0, y0, x1, y1 = _cells(box)
            if (x1 - x0 + 1) * (y1 - y0 + 1) > len(boxes):
                self.huge.append(number)
                continue
            for cx in range(x0, x1 + 1):
                for cy in range(y0, y1 + 1):
                    self.cells.setdefault((cx, cy), []).append(number)
        self.stamp = [0] * len(boxes)
        self.turn = 0

    def meeting(self, box: Box) -> list[int]:
        """The positions of the text boxes that overlap ``box``."""
        x0, y0, x1, y1 = _cells(box)
        if (x1 - x0 + 1) * (y1 - y0 + 1) >= len(self.boxes):
            return _meeting(self.boxes, box)
        self.turn += 1
        turn, stamp, boxes = self.turn, self.stamp, self.boxes
        left, bottom, right, top = box
        found = []
        for cx in range(x0, x1 + 1):
            for cy in range(y0, y1 + 1):
                for number in self.cells.get((cx, cy), ()):
                    if stamp[number] != turn:
                        stamp[number] = turn
                        t = boxes[number]
                        if t[0] < right and left < t[2] and t[1] < top and bottom < t[3]:
                            found.append(number)
        for number in self.huge:
            t = boxes[number]
            if stamp[number] != turn and t[0] < right and left < t[2] and t[1] < top and bottom < t[3]:
                found.append(number)
        return found


def _meeting(boxes: list[Box], box: Box) -> list[int]:
    left, bottom, right, top = box
    return [n for n, t in enumerate(boxes) if t[0] < right and left < t[2] and t[1] < top and bottom < t[3]]


def _area(box: Box) -> float:
    return max(box[2] - box[0], 0.0) * max(box[3] - box[1], 0.0)


def _relate(census: Census, others: list[_Other]) -> None:
    """Marks each text object drawn over, drawn on something not paper-like, or not all inside
    the crop box."""
    boxes, flags = census.boxes, census.flags
    if not boxes:
        return
    x0s, y0s, x1s, y1s = zip(*boxes, strict=True)
    union = (min(x0s), min(y0s), max(x1s), max(y1s))
    if not _inside(union, census.crop):
        for number, box in enumerate(boxes):
            if not _inside(box, census.crop):
                flags[number] |= OUTSIDE
    covers = [n for n, f in enumerate(flags) if f & DRAWN_IN_DOUBT and not f & INVISIBLE]
    if not others and not covers:
        return
    grid = _TextGrid(boxes) if len(boxes) * (len(others) + len(covers)) > _SCAN_PAIRS else None

    def meeting(box: Box) -> list[int]:
        return grid.meeting(box) if grid is not None else _meeting(boxes, box)

    grounds: dict[int, list[int]] = {}
    for other in others:
        _classify(other)
        if not other.cover and not other.dark:
            continue  # a thin stroke (a rule, a frame, an underline) neither hides nor grounds text
        met = meeting(other.box)
        if met:
            _over_or_under(census, other, met, grounds)
    _ground(flags, grounds)
    for cover in covers:
        box = boxes[cover]
        for number in meeting(box):
            shared = _area(_intersect(boxes[number], box))
            if census.orders[number] < census.orders[cover] and shared >= _TEXT_COVER_SHARE * _area(
                boxes[number]
            ):
                flags[number] |= COVERED


def _ground(flags: list[int], grounds: dict[int, list[int]]) -> None:
    """Light text on a fill of its own that it stands out from, with nothing unproven above that
    fill, is shown; light text on anything else is looked at."""
    for number, orders in grounds.items():
        proven = [order for order in orders if order > 0]
        unproven = [-order for order in orders if order < 0]
        if proven and (not unproven or max(unproven) < max(proven)) and not flags[number] & _ALPHA_OR_STROKE:
            flags[number] &= ~NOT_DARK
        elif unproven:
            flags[number] |= BENEATH


def _over_or_under(census: Census, other: _Other, met: list[int], grounds: dict[int, list[int]]) -> None:
    """Flags the text objects ``other`` meets: drawn over by it, or lying on something that may
    hide it. Dark text on a fill it stands out from is proven shown (whatever the fill's shape);
    light text needs a rectangle of such a fill under all of it (``grounds``: text -> the orders
    of such fills, and of what lies under it unproven, negated)."""
    _classify(other)
    boxes, flags, orders = census.boxes, census.flags, census.orders
    large = other.kind == _IMAGE and _area(other.box) >= _LARGE_IMAGE_SHARE * census.page_area
    for number in met:
        box = boxes[number]
        if box[2] <= box[0] or box[3] <= box[1]:
            continue  # an object of no area draws nothing (spaces)
        if other.order > orders[number]:
            if other.cover:
                flags[number] |= COVERED | (COVERED_BY_IMAGE if large else 0)
            continue
        paint = census.paints.get(number, _BLACK)
        proven = _contrasts(paint, other.fill)
        if flags[number] & NOT_DARK:
            ground = proven and _inside(box, other.box) and _is_rectangle(other)
            grounds.setdefault(number, []).append(other.order if ground else -other.order)
        elif other.dark and not proven:
            flags[number] |= BENEATH


def take_census(page: Any, crop: Box, forms_may_hide: Callable[[], bool]) -> Census:
    """Walk the page's objects and judge its text objects (``forms_may_hide``: whether the
    document may give a form XObject an ``/OC`` entry, which PDFium does not expose; asked only
    of a page with forms)."""
    census = Census(crop=crop, page_area=_area(crop))
    walker = _Walker(census, forms_may_hide)
    raw = address(page.raw)
    count = max(int(F.FPDFPage_CountObjects(raw)), 0)
    walker.flatten(list(map(F.FPDFPage_GetObject, [raw] * min(count, MAX_OBJECTS), range(count))), _PAGE, 0)
    if count > MAX_OBJECTS:
        census.complete = False
    walker.texts()
    walker.others_of()
    _relate(census, [*walker.others, *_annotations(page, len(walker.handles))])
    return census
