"""Layout characters that agree with PDFium where pdfminer could not decode a glyph.

pdfminer.six mis-decodes some fonts that PDFium reads: a glyph it cannot map becomes
``(cid:N)`` (a Type0 font whose ToUnicode map it ignores), or a wrong character (a TrueType font
PDFium decodes as double-byte CJK through its charset, a Type3 font's glyph names). The layout
engine keeps pdfminer's layout (its boxes, their reading order, the line breaks) and takes the
characters of such glyphs from PDFium, which reads the same content stream:

1. Gates. PDFium is asked about a page only when pdfminer's text of it is empty, has a
   ``(cid:N)``, or has a character of the Latin-1 supplement (where a double-byte font read one
   byte at a time lands, and where single-byte code tables disagree), a private-use or a
   replacement character; any other page costs one regular-expression search. Then a page is
   mended only when pdfminer wrote ``(cid:N)`` or PDFium's text (one text-page load) has
   characters pdfminer's lacks (as multisets, whitespace aside).
2. Anchors: PDFium's characters (not the spaces and line breaks it generates) with their origins,
   mapped to pdfminer's coordinates (its page CTM: the MediaBox origin removed, then /Rotate), on
   a grid. An LTChar (in text lines and in figures) takes the PDFium characters whose origin is
   its own within ``ORIGIN_TOLERANCE``: one each when as many LTChars share that origin (a letter
   and its mark), all of them when one does (one glyph, several code points).
3. Runs: where the engines' advance widths differ, origins drift apart along a text run. The
   LTChars of a line between two anchors take the PDFium characters between theirs when the
   counts agree and both go the same way (both engines keep content order within a line).
4. Boxes, for an LTChar still without a match that is ``(cid:N)`` or in a font pdfminer
   mis-decoded elsewhere on the page: with its box centre inside the glyph box PDFium read for
   the LTChar before it in the line, it is that glyph's tail (pdfminer read one double-byte code
   as two glyphs), emptied if that LTChar took PDFium's reading; else it takes the glyph no
   LTChar has whose box holds its centre, if only one does.
5. A page whose pdfminer text is empty (or only whitespace) takes PDFium's text.

An LTChar takes PDFium's reading when its own is ``(cid:N)``, or when PDFium's differs, means
something (no control, private-use, unassigned or replacement character) and is not a guess
(``FPDFText_HasUnicodeMapError``: PDFium found no map for the code and let the code stand in,
where pdfminer may well have read the font right). Where the match is ambiguous (unequal numbers
of LTChars and PDFium characters at one origin), or fewer than ``MIN_ANCHORED_SHARE`` of the
page's LTChars have a match (the engines disagree on where the glyphs are, or on the page's
geometry), pdfminer's characters stay.

Input: the untrusted document (bytes and password, opened here with PDFium) and pdfminer's layout
of its pages; nothing is assumed about either. Whatever PDFium cannot open or load leaves the page
as pdfminer read it. The work on a page is linear in its characters, bounded by
``MAX_PAGE_CHARS``, ``MAX_CELL_CHARS`` (glyphs piled on one spot) and ``MAX_BOX_CELLS``.
"""

from __future__ import annotations

import ctypes
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c
import regex
from pdfminer.layout import LTChar, LTContainer, LTTextLine

from pdf_airlock.worker.pdf.textnorm import layout_text, pdfium_text

__all__ = [
    "MAX_BOX_CELLS",
    "MAX_CELL_CHARS",
    "MAX_PAGE_CHARS",
    "MIN_ANCHORED_SHARE",
    "ORIGIN_TOLERANCE",
    "Mender",
    "hidden_layout_chars",
]

