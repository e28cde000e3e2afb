"""The visibility stage's second step: the characters the census could not prove shown, decided
from what the page looks like.

Input: a page loaded by PDFium, its text page, and the census of its text objects
(``visibility_census``); nothing about the document is assumed.

1. **Geometry.** A character whose box centre lies outside the crop box is ``outside_crop_box``;
   one of an object whose em is under ``MIN_LEGIBLE_PT``, with a loose glyph box as small, is
   ``too_small``.
2. **Regions.** The boxes of the text objects in doubt (inside the crop box) are merged into at
   most ``MAX_REGIONS`` regions, each rendered by PDFium (annotations drawn, as a viewer does)
   into a small bitmap, at a scale that gives their type about ``TARGET_EM_PX`` pixels (within
   ``MAX_REGION_PIXELS``): as the page is (``shown``), without the doubtful objects' glyphs
   (``without``: their render mode set to invisible, then restored), and without any text
   (``bare``) where an invisible text layer needs it.
3. **Pixels.** A glyph is shown when the two renders differ (by ``CONTRAST`` of 255 or more in
   a colour channel) at ``MIN_CHANGED_PIXELS`` or more of its pixels. An invisible glyph (render
   mode 3 or 7, or a paint of alpha 0), or one under a large image, is kept when the page shows
   ink under it without any text (the image or the outlines of the words it stands for: a
   searchable scan, text set as paths with a text layer). Spaces go with their
   neighbours, and islands of fewer than ``ISLAND`` hidden glyphs in a shown object are shown.
   Pixels are counted per glyph from one column profile per object (one line of text), so the
   cost is a few image operations per object plus arithmetic per character.
4. **Reasons.** A glyph that changes no pixel is named by what the census saw, in this order:
   ``optional_content_off`` (a marked-content OC group), ``transparent``, ``clipped``,
   ``covered``, ``same_colour_as_background`` (its paint matches the pixels beneath it), else
   ``no_visible_pixels``. PDFium inside the sandbox may lack a font a viewer has (a CJK font
   that is not embedded): a glyph withheld only for lack of pixels, in a font that is not
   embedded and has no outline for it here, is kept.
"""

from __future__ import annotations

import ctypes
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

import pypdfium2.raw as pdfium_c
from PIL import Image, ImageChops, ImageStat

from pdf_airlock.worker.pdf.pdfium_calls import F, address
from pdf_airlock.worker.pdf.visibility_census import (
    CLIPPED,
    COVERED,
    COVERED_BY_IMAGE,
    INVISIBLE,
    MIN_LEGIBLE_PT,
    OPTIONAL,
    OUTSIDE,
    SMALL,
    TRANSPARENT,
    Box,
    Census,
    TextObject,
)

__all__ = [
    "CONTRAST",
    "MAX_REGIONS",
    "MAX_REGION_PIXELS",
    "MIN_CHANGED_PIXELS",
    "REASONS",
    "TARGET_EM_PX",
    "decide",
]

REASONS: Final = (
    "invisible_mode",
    "same_colour_as_background",
    "transparent",
    "too_small",
    "clipped",
    "outside_crop_box",
    "covered",
    "optional_content_off",
    "no_visible_pixels",
)
_CODE: Final = {reason: number for number, reason in enumerate(REASONS, 1)}
TARGET_EM_PX: Final = 7.0
INK_EM_PX: Final = 6.0  # enough to see ink under a glyph
MIN_SCALE: Final = 0.35
MAX_SCALE: Final = 2.0
MAX_REGION_PIXELS: Final = 1_500_000
MAX_REGIONS: Final = 4
CONTRAST: Final = 16  # of 255, in the channel that changed most
MIN_CHANGED_PIXELS: Final = 2
MIN_GLYPH_PX: Final = 3  # a glyph box smaller than this both ways is left to its neighbours
# Fewer changed pixels than this under a glyph painted like paper, on pixels mostly of its own
# colour, are what it erased of something beneath (the descenders of the line above), not it.
STRONG_PIXELS: Final = 8
SAME_COLOUR: Final = 24  # a paint this close (any channel) to the pixels beneath is the same colour
INK_CONTRAST: Final = 48  # of 255: a pixel this much darker than the paper around it is ink
MIN_INK_SHARE: Final = 0.03
ISLAND: Final = 3
MAX_LOCATED: Final = 8  # text objects in question found one by one (each costs PDFium a walk of the page)
_STAND_IN_EM: Final = 4.0  # points: the type a page too large for the census is rendered for
_REGION_MARGIN_PT: Final = 2.0
_CELL_GROW_PX: Final = 2.0  # pixels added around a cell for the ink test (and 1/8 of it)
_MAX_CELL_PT: Final = 72.0  # how far an ink test's region reaches past a flat object
_TWIN_PT: Final = 0.5  # two text objects whose boxes agree to this are drawn in one place
_MERGE_GAP_PT: Final = 12.0
_MANY_REGIONS: Final = 32  # past this, neighbours merge in pairs before the closest-pair search
_CHEAP_MERGE_PT2: Final = 72.0 * 72.0  # a merge that adds less than a square inch is always worth it
_SMALL_BOX_FACTOR: Final = 1.3  # a loose box is about 1.2 ems high
_PAPER_PERCENTILE: Final = 0.9
_WHITE: Final = 0xFFFFFFFF
_BGR: Final = 2  # FPDFBitmap_BGR
_UNDECIDED: Final = -1
_WHITESPACE: Final = frozenset(code for code in range(0x3001) if chr(code).isspace())
_SHOWN: Final = 0
_CHANGED_LUT: Final = [255 if level >= CONTRAST else 0 for level in range(256)]
# By paper level less INK_CONTRAST, plus one: 255 at and below it (ink), 0 above.
_INK_LUTS: Final = [[255 if level < limit else 0 for level in range(256)] for limit in range(257)]
_PIXEL_ONLY: Final = frozenset(
    {"optional_content_off", "clipped", "covered", "no_visible_pixels", "transparent"}
)


