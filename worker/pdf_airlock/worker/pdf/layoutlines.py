"""The text lines and images of a page, with their style, from PDFium's text page.

The first stages of the Markdown parser's pipeline (characters -> runs -> lines). Input: one page
of an untrusted document, loaded by PDFium. PDFium's text page gives every character with its
box and font size, and marks where its own reading breaks a line. Characters enter the pipeline
in one place (``_Gatherer.add``). A line is cut again where the baseline jumps (a hyphen PDFium
dropped with the break comes back) and where two characters on one baseline are far apart
(table cells, two columns) or a vertical rule runs between them (a ruled table's cell border),
so each ``TextLine`` is one run of text: never the characters of two columns. A hyphen PDFium
judged a word's break at the line's end (its U+FFFE) ends the line as ``LINE_END_HYPHEN``: the
next line joins it without the hyphen, as PDFium's flat text does (``structure.join_line``).

Text turned against the page (an arXiv identifier stamped up the margin, a plot's vertical
axis label, a diagonal watermark) is never part of a body line: where a character starts a run,
jumps off its run's baseline or steps back along it, PDFium's angle for it is read, and a
character set at an angle goes to a run of its own angle, kept in ``PageLines.turned``.
Ideographs and kana stacked one under the other (vertical CJK writing) form one vertical line
(``TextLine.vertical``), read top to bottom. Each
keeps its box (measured from the top of the page), its dominant font size (weighted by
characters) and whether it is bold or italic (from its font's weight, flags and name:
``Helvetica-Bold``, ``ABCDEF+Arial,Bold``), asked once per text object. Images are found
among the page's objects, with the XObject name the images parser lists them by when the page's
content names it directly. The work is linear in the page's characters, at most
``MAX_CHARS_PER_PAGE`` of them.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from pdf_airlock.worker.pdf.textnorm import pdfium_text
from pdf_airlock.worker.pdf.visibility import NOTHING_HIDDEN, DocumentFacts, PageVisibility, page_visibility

__all__ = [
    "CJK",
    "LINE_END_HYPHEN",
    "MAX_LINES_PER_PAGE",
    "PageLines",
    "TextLine",
    "VerticalRules",
    "char_text",
    "page_turn",
    "pdfium_page_lines",
]

# A page with more text lines or characters than this keeps its first ones and says so (a bound
# on the work per page).
MAX_LINES_PER_PAGE: Final = 20_000
MAX_CHARS_PER_PAGE: Final = 200_000
MAX_OBJECTS_EXAMINED: Final = 5000  # page objects looked at for images
_BOLD: Final = re.compile(  # TeX's fonts name bold "bx": CMBX10, SFBX1200, CMSSBX10
    r"bold|black|heavy|semibold|demibold|extrabold|ultrabold|,bd\b|-bd\b|-medi\b|(^|\+)(cm|ec|sf|tc|lm)[a-z]*bx",
    re.IGNORECASE,
)
_ITALIC: Final = re.compile(  # and italic "ti" or slanted "sl": CMTI10, SFTI1000, CMBXTI10, ECSL1000
    r"italic|oblique|ital$|,it\b|-it\b|(^|\+)(cm|ec|sf|tc|lm)[a-z]*(ti|sl)\d", re.IGNORECASE
)
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
    angle: int = 0  # degrees the text is turned from the page's upright (PDFium's, clockwise)
    vertical: bool = False  # CJK characters stacked top to bottom
    lead: str = ""  # the bold or italic words the line opens with, its style changing after them
    words: tuple[tuple[float, float], ...] = ()  # each word's x0 and x1, for a line of two or more

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 0.1)


@dataclass(frozen=True, slots=True)
class PageImage:
    """An image on the page: its XObject name (``parsers.images``'s ``name``) and box."""

    name: str
    x0: float
    x1: float
    top: float
    bottom: float


@dataclass(slots=True)
class PageLines:
    """A page's lines and images, its size in points, whether lines were left out, and what of
    its text a person would not see (left out of the lines: ``pdf.visibility``); ``turned``: the
    lines of text set at an angle to the page (never among ``lines``)."""

    width: float
    height: float
    lines: list[TextLine]
    images: list[PageImage]
    cut: bool = False
    turned: list[TextLine] = field(default_factory=list)
    visibility: PageVisibility = NOTHING_HIDDEN


_BREAKS: Final = frozenset({0x0A, 0x0D})
_SPACES: Final = frozenset({0x20, 0x09, 0xA0})
_PDFIUM_HYPHENS: Final = frozenset({0xFFFE, 0x02})  # a hyphen PDFium joined across a break
_HYPHEN_MARK: Final = "\ufffe"
LINE_END_HYPHEN: Final = "\u00ad"  # a line's last character: a hyphen PDFium reads as a word's break
_MAX_CODE_POINT: Final = 0x10FFFF
_HIGH_SURROGATES: Final = (0xD800, 0xDC00)  # high from, low from
_LOW_SURROGATES_END: Final = 0xE000
_CELL_GAP_EMS: Final = 1.0  # a gap this many font sizes wide on one baseline starts a new line
_BASELINE_JUMP: Final = 0.5  # a baseline this many font sizes away starts a new line
_BOLD_WEIGHT: Final = 600
_ITALIC_FLAG: Final = 1 << 6
_SCALED_SIZE: Final = 0.5  # a reported size under this share of the box's height is not the size
_BOX_TO_SIZE: Final = 0.8  # a loose box is about 1.2 font sizes high (ascent to descent)
_RULE_SLACK: Final = 0.5  # a rule this close outside the gap still parts the characters
_UPRIGHT_DEGREES: Final = 5.0  # a character turned less than this from the page's upright is upright
_SAME_ANGLE_DEGREES: Final = 2.0  # characters of one turned run share their angle within this
_TURNED_REACH_EMS: Final = 1.5  # the next character of a turned run is at most this far from the last
_BACKSTEP_EMS: Final = 0.5  # a character this far left of its run's end is looked at again
_VERTICAL_SLACK_EMS: Final = 0.6  # a stacked character starts within this of the one above's foot
_FULL_TURN: Final = 360.0
_QUARTER: Final = 90
_STACKED_OVERLAP: Final = 0.5  # of the narrower box's width, two stacked characters share
CJK: Final = re.compile(  # ideographs, kana, hangul and their full-width punctuation
    "[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


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
    last: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)  # the last box: left, right, bottom, top
    angle: float = 0.0
    vertical: bool = False
    at: list[int] = field(default_factory=list)  # where each of ``indices`` is in ``chars``
    spaces: list[tuple[int, float]] = field(default_factory=list)  # where in ``chars``, the word's end

    def take(self, index: int, char: str, box: Any) -> None:
        """A character and its box (PDFium's ``FS_RECTF``) onto the run."""
        self.at.append(len(self.chars))
        self.chars.append(char)
        self.indices.append(index)
        self.x0, self.x1 = min(self.x0, box.left), max(self.x1, box.right)
        self.y0, self.y1 = min(self.y0, box.bottom), max(self.y1, box.top)
        self.last = (box.left, box.right, box.bottom, box.top)


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


class _Turn:
    """A character box read in the page's user space, turned to where the page is shown: a page
    with ``/Rotate`` is read as a person sees it (PDFium's boxes and angles are the unrotated
    page's)."""

    def __init__(self, rotation: int, bbox: tuple[float, float, float, float]) -> None:
        import pypdfium2.raw as pdfium_c

        self.loose = pdfium_c.FPDFText_GetLooseCharBox
        self.rotation = rotation
        self.x0, self.y0, self.x1, self.y1 = bbox

    def point(self, x: float, y: float) -> tuple[float, float]:
        """A point of user space where the shown page has it (x right, y up from its foot)."""
        if self.rotation == _QUARTER:
            return y - self.y0, self.x1 - x
        if self.rotation == 2 * _QUARTER:
            return self.x1 - x, self.y1 - y
        return self.y1 - y, x - self.x0  # three quarters

    def __call__(self, raw: Any, index: int, box: Any) -> bool:
        if not self.loose(raw, index, box):
            return False
        ax, ay = self.point(box.left, box.bottom)
        bx, by = self.point(box.right, box.top)
        box.left, box.right = min(ax, bx), max(ax, bx)
        box.bottom, box.top = min(ay, by), max(ay, by)
        return True


class _Gatherer:
    """Cuts a text page's characters into lines, one character at a time (``add``: the one place
    where the characters of PDFium's text page enter the pipeline)."""

    def __init__(
        self, raw: Any, page: PageLines, cuts: VerticalRules | None, turn: _Turn | None = None
    ) -> None:
        import ctypes

        import pypdfium2.raw as pdfium_c

        self.c = pdfium_c
        self.raw = raw
        self.page = page
        self.loose: Any = turn if turn is not None else pdfium_c.FPDFText_GetLooseCharBox
        self.rotation = turn.rotation if turn is not None else 0
        self.styles = _Styles(raw)
        self.box = pdfium_c.FS_RECTF()
        self.size_box = pdfium_c.FS_RECTF()
        self.x = ctypes.c_double()
        self.y = ctypes.c_double()
        self.run: _Run | None = None
        self.turned: _Run | None = None  # the open run of text set at an angle
        self.last_turned = False  # whether the last character went to ``turned``
        self.paired = -1  # the index of a low surrogate already read with its high one
        self.cuts = cuts

    def feed(self, count: int, codes: list[int] | None, hidden: Sequence[int] | None) -> None:
        """The text page's characters in order (``codes``: theirs, read at once when PDFium could
        give them so), but those no person sees (``hidden``, from ``pdf.visibility``): the one
        place where characters enter the pipeline. Ordinary characters take the short way."""
        unicode_of = self.c.FPDFText_GetUnicode
        loose = self.loose
        raw, box, lines, char = self.raw, self.box, self.page.lines, self._char
        low, high = _HIGH_SURROGATES
        for index in range(count):
            if hidden and hidden[index]:
                continue  # a character no person sees never enters a line
            code = codes[index] if codes is not None else unicode_of(raw, index)
            if code in _BREAKS or code in _SPACES or low <= code < high or index == self.paired:
                self.add(index, code)
            elif loose(raw, index, box):
                char(index, code)
            if len(lines) >= MAX_LINES_PER_PAGE:
                self.page.cut = True
                break

    def add(self, index: int, code: int) -> None:
        """The character at ``index`` of the text page, whose code (UTF-16) is ``code``."""
        if index == self.paired:
            return  # the second half of a surrogate pair, taken with the first
        if _HIGH_SURROGATES[0] <= code < _HIGH_SURROGATES[1]:
            low = self.c.FPDFText_GetUnicode(self.raw, index + 1)
            if _HIGH_SURROGATES[1] <= low < _LOW_SURROGATES_END:  # a character beyond U+FFFF
                code = 0x10000 + ((code - _HIGH_SURROGATES[0]) << 10) + (low - _HIGH_SURROGATES[1])
                self.paired = index + 1
        if code in _BREAKS:
            if not self.last_turned:
                self.close()
        elif code in _SPACES:
            run = self.turned if self.last_turned else self.run
            if run is not None:
                if run is self.run and not run.vertical:
                    self._space(run)
                run.chars.append(" ")
        elif self.loose(self.raw, index, self.box):
            self._char(index, code)

    def _space(self, run: _Run) -> None:
        """Where the word before a space ends (where the next one starts is read when the line
        closes, from its first character: ``_words``)."""
        if not (run.chars and run.chars[-1] == " "):
            run.spaces.append((len(run.chars), run.x1))

    def _char(self, index: int, code: int) -> None:
        box = self.box
        left, bottom, top = box.left, box.bottom, box.top
        run = self.run
        if run is not None and not run.vertical:  # the common case first: the run goes on
            em = run.em
            # the bottom of a loose box stands for the baseline (font descent)
            jumped = abs(bottom - run.y0) > _BASELINE_JUMP * em and abs(top - run.y1) > _BASELINE_JUMP * em
            gap = left - run.x1
            if (
                not jumped
                and -_BACKSTEP_EMS * em <= gap <= _CELL_GAP_EMS * em
                and (gap <= 0 or not self._ruled(box))
            ):
                run.at.append(len(run.chars))
                run.chars.append(_HYPHEN_MARK if code in _PDFIUM_HYPHENS else char_text(code))
                run.indices.append(index)
                run.x1 = max(run.x1, box.right)
                run.y0, run.y1 = min(run.y0, bottom), max(run.y1, top)
                self.last_turned = False
                return
        self._new_or_turned(index, code, run)

    def _new_or_turned(self, index: int, code: int, run: _Run | None) -> None:
        """A character that does not simply go on the open run: stacked under it (vertical
        writing), set at an angle, or the start of a new run."""
        box = self.box
        continues = False
        jumped = False
        if run is not None:
            if run.vertical:
                continues = self._below(run) and not self._ruled(box)
            else:
                limit = _BASELINE_JUMP * run.em
                jumped = abs(box.bottom - run.y0) > limit and abs(box.top - run.y1) > limit
                gap = box.left - run.x1
                continues = not (jumped or gap > _CELL_GAP_EMS * run.em or self._ruled(box))
                if jumped and len(run.indices) == 1 and CJK.match(chr(code)) and CJK.match(run.chars[-1]):
                    continues = run.vertical = self._below(run)
        stepped_back = run is not None and not run.vertical and box.left < run.x1 - _BACKSTEP_EMS * run.em
        angle = self._angle(index) if stepped_back or not continues else None
        if angle is not None:
            self._turned(index, code, angle)
            return
        self.last_turned = False
        if run is not None and not continues:
            if jumped and run.chars and run.chars[-1] == _HYPHEN_MARK:
                run.chars[-1] = LINE_END_HYPHEN  # PDFium's mark of a hyphen it joins across the break
            self.close()
        if self.run is None:
            em = max(self._size(index), 1.0)
            self.run = _Run([], box.left, box.right, box.bottom, box.top, em, [])
        char = _HYPHEN_MARK if code in _PDFIUM_HYPHENS else char_text(code)
        self.run.take(index, char, box)

    def _angle(self, index: int) -> float | None:
        """The character's angle in degrees if it is turned from the page's upright, else None."""
        radians = float(self.c.FPDFText_GetCharAngle(self.raw, index))
        if radians < 0:  # PDFium could not say
            return None
        degrees = (math.degrees(radians) + self.rotation) % _FULL_TURN
        return None if min(degrees, _FULL_TURN - degrees) < _UPRIGHT_DEGREES else degrees

    def _below(self, run: _Run) -> bool:
        """Whether the character stands right under the run's last one (vertical writing)."""
        left, right, bottom, _ = run.last
        box_left, box_right, box_top = float(self.box.left), float(self.box.right), float(self.box.top)
        overlap = min(right, box_right) - max(left, box_left)
        slack = _VERTICAL_SLACK_EMS * run.em
        stacked = bottom - slack <= box_top <= bottom + slack
        return stacked and overlap > _STACKED_OVERLAP * min(right - left, box_right - box_left)

    def _turned(self, index: int, code: int, angle: float) -> None:
        """A character set at an angle: onto the open turned run if it goes on from its last
        character at the same angle, else it starts one."""
        box = self.box
        run = self.turned
        if run is not None:
            left, right, bottom, top = run.last
            reach = _TURNED_REACH_EMS * run.em
            near = box.left - right <= reach and left - box.right <= reach
            near = near and box.bottom - top <= reach and bottom - box.top <= reach
            if not near or abs(angle - run.angle) > _SAME_ANGLE_DEGREES:
                self._close_turned()
        if self.turned is None:
            size = float(self.c.FPDFText_GetFontSize(self.raw, index))
            thickness = min(box.right - box.left, box.top - box.bottom)
            em = max(size if size >= _SCALED_SIZE * thickness else thickness * _BOX_TO_SIZE, 1.0)
            self.turned = _Run([], box.left, box.right, box.bottom, box.top, em, [], angle=angle)
        self.turned.take(index, char_text(code), box)
        self.last_turned = True

    def _size(self, index: int) -> float:
        """The character's font size; where PDFium reports a size far below its box's height (a
        font set at size 1 and scaled by the text matrix), one read from the box."""
        size = float(self.c.FPDFText_GetFontSize(self.raw, index))
        if self.loose(self.raw, index, self.size_box):
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
        text = _line_text(run)
        if not text:
            return
        samples = sorted({run.indices[0], run.indices[len(run.indices) // 2], run.indices[-1]})
        sizes = sorted(self._size(index) for index in samples)
        styles = [self.styles.of(index) for index in samples]
        lead = self._lead(run, text) if any(styles[0]) and styles[-1] != styles[0] else ""
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
                vertical=run.vertical,
                lead=lead,
                words=self._words(run, text),
            )
        )

    def _words(self, run: _Run, text: str) -> tuple[tuple[float, float], ...]:
        """Each word's x0 and x1 where the line has two or more words: a word ends where the
        line reached before its space, the next starts at its first character's box (none where
        PDFium's text and the characters disagree on the words)."""
        if not run.spaces:
            return ()
        found: list[tuple[float, float]] = []
        start, begun = run.x0, 0
        for at, end in run.spaces:
            if "".join(run.chars[begun:at]).strip():
                found.append((start, end))
            begun = at + 1
            first = bisect.bisect_left(run.at, begun)
            if first < len(run.at) and self.loose(self.raw, run.indices[first], self.size_box):
                start = float(self.size_box.left)
            else:
                start = end
        if "".join(run.chars[begun:]).strip():
            found.append((start, run.x1))
        if len(found) < 2 or len(found) != len(text.split()):
            return ()
        return tuple(found)

    def _lead(self, run: _Run, text: str) -> str:
        """The bold or italic words the line opens with, when its style changes once after them
        (a run-in heading: "Results. The ..."); found by halving, a few questions of PDFium."""
        first = self.styles.of(run.indices[0])
        low, high = 0, len(run.indices) - 1  # the style at ``low`` is the first's, at ``high`` not
        while high - low > 1:
            middle = (low + high) // 2
            if self.styles.of(run.indices[middle]) == first:
                low = middle
            else:
                high = middle
        lead = _line_text_of(run.chars[: run.at[high]])
        if not lead or not text.startswith(lead) or len(lead) >= len(text):
            return ""
        return lead

    def _close_turned(self) -> None:
        run, self.turned = self.turned, None
        if run is None or not (text := _line_text(run)):
            return
        self.page.turned.append(
            TextLine(
                text=text,
                x0=run.x0,
                x1=run.x1,
                top=self.page.height - run.y1,
                bottom=self.page.height - run.y0,
                size=round(run.em / _SIZE_STEP) * _SIZE_STEP,
                bold=False,
                italic=False,
                angle=round(run.angle),
            )
        )

    def finish(self) -> None:
        self.close()
        self._close_turned()


def _line_text(run: _Run) -> str:
    return _line_text_of(run.chars)


def _line_text_of(chars: list[str]) -> str:
    return " ".join(pdfium_text("".join(chars).replace(_HYPHEN_MARK, "-")).split())


def pdfium_page_lines(
    page: Any, image_names: list[str], facts: DocumentFacts, cuts: VerticalRules | None = None
) -> PageLines:
    """The lines and images of one PDFium page, without the characters a person would not see;
    ``image_names`` names the page's images in content order (the names ``parsers.images`` uses);
    ``facts``: the document's, for ``pdf.visibility``; ``cuts`` part lines where a rule runs."""
    import pypdfium2.raw as pdfium_c

    width, height = page.get_size()
    result = PageLines(width=width, height=height, lines=[], images=[])
    turn = page_turn(page)
    textpage = page.get_textpage()
    try:
        count = int(pdfium_c.FPDFText_CountChars(textpage.raw))
        if count > MAX_CHARS_PER_PAGE:
            count, result.cut = MAX_CHARS_PER_PAGE, True
        result.visibility = page_visibility(page, textpage, facts)
        hidden = result.visibility.codes
        gatherer = _Gatherer(textpage.raw, result, cuts, turn)
        gatherer.feed(count, _codes(textpage.raw, count), hidden)
        gatherer.finish()
    finally:
        textpage.close()
    result.images = _images(page, image_names, height, turn)
    return result


def page_turn(page: Any) -> _Turn | None:
    """How a page with ``/Rotate`` turns its user space to where it is shown (None: upright)."""
    rotation = int(page.get_rotation()) % int(_FULL_TURN)
    if rotation not in (_QUARTER, 2 * _QUARTER, 3 * _QUARTER):
        return None
    return _Turn(rotation, tuple(float(v) for v in page.get_bbox()))  # type: ignore[arg-type]


def _codes(raw: Any, count: int) -> list[int] | None:
    """The codes of the text page's characters read in one call of PDFium (``FPDFText_GetText``:
    one UTF-16 unit a character), or None where that does not hold (then each is asked for)."""
    import array
    import ctypes

    import pypdfium2.raw as pdfium_c

    if count <= 0:
        return None
    buffer = ctypes.create_string_buffer((count + 1) * 2)
    written = int(
        pdfium_c.FPDFText_GetText(raw, 0, count, ctypes.cast(buffer, ctypes.POINTER(ctypes.c_ushort)))
    )
    if written - 1 != count:
        return None
    codes = array.array("H", buffer.raw[: count * 2]).tolist()
    probes = {0, count // 2, count - 1}
    if any(codes[index] != pdfium_c.FPDFText_GetUnicode(raw, index) for index in probes):
        return None
    return codes


def _images(page: Any, names: list[str], height: float, turn: _Turn | None) -> list[PageImage]:
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
        x0, y0, x1, y1 = left.value, bottom.value, right.value, top.value
        if turn is not None:
            (ax, ay), (bx, by) = turn.point(x0, y0), turn.point(x1, y1)
            x0, x1, y0, y1 = min(ax, bx), max(ax, bx), min(ay, by), max(ay, by)
        found.append(PageImage(name, x0, x1, height - y1, height - y0))
    return found