ORIGIN_TOLERANCE: Final = 0.1  # points: the same pen position in both engines (PDFium uses float32)
MIN_ANCHORED_SHARE: Final = 0.1  # of a page's LTChars with a PDFium character at their origin
MAX_PAGE_CHARS: Final = 100_000  # PDFium characters on a page past which it is not mended
MAX_BOX_CELLS: Final = 16  # grid cells a glyph box may cover; a larger box is not looked up
MAX_CELL_CHARS: Final = 64  # PDFium characters in one grid cell past which its LTChars stay
_ORIGIN_CELL: Final = 1.0  # points
_BOX_CELL: Final = 12.0  # points
_CID: Final = "(cid:"
_HYPHEN_CODE: Final = 2  # PDFium's code for a hyphen it judged to end a line (U+FFFE in its text)
_MAX_CODE_POINT: Final = 0x10FFFF
_SURROGATES: Final = (0xD800, 0xDC00, 0xE000)  # high from, low from, low until
_LATIN1: Final = regex.compile("[\u00a0-\u00ff]+")
_MEANINGLESS: Final = regex.compile(r"[\p{Cc}\p{Co}\p{Cn}\p{Cs}\ufffd]")
_SUSPECT: Final = regex.compile(r"[\x80-\xff\p{Co}\ufffd]|\(cid:")  # what a mis-decoded font leaves
_Matrix = tuple[float, float, float, float, float, float]
_Box = tuple[float, float, float, float]


class Mender:
    """Mends the pages pdfminer laid out for one document; opens it with PDFium on first use
    (or reads ``document``, the caller's PDFium copy of the same bytes)."""

    def __init__(
        self,
        data: bytes,
        password: str | None,
        strings: Callable[[Any], Iterable[str]],
        document: Any = None,
    ) -> None:
        self._data = data
        self._password = password
        self._strings = strings  # a page's text pieces in pdfminer's order
        self._document: Any = document
        self._owned = document is None
        self._failed = False

    def text(
        self,
        index: int,
        layout: Any,
        strings: Callable[[Any], Iterable[str]] | None = None,
        shown: Callable[[str, Any], str] | None = None,
    ) -> str:
        """The raw text of pdfminer's page ``index`` (``layout``, an LTPage) as ``strings`` (or
        the mender's own) gives it, after the characters pdfminer could not decode and PDFium
        reads were mended. ``shown`` turns PDFium's text of the page (and its text page) into
        the part of it a person sees, which is all PDFium's reading may add."""
        strings = strings or self._strings
        raw = "".join(strings(layout))
        if raw.strip() and not _SUSPECT.search(raw):
            return raw
        document = self._open()
        if document is None:
            return raw
        try:
            page = document[index]
        except (pdfium.PdfiumError, IndexError):
            return raw
        try:
            textpage = page.get_textpage()
            try:
                return self._mended(raw, layout, page, textpage, strings=strings, shown=shown)
            finally:
                textpage.close()
        except pdfium.PdfiumError:
            return raw
        finally:
            page.close()

    def close(self) -> None:
        if self._document is not None and self._owned:
            self._document.close()
        self._document = None

    def _open(self) -> Any:
        if self._document is None and not self._failed:
            try:
                self._document = pdfium.PdfDocument(self._data, password=self._password or None)
            except pdfium.PdfiumError:
                self._failed = True
        return self._document

    def _mended(
        self,
        raw: str,
        layout: Any,
        page: Any,
        textpage: Any,
        *,
        strings: Callable[[Any], Iterable[str]],
        shown: Callable[[str, Any], str] | None,
    ) -> str:
        theirs: str = textpage.get_text_range()
        if shown is not None:
            theirs = shown(theirs, textpage)
        if not raw.strip():
            return pdfium_text(theirs) if theirs.strip() else raw
        if not _needs_mending(raw, theirs) or not _mend_page(layout, page, textpage):
            return raw
        return "".join(strings(layout))