class _Canvas:
    """Maps page space to device space as PDFium's renderer does (page rotation and crop box
    included), and renders regions of the page."""

    def __init__(self, page: Any) -> None:
        self.page = page
        width, height = (float(v) for v in page.get_size())
        size = (max(int(width), 1), max(int(height), 1))
        points = []
        x, y = ctypes.c_double(), ctypes.c_double()
        for dx, dy in ((0, 0), (size[0], 0), (0, size[1])):
            pdfium_c.FPDF_DeviceToPage(page.raw, 0, 0, size[0], size[1], 0, dx, dy, x, y)
            points.append((x.value, y.value))
        (x0, y0), (x1, y1), (x2, y2) = points
        a, b = (x1 - x0) / size[0], (y1 - y0) / size[0]
        c, d = (x2 - x0) / size[1], (y2 - y0) / size[1]
        det = a * d - b * c or 1e-9
        self.inverse = (d / det, -b / det, -c / det, a / det, x0, y0)

    def device_box(self, box: Box) -> Box:
        ia, ib, ic, id_, x0, y0 = self.inverse
        if not ib and not ic:  # an upright page: no corner to turn
            left, right = ia * (box[0] - x0), ia * (box[2] - x0)
            top, bottom = id_ * (box[1] - y0), id_ * (box[3] - y0)
            return min(left, right), min(top, bottom), max(left, right), max(top, bottom)
        xs, ys = [], []
        for x, y in ((box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])):
            dx, dy = x - x0, y - y0
            xs.append(ia * dx + ic * dy)
            ys.append(ib * dx + id_ * dy)
        return min(xs), min(ys), max(xs), max(ys)

    def render(self, area: Box, scale: float) -> Image.Image:
        """The device-space ``area`` at ``scale`` pixels per point, as an RGB image."""
        c = pdfium_c
        width = max(1, math.ceil((area[2] - area[0]) * scale))
        height = max(1, math.ceil((area[3] - area[1]) * scale))
        bitmap = c.FPDFBitmap_CreateEx(width, height, _BGR, None, 0)
        if not bitmap:
            raise MemoryError("PDFium could not allocate a bitmap")
        try:
            c.FPDFBitmap_FillRect(bitmap, 0, 0, width, height, _WHITE)
            matrix = c.FS_MATRIX(scale, 0, 0, scale, -area[0] * scale, -area[1] * scale)
            clip = c.FS_RECTF(0, 0, width, height)
            c.FPDF_RenderPageBitmapWithMatrix(bitmap, self.page.raw, matrix, clip, c.FPDF_ANNOT)
            stride = c.FPDFBitmap_GetStride(bitmap)
            data = ctypes.string_at(c.FPDFBitmap_GetBuffer(bitmap), stride * height)
        finally:
            c.FPDFBitmap_Destroy(bitmap)
        return Image.frombuffer("RGB", (width, height), data, "raw", "BGR", stride, 1)


@dataclass(slots=True)
class _Region:
    box: Box  # page space
    objects: list[TextObject] = field(default_factory=list)


