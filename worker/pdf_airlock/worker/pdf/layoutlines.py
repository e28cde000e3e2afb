"""The text lines and images of a page, with their style, from PDFium's text page.

Input: one page of an untrusted document, loaded by PDFium. PDFium's text page gives every
character with its box and font size, and marks where its own reading breaks a line. A line is
cut again where the baseline jumps (a hyphen PDFium dropped with the break comes back) and where
two characters on one baseline are far apart (table cells, two columns) or a vertical rule
runs between them (a ruled table's cell border), so each ``TextLine`` is one run of text. Each
keeps its box (measured from the top of the page), its dominant font size (weighted by
characters) and whether it is bold or italic (from its font's weight, flags and name:
``Helvetica-Bold``, ``ABCDEF+Arial,Bold``), asked once per text object. Images are found
among the page's objects, with the XObject name ``pdf_images`` lists them by when the page's
content names it directly. The work is linear in the page's characters, at most
``MAX_CHARS_PER_PAGE`` of them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from pdf_airlock.worker.pdf.textnorm import pdfium_text
from pdf_airlock.worker.pdf.visibility import NOTHING_HIDDEN, DocumentFacts, PageVisibility, page_visibility

__all__ = ["MAX_LINES_PER_PAGE", "PageLines", "TextLine", "VerticalRules", "char_text", "pdfium_page_lines"]

# A page with more text lines or characters than this keeps its first ones and says so (a bound
# on the work per page).
MAX_LINES_PER_PAGE: Final = 20_000
MAX_CHARS_PER_PAGE: Final = 200_000
MAX_OBJECTS_EXAMINED: Final = 5000  # page objects looked at for images
_BOLD: Final = re.compile(
    r"bold|black|heavy|semibold|demibold|extrabold|ultrabold|,bd\b|-bd\b", re.IGNORECASE
)
_ITALIC: Final = re.compile(r"italic|oblique|,it\b|-it\b", re.IGNORECASE)
_BOLD_SHARE: Final = 0.8
_SIZE_STEP: Final = 0.5


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of text: its box in points from the page's top-left corner, and its style."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool
    italic: bool

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 0.1)


@dataclass(frozen=True, slots=True)
class PageImage:
    """An image on the page: its XObject name (``pdf_images``'s ``name``) and box."""

    name: str
    x0: float
    x1: float
    top: float
    bottom: float


@dataclass(slots=True)
class PageLines:
    """A page's lines and images, its size in points, whether lines were left out, and what of
    its text a person would not see (left out of the lines: ``pdf.visibility``)."""

    width: float
    height: float
    lines: list[TextLine]
    images: list[PageImage]
    cut: bool = False
    visibility: PageVisibility = NOTHING_HIDDEN


_BREAKS: Final = frozenset({0x0A, 0x0D})
_SPACES: Final = frozenset({0x20, 0x09, 0xA0})
_PDFIUM_HYPHENS: Final = frozenset({0xFFFE, 0x02})  # a hyphen PDFium joined across a break
_HYPHEN_MARK: Final = "\ufffe"
_MAX_CODE_POINT: Final = 0x10FFFF
_CELL_GAP_EMS: Final = 1.0  # a gap this many font sizes wide on one baseline starts a new line
_BASELINE_JUMP: Final = 0.5  # a baseline this many font sizes away starts a new line
_BOLD_WEIGHT: Final = 600
_ITALIC_FLAG: Final = 1 << 6
_SCALED_SIZE: Final = 0.5  # a reported size under this share of the box's height is not the size
_BOX_TO_SIZE: Final = 0.8  # a loose box is about 1.2 font sizes high (ascent to descent)
_RULE_SLACK: Final = 0.5  # a rule this close outside the gap still parts the characters


@dataclass(slots=True)
class _Run:
    """The characters of one line being gathered, and their indices in the text page."""

    chars: list[str]
    x0: float
    x1: float
    y0: float
    y1: float
    em: float
    indices: list[int]


class VerticalRules:
    """Vertical rules (x, top, bottom, in points from the top-left) that cut a line of text."""

    def __init__(self, rules: Sequence[tuple[float, float, float]]) -> None:
        self.rules = sorted(rules)
        self.xs = [x for x, _, _ in self.rules]

    def between(self, left: float, right: float, top: float, bottom: float) -> bool:
        """Whether a rule crosses the gap from ``left`` to ``right`` at this height."""
        start = bisect.bisect_left(self.xs, left - _RULE_SLACK)
        end = bisect.bisect_right(self.xs, right + _RULE_SLACK)
        middle = (top + bottom) / 2
        return any(rule_top <= middle <= rule_bottom for _, rule_top, rule_bottom in self.rules[start:end])


class _Styles:
    """Bold and italic per text object, asked of PDFium once per object."""

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.seen: dict[int, tuple[bool, bool]] = {}

    def of(self, index: int) -> tuple[bool, bool]:
        import ctypes

        import pypdfium2.raw as pdfium_c

        found = pdfium_c.FPDFText_GetTextObject(self.raw, index)
        key = ctypes.cast(found, ctypes.c_void_p).value or 0
        if key not in self.seen:
            self.seen[key] = _font_style(found) if key else (False, False)
        return self.seen[key]


def _font_style(text_object: Any) -> tuple[bool, bool]:
    import ctypes

    import pypdfium2.raw as pdfium_c

    font = pdfium_c.FPDFTextObj_GetFont(text_object)
    if not font:
        return False, False
    size = pdfium_c.FPDFFont_GetBaseFontName(font, None, 0)
    name = ""
    if 0 < size <= 512:
        buffer = ctypes.create_string_buffer(size)
        pdfium_c.FPDFFont_GetBaseFontName(font, buffer, size)
        name = buffer.value.decode("latin-1", errors="replace")
    weight = pdfium_c.FPDFFont_GetWeight(font)
    flags = pdfium_c.FPDFFont_GetFlags(font)
    bold = weight >= _BOLD_WEIGHT or bool(_BOLD.search(name))
    italic = (flags > 0 and bool(flags & _ITALIC_FLAG)) or bool(_ITALIC.search(name))
    return bold, italic


def char_text(code: int) -> str:
    """The character PDFium reports, or U+FFFD for a code that is no character (PDFium passes
    on what a broken ToUnicode map says: beyond U+10FFFF, a lone surrogate)."""
    if not 0 < code <= _MAX_CODE_POINT or 0xD800 <= code <= 0xDFFF:
        return "\ufffd"
    return chr(code)


class _Gatherer:
    """Cuts a text page's characters into lines, one character at a time."""

    def __init__(self, raw: Any, page: PageLines, cuts: VerticalRules | None) -> None:
        import ctypes

        import pypdfium2.raw as pdfium_c

        self.c = pdfium_c
        self.raw = raw
        self.page = page
        self.styles = _Styles(raw)
        self.box = pdfium_c.FS_RECTF()
        self.size_box = pdfium_c.FS_RECTF()
        self.x = ctypes.c_double()
        self.y = ctypes.c_double()
        self.run: _Run | None = None
        self.cuts = cuts

    def add(self, index: int) -> None:
        code = self.c.FPDFText_GetUnicode(self.raw, index)
        if code in _BREAKS:
            self.close()
        elif code in _SPACES:
            if self.run is not None:
                self.run.chars.append(" ")
        elif self.c.FPDFText_GetLooseCharBox(self.raw, index, self.box):
            self._char(index, code)

    def _char(self, index: int, code: int) -> None:
        box = self.box
        run = self.run
        if run is not None:  # the bottom of a loose box stands for the baseline (font descent)
            jumped = abs(box.bottom - run.y0) > _BASELINE_JUMP * run.em and abs(box.top - run.y1) > (
                _BASELINE_JUMP * run.em
            )
            if jumped or box.left - run.x1 > _CELL_GAP_EMS * run.em or self._ruled(box):
                if jumped and run.chars and run.chars[-1] == _HYPHEN_MARK:
                    run.chars[-1] = "-"  # PDFium's mark of a hyphen it joined across the break
                self.close()
        if self.run is None:
            em = max(self._size(index), 1.0)
            self.run = _Run([], box.left, box.right, box.bottom, box.top, em, [])
        run = self.run
        run.chars.append(_HYPHEN_MARK if code in _PDFIUM_HYPHENS else char_text(code))
        run.indices.append(index)
        run.x0, run.x1 = min(run.x0, box.left), max(run.x1, box.right)
        run.y0, run.y1 = min(run.y0, box.bottom), max(run.y1, box.top)

    def _size(self, index: int) -> float:
        """The character's font size; where PDFium reports a size far below its box's height (a
        font set at size 1 and scaled by the text matrix), one read from the box."""
        size = float(self.c.FPDFText_GetFontSize(self.raw, index))
        if self.c.FPDFText_GetLooseCharBox(self.raw, index, self.size_box):
            height = self.size_box.top - self.size_box.bottom
            if size < _SCALED_SIZE * height:
                return float(height) * _BOX_TO_SIZE
        return size

    def _ruled(self, box: Any) -> bool:
        run = self.run
        if self.cuts is None or run is None or not self.cuts.xs:
            return False
        top, bottom = self.page.height - box.top, self.page.height - box.bottom
        return self.cuts.between(run.x1, max(box.left, run.x1), top, bottom)

    def close(self) -> None:
        """The open run as a line of the page, if it has any text. Its size and style are those
        of its first, middle and last characters (size: the middle one of the three; bold or
        italic: all three are)."""
        run, self.run = self.run, None
        if run is None or not run.indices:
            return
        text = " ".join(pdfium_text("".join(run.chars).replace(_HYPHEN_MARK, "-")).split())
        if not text:
            return
        samples = sorted({run.indices[0], run.indices[len(run.indices) // 2], run.indices[-1]})
        sizes = sorted(self._size(index) for index in samples)
        styles = [self.styles.of(index) for index in samples]
        self.page.lines.append(
            TextLine(
                text=text,
                x0=run.x0,
                x1=run.x1,
                top=self.page.height - run.y1,
                bottom=self.page.height - run.y0,
                size=round(sizes[len(sizes) // 2] / _SIZE_STEP) * _SIZE_STEP,
                bold=all(bold for bold, _ in styles),
                italic=all(italic for _, italic in styles),
            )
        )


def pdfium_page_lines(
    page: Any, image_names: list[str], facts: DocumentFacts, cuts: VerticalRules | None = None
) -> PageLines:
    """The lines and images of one PDFium page, without the characters a person would not see;
    ``image_names`` names the page's images in content order (the names ``pdf_images`` uses);
    ``facts``: the document's, for ``pdf.visibility``; ``cuts`` part lines where a rule runs."""
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    result = PageLines(width=width, height=height, lines=[], images=[])
    textpage = page.get_textpage()
    try:
        count = int(pdfium_c.FPDFText_CountChars(textpage.raw))
        if count > MAX_CHARS_PER_PAGE:
            count, result.cut = MAX_CHARS_PER_PAGE, True
        result.visibility = page_visibility(page, textpage, facts)
        hidden = result.visibility.codes
        gatherer = _Gatherer(textpage.raw, result, cuts)
        for index in range(count):
            if hidden and hidden[index]:
                continue
            gatherer.add(index)
            if len(result.lines) >= MAX_LINES_PER_PAGE:
                result.cut = True
                break
        gatherer.close()
    finally:
        textpage.close()
    result.images = _images(page, image_names, height)
    return result


def _images(page: Any, names: list[str], height: float) -> list[PageImage]:
    """The page's image objects (top level) in content order, named in that order."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    found: list[PageImage] = []
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    count = min(int(pdfium_c.FPDFPage_CountObjects(page.raw)), MAX_OBJECTS_EXAMINED)
    for index in range(count):
        obj = pdfium_c.FPDFPage_GetObject(page.raw, index)
        if pdfium_c.FPDFPageObj_GetType(obj) != pdfium_c.FPDF_PAGEOBJ_IMAGE:
            continue
        if not pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            continue
        name = names[len(found)] if len(found) < len(names) else ""
        found.append(PageImage(name, left.value, right.value, height - top.value, height - bottom.value))
    return found