def hidden_layout_chars(layout: Any, page: Any, textpage: Any, codes: tuple[int, ...]) -> set[int] | None:
    """The LTChars of pdfminer's page (``id`` of each) that stand for characters PDFium's text
    page hides (``codes``: ``pdf.visibility``'s, per character). An LTChar is matched to PDFium's
    characters by origin (steps 2 and 3 above); one that matches none, or an ambiguous group, is
    hidden when its box centre lies in the loose box of a hidden character and of no shown one.
    None when the engines cannot be matched on this page (too few anchors, too many characters):
    the caller then takes PDFium's visible text."""
    chars, lines = _layout_lines(layout)
    units = _read_units(textpage)
    if not chars:
        return set()
    if units is None:
        return None
    best = _anchored_page(page, chars, lines, units)
    if best is None:
        return None
    _fill_runs(best)
    hidden_units = [codes[index] > 0 if index < len(codes) else False for index in units.indices]
    found = {id(chars[n]) for n, assigned in best.assigned.items() if all(hidden_units[u] for u in assigned)}
    loose: dict[tuple[int, int], list[tuple[_Box, bool]]] = {}
    for unit, hidden in enumerate(hidden_units):
        box = _loose_box(best, unit)
        if box is not None:
            loose.setdefault(_cell((box[0] + box[2]) / 2, (box[1] + box[3]) / 2, _BOX_CELL), []).append(
                (box, hidden)
            )
    for number, char in enumerate(chars):
        if number in best.assigned:
            continue
        x, y = _centre(char)
        cx, cy = _cell(x, y, _BOX_CELL)
        holding = [
            hidden
            for nx in (cx - 1, cx, cx + 1)
            for ny in (cy - 1, cy, cy + 1)
            for box, hidden in loose.get((nx, ny), ())
            if box[0] <= x <= box[2] and box[1] <= y <= box[3]
        ]
        if holding and all(holding):
            found.add(id(char))
    return found


def _needs_mending(raw: str, theirs: str) -> bool:
    """pdfminer wrote a glyph code, or PDFium read characters pdfminer's text lacks."""
    if _CID in raw:
        return True
    missing = Counter("".join(pdfium_text(theirs).split()))
    missing.subtract("".join(layout_text(raw).split()))
    return any(count > 0 for count in missing.values())


class _Units:
    """PDFium's characters of a page, generated ones left out (a surrogate pair is one), with
    their texts and origins; their text objects and map errors are asked of PDFium only for the
    characters a rule looks at."""

    def __init__(self, textpage: Any) -> None:
        self.raw = textpage.raw
        self.texts: list[str] = []
        self.indices: list[int] = []  # in PDFium's text page
        self.xs: list[float] = []  # origins, user space
        self.ys: list[float] = []
        self._objects: dict[int, int] = {}
        self._guessed: dict[int, bool] = {}

    def __len__(self) -> int:
        return len(self.texts)

    def text_object(self, unit: int) -> int:
        """The text object (its address) the character belongs to."""
        if unit not in self._objects:
            found = pdfium_c.FPDFText_GetTextObject(self.raw, self.indices[unit])
            self._objects[unit] = ctypes.cast(found, ctypes.c_void_p).value or 0
        return self._objects[unit]

    def guessed(self, unit: int) -> bool:
        """PDFium found no map for the character's code and let the code stand in for it."""
        if unit not in self._guessed:
            self._guessed[unit] = pdfium_c.FPDFText_HasUnicodeMapError(self.raw, self.indices[unit]) == 1
        return self._guessed[unit]


@dataclass
class _Page:
    """One page being mended: pdfminer's characters by line and the PDFium characters they take."""

    chars: list[LTChar]
    lines: list[range]  # of ``chars``, one text line each
    units: _Units
    ctm: _Matrix
    points: list[tuple[float, float]] = field(default_factory=list)  # unit origins, pdfminer's space
    assigned: dict[int, tuple[int, ...]] = field(default_factory=dict)  # LTChar -> units
    owner: dict[int, int] = field(default_factory=dict)  # unit -> the last LTChar that has it
    blocked: set[int] = field(default_factory=set)  # LTChars in an ambiguous group
    tails: dict[int, int] = field(default_factory=dict)  # LTChar -> the LTChar whose glyph it ends

    def __post_init__(self) -> None:
        self.points = [
            _apply_matrix(self.ctm, x, y) for x, y in zip(self.units.xs, self.units.ys, strict=True)
        ]

    def anchored(self) -> int:
        return len(self.assigned) + len(self.blocked)

    def free(self, number: int) -> bool:
        return number not in self.assigned and number not in self.blocked and number not in self.tails