@dataclass(slots=True)
class _Rendered:
    """One region's renders and how page points map to its pixels."""

    canvas: _Canvas
    area: Box  # device space
    scale: float
    size: tuple[int, int] = (0, 0)
    shown: Image.Image | None = None
    without: Image.Image | None = None
    bare: Image.Image | None = None
    _changed: Image.Image | None = None
    _grey: dict[str, Image.Image] = field(default_factory=dict)

    def pixels(self, box: Box) -> tuple[int, int, int, int] | None:
        """The pixels of a page-space box in the region's images (None: none of them)."""
        x0, y0, x1, y1 = self.canvas.device_box(box)
        s, ax, ay = self.scale, self.area[0], self.area[1]
        left, top = max(math.floor((x0 - ax) * s), 0), max(math.floor((y0 - ay) * s), 0)
        right, bottom = (
            min(math.ceil((x1 - ax) * s), self.size[0]),
            min(math.ceil((y1 - ay) * s), self.size[1]),
        )
        return (left, top, right, bottom) if right > left and bottom > top else None

    def changed(self) -> Image.Image:
        """255 where the glyphs in doubt change a pixel by ``CONTRAST`` or more."""
        if self._changed is None:
            assert self.shown is not None and self.without is not None
            red, green, blue = ImageChops.difference(self.shown, self.without).split()
            self._changed = ImageChops.lighter(ImageChops.lighter(red, green), blue).point(_CHANGED_LUT)
        return self._changed

    def grey(self, name: str) -> Image.Image:
        if name not in self._grey:
            image = getattr(self, name)
            assert image is not None
            self._grey[name] = image.convert("L")
        return self._grey[name]


def _set_modes(objects: Iterable[TextObject], invisible: bool) -> None:
    mode = pdfium_c.FPDF_TEXTRENDERMODE_INVISIBLE
    for obj in objects:
        F.FPDFTextObj_SetTextRenderMode(obj.handle, mode if invisible else obj.mode)


def _render_without(rendered: _Rendered, objects: list[TextObject]) -> Image.Image:
    _set_modes(objects, invisible=True)
    try:
        return rendered.canvas.render(rendered.area, rendered.scale)
    finally:
        _set_modes(objects, invisible=False)


def _regions(objects: list[TextObject], crop: Box) -> list[_Region]:
    """The doubtful objects' boxes inside the crop box, merged where close."""
    regions: list[_Region] = []
    for obj in sorted(objects, key=lambda o: (-o.box[3], o.box[0])):
        rise = _REGION_MARGIN_PT
        if (obj.invisible or obj.flags & COVERED_BY_IMAGE) and math.isfinite(obj.em):
            rise = max(rise, min(obj.em, _MAX_CELL_PT))  # its characters' cells, for the ink test
        box = (
            max(obj.box[0] - _REGION_MARGIN_PT, crop[0]),
            max(obj.box[1] - rise, crop[1]),
            min(obj.box[2] + _REGION_MARGIN_PT, crop[2]),
            min(obj.box[3] + rise, crop[3]),
        )
        if box[2] <= box[0] or box[3] <= box[1]:
            continue  # all outside the crop box: geometry decides it
        for region in regions[-4:]:  # regions grow down the page: the last few are the near ones
            r = region.box
            if (
                box[0] - _MERGE_GAP_PT <= r[2]
                and r[0] - _MERGE_GAP_PT <= box[2]
                and box[1] - _MERGE_GAP_PT <= r[3]
                and r[1] - _MERGE_GAP_PT <= box[3]
            ):
                region.box = (min(r[0], box[0]), min(r[1], box[1]), max(r[2], box[2]), max(r[3], box[3]))
                region.objects.append(obj)
                break
        else:
            regions.append(_Region(box, [obj]))
    return _fewer(regions)


def _fewer(regions: list[_Region]) -> list[_Region]:
    """Merges the two regions whose union adds the least area, while it adds little or there
    are more than ``MAX_REGIONS``: every render costs a walk of the page's objects. That search
    is cubic in the regions, so past ``_MANY_REGIONS`` (a page of hundreds of scattered doubtful
    runs) neighbours down the page are first merged in pairs until few are left."""
    while len(regions) > _MANY_REGIONS:
        regions.sort(key=lambda region: (region.box[1], region.box[0]))
        paired = [
            _Region(_union(first.box, second.box), first.objects + second.objects)
            for first, second in zip(regions[0::2], regions[1::2], strict=False)
        ]
        regions = paired + regions[len(paired) * 2 :]
    while len(regions) > 1:
        best: tuple[float, int, int] | None = None
        for i, first in enumerate(regions):
            for j in range(i + 1, len(regions)):
                union = _union(first.box, regions[j].box)
                added = _area(union) - _area(first.box) - _area(regions[j].box)
                if best is None or added < best[0]:
                    best = (added, i, j)
        assert best is not None
        added, i, j = best
        if len(regions) <= MAX_REGIONS and added > _CHEAP_MERGE_PT2:
            break
        second = regions.pop(j)
        regions[i] = _Region(_union(regions[i].box, second.box), regions[i].objects + second.objects)
    return regions


def _union(a: Box, b: Box) -> Box:
    return min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])


def _area(box: Box) -> float:
    return max(box[2] - box[0], 0.0) * max(box[3] - box[1], 0.0)