def _mend_page(layout: Any, page: Any, textpage: Any) -> bool:
    """Steps 2-4 on one page; whether any LTChar's text changed."""
    chars, lines = _layout_lines(layout)
    units = _read_units(textpage)
    if not chars or units is None:
        return False
    best = _anchored_page(page, chars, lines, units)
    if best is None:
        return False
    _fill_runs(best)
    _place_by_boxes(best)
    return _apply(best)


def _layout_lines(layout: Any) -> tuple[list[LTChar], list[range]]:
    """Every LTChar of the page in pdfminer's order, and the ranges of that list that are one text
    line each (an LTChar outside a line is a line of its own)."""
    chars: list[LTChar] = []
    lines: list[range] = []
    stack: list[Iterator[Any]] = [iter(layout)]
    while stack:
        element = next(stack[-1], None)
        if element is None:
            stack.pop()
        elif isinstance(element, LTTextLine):
            start = len(chars)
            chars.extend(item for item in element if isinstance(item, LTChar))
            lines.append(range(start, len(chars)))
        elif isinstance(element, LTChar):
            lines.append(range(len(chars), len(chars) + 1))
            chars.append(element)
        elif isinstance(element, LTContainer):
            stack.append(iter(element))
    return chars, lines


def _read_units(textpage: Any) -> _Units | None:
    raw = textpage.raw
    count = int(pdfium_c.FPDFText_CountChars(raw))
    if count <= 0 or count > MAX_PAGE_CHARS:
        return None
    units = _Units(textpage)
    x, y = ctypes.c_double(), ctypes.c_double()
    index = 0
    while index < count:
        first = index
        index += 1
        if pdfium_c.FPDFText_IsGenerated(raw, first) == 1:
            continue
        code = int(pdfium_c.FPDFText_GetUnicode(raw, first))
        if _SURROGATES[0] <= code < _SURROGATES[1] and index < count:
            low = int(pdfium_c.FPDFText_GetUnicode(raw, index))
            if _SURROGATES[1] <= low < _SURROGATES[2]:
                code = 0x10000 + ((code - _SURROGATES[0]) << 10) + (low - _SURROGATES[1])
                index += 1
        if not pdfium_c.FPDFText_GetCharOrigin(raw, first, x, y):
            continue
        units.texts.append(_unit_text(raw, first, code))
        units.indices.append(first)
        units.xs.append(x.value)
        units.ys.append(y.value)
    return units


def _unit_text(raw: Any, index: int, code: int) -> str:
    if code == _HYPHEN_CODE and pdfium_c.FPDFText_IsHyphen(raw, index) == 1:
        return "-"
    if code <= 0 or code > _MAX_CODE_POINT or _SURROGATES[0] <= code < _SURROGATES[2]:
        return ""
    return chr(code)


def _anchored_page(page: Any, chars: list[LTChar], lines: list[range], units: _Units) -> _Page | None:
    """The page's characters matched to PDFium's under the first candidate CTM that anchors
    ``MIN_ANCHORED_SHARE`` of them (else the best one's), or None below that share."""
    best: _Page | None = None
    for ctm in _ctm_candidates(page):
        candidate = _Page(chars, lines, units, ctm)
        _anchor(candidate)
        if best is None or candidate.anchored() > best.anchored():
            best = candidate
        if best.anchored() >= MIN_ANCHORED_SHARE * len(chars):
            break
    if best is None or best.anchored() < MIN_ANCHORED_SHARE * len(chars):
        return None
    return best


def _ctm_candidates(page: Any) -> Iterator[_Matrix]:
    """pdfminer's page CTM for the page's own MediaBox (unnormalised, as pdfminer reads it), then
    for PDFium's page box (for a MediaBox inherited from the page tree, which PDFium's
    ``FPDFPage_GetMediaBox`` does not follow)."""
    rotation = int(page.get_rotation())
    mediabox = page.get_mediabox(fallback_ok=False)
    if mediabox is not None:
        yield _ctm(mediabox, rotation)
    yield _ctm(page.get_bbox(), rotation)


def _ctm(box: tuple[float, float, float, float], rotation: int) -> _Matrix:
    """The matrix of ``pdfminer.pdfinterp.PDFPageInterpreter.process_page``."""
    x0, y0, x1, y1 = (float(value) for value in box)
    if rotation == 90:
        return (0.0, -1.0, 1.0, 0.0, -y0, x1)
    if rotation == 180:
        return (-1.0, 0.0, 0.0, -1.0, x1, y1)
    if rotation == 270:
        return (0.0, 1.0, -1.0, 0.0, y1, -x0)
    return (1.0, 0.0, 0.0, 1.0, -x0, -y0)


def _apply_matrix(m: _Matrix, x: float, y: float) -> tuple[float, float]:
    return m[0] * x + m[2] * y + m[4], m[1] * x + m[3] * y + m[5]


def _cell(x: float, y: float, size: float) -> tuple[int, int]:
    return math.floor(x / size), math.floor(y / size)


def _anchor(page: _Page) -> None:
    """Step 2: each LTChar and the PDFium characters at its origin."""
    grid: dict[tuple[int, int], list[int]] = {}
    for unit, (x, y) in enumerate(page.points):
        grid.setdefault(_cell(x, y, _ORIGIN_CELL), []).append(unit)
    groups: dict[tuple[int, ...], list[int]] = {}
    for number, char in enumerate(page.chars):
        near = _near(page, grid, char.matrix[4], char.matrix[5])
        if near is None:
            page.blocked.add(number)
        elif near:
            groups.setdefault(near, []).append(number)
    for found, members in groups.items():
        _resolve(page, members, found)


def _near(page: _Page, grid: dict[tuple[int, int], list[int]], x: float, y: float) -> tuple[int, ...] | None:
    """The PDFium characters whose origin is (x, y) within the tolerance, in PDFium's order;
    None where more than ``MAX_CELL_CHARS`` are piled up around it."""
    left, bottom = _cell(x - ORIGIN_TOLERANCE, y - ORIGIN_TOLERANCE, _ORIGIN_CELL)
    right, top = _cell(x + ORIGIN_TOLERANCE, y + ORIGIN_TOLERANCE, _ORIGIN_CELL)
    cells = [grid.get((cx, cy), []) for cx in range(left, right + 1) for cy in range(bottom, top + 1)]
    if sum(map(len, cells)) > MAX_CELL_CHARS:
        return None
    points = page.points
    near = [
        unit
        for cell in cells
        for unit in cell
        if abs(points[unit][0] - x) <= ORIGIN_TOLERANCE and abs(points[unit][1] - y) <= ORIGIN_TOLERANCE
    ]
    return tuple(near) if len(cells) == 1 else tuple(sorted(near))  # a cell lists its units in order


def _resolve(page: _Page, members: list[int], found: tuple[int, ...]) -> None:
    """LTChars sharing an origin and the PDFium characters there: paired in order when as many,
    all to the one LTChar, the one character to LTChars that all read alike (the same glyph drawn
    twice); anything else, or a character another group took, is ambiguous."""
    if any(unit in page.owner for unit in found):
        page.blocked.update(members)
    elif len(members) == len(found):
        for number, unit in zip(members, found, strict=True):
            _assign(page, number, (unit,))
    elif len(members) == 1:
        _assign(page, members[0], found)
    elif len(found) == 1 and len({page.chars[number].get_text() for number in members}) == 1:
        for number in members:
            _assign(page, number, found)
    else:
        page.blocked.update(members)


def _assign(page: _Page, number: int, units: tuple[int, ...]) -> None:
    page.assigned[number] = units
    for unit in units:
        page.owner[unit] = number