def _scale(region: _Region, canvas: _Canvas, target: float) -> float:
    """Pixels per point: ``target`` pixels to the em of the region's smaller type (a glyph of
    ``MIN_LEGIBLE_PT`` at least), within ``MAX_REGION_PIXELS``."""
    sizes = sorted(min(obj.em, obj.box[3] - obj.box[1], obj.box[2] - obj.box[0]) for obj in region.objects)
    size = max(sizes[len(sizes) // 4], MIN_LEGIBLE_PT)  # the smaller type of the region
    scale = min(max(target / size, MIN_SCALE), MAX_SCALE)
    x0, y0, x1, y1 = canvas.device_box(region.box)
    area = max(x1 - x0, 1.0) * max(y1 - y0, 1.0)
    if area * scale * scale > MAX_REGION_PIXELS:
        scale = math.sqrt(MAX_REGION_PIXELS / area)
    return scale


class _Chars:
    """The characters of the text objects in question (in doubt, partly outside the crop box,
    or small), their decisions (``codes``: index -> code; every other character is shown) and
    boxes read from PDFium when needed."""

    def __init__(self, textpage: Any, census: Census, text: str | None) -> None:
        self.raw = address(textpage.raw)
        self.count = max(int(F.FPDFText_CountChars(self.raw)), 0)
        asked: dict[int, TextObject | None] = {0: None}

        def question(handle: int) -> TextObject | None:
            if handle not in asked:
                obj = census.text_object(handle)
                if obj is None and not census.complete:
                    obj = _stand_in(handle)
                asked[handle] = obj if obj is not None and obj.flags else None
            return asked[handle]

        self.owner: dict[int, TextObject] = {}
        self.members: dict[int, list[int]] = {}  # id(object) -> its characters, in order
        runs = _located_runs(self.raw, self.count, census, text)
        for start, end, handle in runs if runs is not None else _object_runs(self.raw, self.count, text):
            obj = question(handle)
            if obj is not None:
                indices = range(start, end)
                self.members.setdefault(id(obj), []).extend(indices)
                self.owner.update(dict.fromkeys(indices, obj))
        self.codes: dict[int, int] = dict.fromkeys(self.owner, _UNDECIDED)
        self._rect = (ctypes.c_float * 4)()
        self._doubles = (ctypes.c_double * 4)()
        self._double_refs = tuple(ctypes.byref(self._doubles, 8 * i) for i in range(4))

    def loose(self, index: int) -> Box | None:
        r = self._rect  # left, top, right, bottom
        if not F.FPDFText_GetLooseCharBox(self.raw, index, r):
            return None
        return min(r[0], r[2]), min(r[1], r[3]), max(r[0], r[2]), max(r[1], r[3])

    def tight(self, index: int) -> Box | None:
        d = self._doubles  # left, right, bottom, top
        if not F.FPDFText_GetCharBox(self.raw, index, *self._double_refs):
            return None
        return (d[0], d[2], d[1], d[3]) if d[1] > d[0] and d[3] > d[2] else None

    def space(self, index: int) -> bool:
        code = F.FPDFText_GetUnicode(self.raw, index)
        return code < 0x110000 and chr(code).isspace()


# Characters whose bidirectional class is right-to-left (Hebrew, Arabic, Syriac, Thaana, N'Ko...;
# their presentation forms) or that embed or override a direction.
_RIGHT_TO_LEFT: Final = re.compile(
    "[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff\u200f\u202a-\u202e\u2066-\u2069"
    "\U00010800-\U00010fff\U0001e800-\U0001efff]"
)


def _object_runs(raw: int, count: int, text: str | None) -> list[tuple[int, int, int]]:
    """The text page's characters as runs ``(start, end, text object)`` (0 for the characters
    PDFium generated). PDFium appends each text object's characters one after another and only
    reorders a line that holds right-to-left text; on a page without any (``text``: its whole
    text), a run's end is found by galloping. Otherwise every character is asked."""
    get = F.FPDFText_GetTextObject
    if text is None or _RIGHT_TO_LEFT.search(text):
        handles = [get(raw, index) or 0 for index in range(count)]
        runs: list[tuple[int, int, int]] = []
        start = 0
        for index in range(1, count + 1):
            if index == count or handles[index] != handles[start]:
                runs.append((start, index, handles[start]))
                start = index
        return runs
    runs = []
    start = 0
    while start < count:
        handle = get(raw, start) or 0
        if not handle:  # generated characters recur between objects: a few at a time
            end = start + 1
            while end < count and not get(raw, end):
                end += 1
            runs.append((start, end, 0))
            start = end
            continue
        step, low, high = 1, start, count  # get(low) is handle; the run ends at or before high
        while low + step < count:
            if (get(raw, low + step) or 0) != handle:
                high = low + step
                break
            low += step
            step *= 2
        while high - low > 1:
            middle = (low + high) // 2
            if (get(raw, middle) or 0) == handle:
                low = middle
            else:
                high = middle
        runs.append((start, high, handle))
        start = high
    return runs


def _located_runs(
    raw: int, count: int, census: Census, text: str | None
) -> list[tuple[int, int, int]] | None:
    """The runs of the few text objects in question (at most ``MAX_LOCATED``), each found from
    the character PDFium reports inside its box and galloped to its ends, on a page whose
    characters stay in object order (no right-to-left text: ``_object_runs``); None where that
    cannot be done, and every character is asked instead."""
    if not census.complete or text is None or _RIGHT_TO_LEFT.search(text):
        return None
    questions = [n for n, flags in enumerate(census.flags) if flags]
    if len(questions) > MAX_LOCATED:
        return None
    get, at = F.FPDFText_GetTextObject, F.FPDFText_GetCharIndexAtPos
    runs = []
    for number in questions:
        handle, (x0, y0, x1, y1) = census.handles[number], census.boxes[number]
        tolerance = max(y1 - y0, x1 - x0, 1.0)
        middle = (y0 + y1) / 2
        for x in ((x0 + x1) / 2, x0 + (x1 - x0) / 8, x1 - (x1 - x0) / 8):
            index = at(raw, x, middle, tolerance, tolerance)
            if 0 <= index < count and (get(raw, index) or 0) == handle:
                break
        else:
            return None  # not found (PDFium may have left the object out): ask every character
        runs.append((_run_end(raw, index, handle, -1, count), _run_end(raw, index, handle, 1, count), handle))
    return runs


def _run_end(raw: int, index: int, handle: int, way: int, count: int) -> int:
    """Where the run of ``handle``'s characters through ``index`` ends going ``way`` (-1: its
    first index, 1: one past its last), galloping then halving."""
    get = F.FPDFText_GetTextObject
    inside, step = index, 1
    outside = -1 if way < 0 else count
    while 0 <= inside + way * step < count:
        probe = inside + way * step
        if (get(raw, probe) or 0) != handle:
            outside = probe
            break
        inside, step = probe, step * 2
    while abs(outside - inside) > 1:
        middle = (inside + outside) // 2
        if (get(raw, middle) or 0) == handle:
            inside = middle
        else:
            outside = middle
    return inside if way < 0 else outside


def _stand_in(handle: int) -> TextObject:
    """A text object the census did not reach (a page past its bound): in doubt on every count,
    its glyphs' size measured one by one, its fill read for the reason (what covers it is not
    known: ``COVERED`` here is doubt, not a finding)."""
    mode = int(F.FPDFTextObj_GetTextRenderMode(handle))
    everywhere = (-math.inf, -math.inf, math.inf, math.inf)
    flags = COVERED | SMALL | (INVISIBLE if mode in (3, 7) else 0)
    rgba = (ctypes.c_uint * 4)()
    refs = [ctypes.addressof(rgba) + 4 * i for i in range(4)]
    colour = F.FPDFPageObj_GetStrokeColor if mode in (1, 5) else F.FPDFPageObj_GetFillColor
    paint = (rgba[0], rgba[1], rgba[2], rgba[3]) if colour(handle, *refs) else (0, 0, 0, 255)
    return TextObject(handle, 0, everywhere, mode, paint, _STAND_IN_EM, flags)


def _geometry(chars: _Chars, crop: Box) -> None:
    for indices in chars.members.values():
        obj = chars.owner[indices[0]]
        if not obj.flags & (OUTSIDE | SMALL):
            continue
        box = obj.box
        if obj.flags & OUTSIDE and not (
            box[0] < crop[2] and crop[0] < box[2] and box[1] < crop[3] and crop[1] < box[3]
        ):
            for index in indices:  # all of it outside: no glyph to look at
                chars.codes[index] = _CODE["outside_crop_box"]
            continue
        for index in indices:
            _glyph_geometry(chars, index, obj, crop)


def _glyph_geometry(chars: _Chars, index: int, obj: TextObject, crop: Box) -> None:
    box = chars.loose(index) or chars.tight(index)
    if obj.flags & OUTSIDE and box is not None:
        x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        if not (crop[0] <= x <= crop[2] and crop[1] <= y <= crop[3]):
            chars.codes[index] = _CODE["outside_crop_box"]
            return
    if obj.flags & SMALL:
        if box is None or max(box[2] - box[0], box[3] - box[1]) < MIN_LEGIBLE_PT * _SMALL_BOX_FACTOR:
            chars.codes[index] = _CODE["too_small"]
        else:
            obj.flags |= COVERED  # glyphs larger than its size says (a Type 3 font?): look at them


def _paper(histogram: list[int]) -> int:
    """The grey level below which the darkest ``_PAPER_PERCENTILE`` of the pixels lie."""
    total, seen = sum(histogram), 0
    for level in range(255, -1, -1):
        seen += histogram[level]
        if seen >= (1 - _PAPER_PERCENTILE) * total:
            return level
    return 255


class _Profile:
    """Counts per pixel column of a marked image over one object's band of rows: a glyph's count
    is the sum over its columns."""

    def __init__(self, marks: Image.Image, band: tuple[int, int, int, int]) -> None:
        crop = marks.crop(band)
        self.left = band[0]
        self.rows = max(band[3] - band[1], 1)
        self.columns = crop.resize((crop.width, 1), Image.Resampling.BOX).tobytes() if crop.width else b""

    def count(self, pixels: tuple[int, int, int, int]) -> float:
        part = self.columns[pixels[0] - self.left : pixels[2] - self.left]
        return sum(part) * self.rows / 255


def _same_colour(rendered: _Rendered, obj: TextObject, band: tuple[int, int, int, int]) -> bool:
    image = rendered.without if rendered.without is not None else rendered.shown
    assert image is not None
    median = ImageStat.Stat(image.crop(band)).median
    return max(abs(a - b) for a, b in zip(median, obj.paint[:3], strict=True)) <= SAME_COLOUR


def _paper_paint(obj: TextObject) -> bool:
    """Text painted in a colour as light as paper (its few changed pixels may be erasures)."""
    red, green, blue, alpha = obj.paint
    return alpha == 255 and min(red, green, blue) >= 255 - SAME_COLOUR


def _reason(rendered: _Rendered, obj: TextObject, band: tuple[int, int, int, int]) -> str:
    if obj.flags & OPTIONAL:
        return "optional_content_off"
    if obj.flags & TRANSPARENT or obj.paint[3] < 255:
        return "transparent"
    if obj.flags & CLIPPED:
        return "clipped"
    if obj.flags & COVERED and math.isfinite(obj.box[0]):  # a stand-in's is doubt
        return "covered"
    if _same_colour(rendered, obj, band):
        return "same_colour_as_background"
    return "no_visible_pixels"


class _Glyphs:
    """Whether PDFium can draw a character's glyph at all in this process (a font that is not
    embedded may have no face here that holds it)."""

    def __init__(self) -> None:
        self.seen: dict[tuple[int, int], bool] = {}

    def drawable(self, obj: TextObject, code: int) -> bool:
        font = F.FPDFTextObj_GetFont(obj.handle)
        if not font or F.FPDFFont_GetIsEmbedded(font):
            return True
        key = (font, code)
        if key not in self.seen:
            path = F.FPDFFont_GetGlyphPath(font, code, 12.0) if 0 < code <= 0xFFFF else None
            self.seen[key] = bool(path) and int(F.FPDFGlyphPath_CountGlyphSegments(path)) > 0
        return self.seen[key]


def _glyph_pixels(
    chars: _Chars, rendered: _Rendered, indices: list[int], *, cells: bool = False, em: float = 0.0
) -> dict[int, tuple[int, int, int, int]]:
    """The pixel box of each undecided character that draws something (a glyph box of some
    area, in the region): a space has none. ``cells``: the characters' loose boxes (the font's
    height, for an ink test: an invisible glyph's outline, empty in some OCR fonts, says nothing
    of where the scan shows the word), one ``em`` tall where the font gives them no height."""
    found = {}
    codes, raw = chars.codes, chars.raw
    ia, ib, ic, id_, x0, y0 = rendered.canvas.inverse
    s, ax, ay = rendered.scale, rendered.area[0], rendered.area[1]
    width, height = rendered.size
    floor, ceil = math.floor, math.ceil
    unicode = F.FPDFText_GetUnicode
    for index in indices:
        if codes[index] != _UNDECIDED or unicode(raw, index) in _WHITESPACE:
            continue  # a space is decided by its neighbours
        box = _char_box(chars, index, em) if cells else _char_box(chars, index)
        if box is None:
            continue
        left, right, bottom, top = box[0] - x0, box[1] - x0, box[2] - y0, box[3] - y0
        if right <= left or top <= bottom:
            continue
        if not ib and not ic:
            u0, u1, v0, v1 = ia * left, ia * right, id_ * bottom, id_ * top
        else:
            us = (
                ia * left + ic * bottom,
                ia * right + ic * bottom,
                ia * left + ic * top,
                ia * right + ic * top,
            )
            vs = (
                ib * left + id_ * bottom,
                ib * right + id_ * bottom,
                ib * left + id_ * top,
                ib * right + id_ * top,
            )
            u0, u1, v0, v1 = min(us), max(us), min(vs), max(vs)
        if u0 > u1:
            u0, u1 = u1, u0
        if v0 > v1:
            v0, v1 = v1, v0
        grow = 0.0
        if cells:  # an OCR layer is laid over its scan to a pixel or two
            grow = _CELL_GROW_PX + min(u1 - u0, v1 - v0) * s / 8
        px0, py0 = max(floor((u0 - ax) * s - grow), 0), max(floor((v0 - ay) * s - grow), 0)
        px1, py1 = min(ceil((u1 - ax) * s + grow), width), min(ceil((v1 - ay) * s + grow), height)
        if px1 - px0 >= MIN_GLYPH_PX or py1 - py0 >= MIN_GLYPH_PX:  # else too small here to judge
            found[index] = (px0, py0, px1, py1)
    return found


def _char_box(chars: _Chars, index: int, em: float | None = None) -> tuple[float, float, float, float] | None:
    """A character's glyph box (left, right, bottom, top), or with ``em`` its cell: its loose
    box, ``em`` tall where the font gives it no height (an empty bounding box)."""
    cell = chars.loose(index) if em is not None else None
    if cell is not None and em is not None:
        if cell[3] - cell[1] < em / 4:
            return cell[0], cell[2], cell[1] - em / 4, cell[1] + em * 3 / 4
        return cell[0], cell[2], cell[1], cell[3]
    d = chars._doubles
    if not F.FPDFText_GetCharBox(chars.raw, index, *chars._double_refs):
        return None
    return d[0], d[1], d[2], d[3]


def _band(found: dict[int, tuple[int, int, int, int]]) -> tuple[int, int, int, int]:
    boxes = found.values()
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )


def _upright(found: dict[int, tuple[int, int, int, int]]) -> bool:
    """Whether the glyphs stand side by side in one row of pixels (a line of upright text): the
    row they make is no taller than twice the tallest of them."""
    band = _band(found)
    return band[3] - band[1] <= 2 * max(b[3] - b[1] for b in found.values())


def _ink_counts(image: Image.Image, found: dict[int, tuple[int, int, int, int]]) -> dict[int, float]:
    """The share of each glyph box's pixels that are ink: darker than the paper around them."""
    band = _band(found)
    pad = max(1, (band[3] - band[1]) // 4)
    outer = (
        max(band[0] - pad, 0),
        max(band[1] - pad, 0),
        min(band[2] + pad, image.width),
        min(band[3] + pad, image.height),
    )
    crop = image.crop(outer)
    paper = _paper(crop.histogram())
    ink = crop.point(_INK_LUTS[max(paper - INK_CONTRAST, -1) + 1])
    moved = {
        i: (b[0] - outer[0], b[1] - outer[1], b[2] - outer[0], b[3] - outer[1]) for i, b in found.items()
    }
    return _counts(ink, moved, share=True)


def _counts(
    marks: Image.Image, found: dict[int, tuple[int, int, int, int]], *, share: bool = False
) -> dict[int, float]:
    """Marked pixels under each glyph box (or their share of the box)."""
    if _upright(found):
        profile = _Profile(marks, _band(found))
        counts = {index: profile.count(pixels) for index, pixels in found.items()}
    else:
        counts = {index: float(marks.crop(pixels).histogram()[255]) for index, pixels in found.items()}
    if share:
        counts = {
            i: n / max((found[i][2] - found[i][0]) * (found[i][3] - found[i][1]), 1)
            for i, n in counts.items()
        }
    return counts


def _judge(chars: _Chars, rendered: _Rendered, obj: TextObject, glyphs: _Glyphs) -> None:
    inked = obj.invisible or bool(obj.flags & COVERED_BY_IMAGE)  # judged by the ink beneath
    em = obj.em if math.isfinite(obj.em) else 0.0
    found = _glyph_pixels(chars, rendered, chars.members.get(id(obj), []), cells=inked, em=em)
    if not found:
        return
    if obj.invisible:
        shares = _ink_counts(rendered.grey("bare"), found)
        reason = _CODE["invisible_mode" if obj.flags & INVISIBLE else "transparent"]
        for index, share in shares.items():
            chars.codes[index] = _SHOWN if share >= MIN_INK_SHARE else reason
        return
    if obj.flags & COVERED_BY_IMAGE:  # kept where the scan laid over it shows ink
        shown = {
            index: share >= MIN_INK_SHARE
            for index, share in _ink_counts(rendered.grey("shown"), found).items()
        }
    else:
        counts = _counts(rendered.changed(), found)
        shown = {index: count >= MIN_CHANGED_PIXELS for index, count in counts.items()}
        weak = [index for index, count in counts.items() if MIN_CHANGED_PIXELS <= count < STRONG_PIXELS]
        for index in weak if _paper_paint(obj) else []:
            shown[index] = not _same_colour(rendered, obj, found[index])
    hidden = [index for index, seen in shown.items() if not seen]
    for index in shown:
        if shown[index]:
            chars.codes[index] = _SHOWN
    if hidden:
        _withhold(chars, rendered, obj, glyphs, {index: found[index] for index in hidden})


def _withhold(
    chars: _Chars,
    rendered: _Rendered,
    obj: TextObject,
    glyphs: _Glyphs,
    hidden: dict[int, tuple[int, int, int, int]],
) -> None:
    """Glyphs that change no pixel, with the reason the census saw; kept where PDFium here cannot
    draw them at all."""
    reason = _reason(rendered, obj, _band(hidden))
    for index in hidden:
        code = F.FPDFText_GetUnicode(chars.raw, index)
        if reason in _PIXEL_ONLY and obj.paint[3] == 255 and not glyphs.drawable(obj, code):
            chars.codes[index] = _SHOWN  # no proof it is hidden
        else:
            chars.codes[index] = _CODE[reason]


def _smooth(chars: _Chars) -> None:
    """Within each object: spaces and undecided characters take their neighbours' decision
    (hidden only when both sides are hidden for the same reason); then islands of fewer than
    ``ISLAND`` hidden glyphs with shown ones (or the object's ends) on both sides are shown: a
    period's few pixels are weak evidence against the rest of its line."""
    codes = chars.codes
    for indices in chars.members.values():
        row = [codes[index] for index in indices]
        _fill_undecided(row)
        _flip_islands(row, shown=False)
        for index, code in zip(indices, row, strict=True):
            codes[index] = code


def _fill_undecided(row: list[int]) -> None:
    count, position = len(row), 0
    while position < count:
        if row[position] != _UNDECIDED:
            position += 1
            continue
        end = position
        while end < count and row[end] == _UNDECIDED:
            end += 1
        before = row[position - 1] if position > 0 else _SHOWN
        after = row[end] if end < count else before
        row[position:end] = [before if before == after and before > 0 else _SHOWN] * (end - position)
        position = end


def _flip_islands(row: list[int], *, shown: bool) -> None:
    """Runs of fewer than ``ISLAND`` shown (``shown``) or hidden glyphs whose sides are the
    other kind or the object's ends take their neighbours' decision."""
    count, position = len(row), 0
    while position < count:
        if (row[position] == _SHOWN) != shown:
            position += 1
            continue
        end = position
        while end < count and row[end] == row[position]:
            end += 1
        sides = [row[at] for at in (position - 1, end) if 0 <= at < count]
        other = [code for code in sides if (code == _SHOWN) != shown]
        if other and len(other) == len(sides) and end - position < ISLAND:
            row[position:end] = [other[0]] * (end - position)
        position = end


def decide(page: Any, textpage: Any, census: Census, text: str | None = None) -> dict[int, int]:
    """The hidden characters of the text page: index -> 1 + the index of its reason in
    ``REASONS`` (``text``: the page's whole text, when the caller has it)."""
    chars = _Chars(textpage, census, text)
    _geometry(chars, census.crop)
    doubtful: dict[int, TextObject] = {}
    for index, obj in chars.owner.items():
        if chars.codes[index] == _UNDECIDED:
            if obj.doubtful:
                doubtful[id(obj)] = obj
            else:
                chars.codes[index] = _SHOWN
    if doubtful:
        canvas = _Canvas(page)
        glyphs = _Glyphs()
        for region in _regions(list(doubtful.values()), census.crop):
            rendered = _render_region(canvas, census, region)
            for obj in region.objects:
                _judge(chars, rendered, obj, glyphs)
    _smooth(chars)
    return {index: code for index, code in chars.codes.items() if code > 0}


def _render_region(canvas: _Canvas, census: Census, region: _Region) -> _Rendered:
    """The renders the region's objects need: an invisible object the page without text
    (``bare``), one laid under a large image the page as it is (``shown``), any other the page
    with and without it."""
    compared = [obj for obj in region.objects if not obj.invisible and not obj.flags & COVERED_BY_IMAGE]
    scale = _scale(region, canvas, TARGET_EM_PX if compared else INK_EM_PX)
    area = canvas.device_box(region.box)
    rendered = _Rendered(canvas, area, scale)
    if any(not obj.invisible for obj in region.objects):
        rendered.shown = canvas.render(area, scale)
    if compared:
        drawn = [obj for obj in region.objects if not obj.invisible]
        rendered.without = _render_without(rendered, drawn + _twins(census, drawn))
    if any(obj.invisible for obj in region.objects):
        rendered.bare = _render_without(rendered, _texts_touching(census, region.box))
    image = rendered.shown if rendered.shown is not None else rendered.bare
    assert image is not None
    rendered.size = image.size
    return rendered


def _twins(census: Census, objects: list[TextObject]) -> list[TextObject]:
    """Other text objects drawn in the very place of these (PDFium's text page keeps only the
    first of two objects that draw the same text at the same place: a twin drawn after one in
    doubt shows or hides its characters, and is taken out with it)."""
    boxes = {_twin_key(obj.box): obj for obj in objects}
    boxes.pop(None, None)
    found = []
    for handle, box in zip(census.handles, census.boxes, strict=True):
        key = _twin_key(box)
        if key is not None and key in boxes and boxes[key].handle != handle:
            twin = census.text_object(handle)
            if twin is not None:
                found.append(twin)
    return found


def _twin_key(box: Box) -> tuple[int, ...] | None:
    """Where a box lies, to ``_TWIN_PT``; None for a box without a finite place (a stand-in)."""
    if not all(math.isfinite(v) for v in box):
        return None
    return tuple(round(v / _TWIN_PT) for v in box)


def _texts_touching(census: Census, box: Box) -> list[TextObject]:
    """Every text object of the page whose box meets ``box``."""
    found = []
    for handle, t in zip(census.handles, census.boxes, strict=True):
        if t[0] < box[2] and box[0] < t[2] and t[1] < box[3] and box[1] < t[3]:
            obj = census.text_object(handle)
            if obj is not None:
                found.append(obj)
    return found