def _fill_runs(page: _Page) -> None:
    """Step 3: unmatched LTChars of a line between anchors take the PDFium characters between
    the anchors' ones when the counts agree. A run next to an ambiguous LTChar stays."""
    for line in page.lines:
        run: list[int] = []
        before: int | None = None
        blocked = False
        for number in [*line, None]:
            if number is not None and page.free(number):
                run.append(number)
                continue
            after = number if number is not None and number in page.assigned else None
            ends_blocked = number is not None and number in page.blocked
            if run and not blocked and not ends_blocked:
                _fill(page, run, before, after)
            run, before, blocked = [], after, ends_blocked


def _fill(page: _Page, run: list[int], before: int | None, after: int | None) -> None:
    gap = _gap(page, len(run), before, after)
    if gap is None or any(unit in page.owner for unit in gap) or not _same_way(page, run, gap):
        return
    for number, unit in zip(run, gap, strict=True):
        _assign(page, number, (unit,))


def _gap(page: _Page, size: int, before: int | None, after: int | None) -> range | None:
    """The PDFium characters a run of ``size`` LTChars stands for: those between the anchors', or
    the rest of the text object after (or before) the one anchor, if the counts agree."""
    units = page.units
    if before is not None and after is not None:
        gap = range(max(page.assigned[before]) + 1, min(page.assigned[after]))
        return gap if len(gap) == size else None
    if before is not None:
        anchor = max(page.assigned[before])
        gap = range(anchor + 1, anchor + 1 + size)
        beyond = gap.stop if gap.stop < len(units) else None
    elif after is not None:
        anchor = min(page.assigned[after])
        gap = range(anchor - size, anchor)
        beyond = gap.start - 1 if gap.start > 0 else None
    else:
        return None
    if gap.start < 0 or gap.stop > len(units):
        return None
    home = units.text_object(anchor)
    if beyond is not None and units.text_object(beyond) == home:
        return None  # the run is not the whole rest of the anchor's text object
    return gap if all(units.text_object(unit) == home for unit in gap) else None


def _same_way(page: _Page, run: list[int], gap: range) -> bool:
    """Both engines' characters of a run progress the same way on the page."""
    if len(run) == 1:
        return True
    first, last = page.chars[run[0]].matrix, page.chars[run[-1]].matrix
    (x0, y0), (x1, y1) = page.points[gap[0]], page.points[gap[-1]]
    return (last[4] - first[4]) * (x1 - x0) + (last[5] - first[5]) * (y1 - y0) > 0


class _Boxes:
    """PDFium's loose glyph boxes (font ascent to descent, origin to advance) in pdfminer's space,
    read when needed; the boxes of the characters no LTChar has yet are on a grid."""

    def __init__(self, page: _Page) -> None:
        self._page = page
        self._boxes: dict[int, _Box | None] = {}
        self._grid: dict[tuple[int, int], list[int]] = {}
        for unit in range(len(page.units)):
            box = None if unit in page.owner else self.box(unit)
            if box is None:
                continue
            (left, bottom), (right, top) = _cell(box[0], box[1], _BOX_CELL), _cell(box[2], box[3], _BOX_CELL)
            if (right - left + 1) * (top - bottom + 1) > MAX_BOX_CELLS:
                continue
            for cx in range(left, right + 1):
                for cy in range(bottom, top + 1):
                    self._grid.setdefault((cx, cy), []).append(unit)

    def box(self, unit: int) -> _Box | None:
        if unit not in self._boxes:
            self._boxes[unit] = _loose_box(self._page, unit)
        return self._boxes[unit]

    def holds(self, unit: int, char: LTChar) -> bool:
        """Whether the PDFium character's box holds the LTChar's box centre."""
        box = self.box(unit)
        x, y = _centre(char)
        return box is not None and box[0] <= x <= box[2] and box[1] <= y <= box[3]

    def containing(self, char: LTChar) -> int | None:
        """The one PDFium character no LTChar has whose box holds the LTChar's box centre, if
        exactly one does."""
        cell = self._grid.get(_cell(*_centre(char), _BOX_CELL), [])
        if len(cell) > MAX_CELL_CHARS:
            return None
        found = [unit for unit in cell if unit not in self._page.owner and self.holds(unit, char)]
        return found[0] if len(found) == 1 else None


def _centre(char: LTChar) -> tuple[float, float]:
    return (char.x0 + char.x1) / 2, (char.y0 + char.y1) / 2


def _loose_box(page: _Page, unit: int) -> _Box | None:
    rect = pdfium_c.FS_RECTF()
    if not pdfium_c.FPDFText_GetLooseCharBox(page.units.raw, page.units.indices[unit], rect):
        return None
    x0, y0 = _apply_matrix(page.ctm, rect.left, rect.bottom)
    x1, y1 = _apply_matrix(page.ctm, rect.right, rect.top)
    return min(x0, x1), min(y0, y1), max(x0, x1), max(y0, y1)


def _place_by_boxes(page: _Page) -> None:
    """Step 4, for the LTChars still without a match that are glyph codes or in a font pdfminer
    mis-decoded elsewhere on the page: one inside the glyph box PDFium read for the LTChar before
    it in the line is that glyph's tail; else it takes the glyph its box centre is in, if that
    is the only one and no LTChar has it."""
    fonts = {page.chars[number].fontname for number in page.assigned if _replaces(page, number)}
    boxes: _Boxes | None = None
    for line in page.lines:
        held: int | None = None  # the PDFium character the LTChar before has, or is a tail of
        for number in line:
            char = page.chars[number]
            if not page.free(number) or not (char.fontname in fonts or _is_cid(char.get_text())):
                held = page.assigned[number][-1] if number in page.assigned else None
                continue
            boxes = boxes or _Boxes(page)
            if held is not None and boxes.holds(held, char):
                head = page.owner[held]
                page.tails[number] = page.tails.get(head, head)
                page.owner[held] = number
                continue
            held = boxes.containing(char)
            if held is not None:
                _assign(page, number, (held,))


def _replaces(page: _Page, number: int) -> bool:
    """Whether the LTChar takes PDFium's reading: its own is a glyph code and PDFium has a
    character, or PDFium's reading differs, means something and is not a guess."""
    ours = page.chars[number].get_text()
    units = page.assigned[number]
    theirs = "".join(page.units.texts[unit] for unit in units)
    if theirs == ours or not theirs:
        return False
    if _is_cid(ours):
        return True
    if _MEANINGLESS.search(theirs) or any(page.units.guessed(unit) for unit in units):
        return False
    if ours.isalpha() and not theirs.isalpha():  # 'Allgäu' is not 'Allg‰u'
        return False
    # Two Latin-1 readings of one code are a code-table dispute ('Durée' against 'DurÈe'): pdfminer's
    # stays. A double-byte font read one byte at a time gives Latin-1 against CJK: PDFium's wins.
    return not (_LATIN1.fullmatch(ours) and _LATIN1.fullmatch(theirs))


def _is_cid(text: str) -> bool:
    return text.startswith(_CID) and text.endswith(")")


def _apply(page: _Page) -> bool:
    """Each matched LTChar takes PDFium's reading where ``_replaces`` says so, and the tails of a
    glyph that did are emptied. Whether any text changed."""
    changed = [number for number in page.assigned if _replaces(page, number)]
    for number in changed:
        _set_text(page.chars[number], "".join(page.units.texts[unit] for unit in page.assigned[number]))
    heads = set(changed)
    for number, head in page.tails.items():
        if head in heads:
            _set_text(page.chars[number], "")
    return bool(changed)


def _set_text(char: LTChar, text: str) -> None:
    """pdfminer keeps an LTChar's text in ``_text`` (its ``get_text``); a line or a box reads its
    characters' texts again whenever it is asked for its own."""
    char._text = text  # no public setter
