"""One Tesseract reading of a page image, and the merge of several readings into one.

Input: a Tesseract instance (``tesserocr.PyTessBaseAPI``) that has recognised an image rendered
from an untrusted page; nothing about its text is assumed. ``read`` walks its results line by
line (at most ``MAX_LINES`` lines and ``MAX_WORDS`` words) and keeps, for every line, its text,
box, paragraph start and words with their boxes and confidences. Text comes out in logical
order (Tesseract's result iterator orders right-to-left words itself); ``tidy`` then removes the
spaces Tesseract puts between Chinese and Japanese characters and writes Greek mu for the micro
sign the Greek model answers with.

``merge`` joins the readings of one image by several languages (``ocr_languages: ["deu",
"eng"]``, or English and the language chosen for a page): lines are matched by their boxes and
each line is taken from the reading that is surest of it (the highest mean word confidence), so a
page with paragraphs in two languages reads each in its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Final

__all__ = ["MAX_LINES", "MAX_WORDS", "ReadLine", "ReadWord", "Reading", "merge", "read", "tidy"]

MAX_LINES: Final = 5000  # lines of one page kept
MAX_WORDS: Final = 20_000  # words of one page kept with their boxes
# Two lines of two readings are the same line when their boxes overlap by this share of the
# smaller one, vertically and horizontally.
SAME_LINE: Final = 0.5
# Confidence points by which another language's reading of a page must be surer than the
# preferred language's to be kept instead (``pdf.ocr``: a German model reads an English page
# nearly as surely as the English one, and the other way round).
MERGE_MARGIN: Final = 5.0
_CJK = (
    r"\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3100-\u312f\u31a0-\u31ff\u3400-\u4dbf"
    r"\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
)
_CJK_GAP: Final = re.compile(f"(?<=[{_CJK}])[ \\t]+(?=[{_CJK}])")
_MICRO: Final = re.compile("\u00b5(?=[\u0370-\u03ff\u1f00-\u1fff])|(?<=[\u0370-\u03ff\u1f00-\u1fff])\u00b5")


@dataclass(frozen=True, slots=True)
class ReadWord:
    """A word and its box in pixels of the read image (top-left origin), with its confidence."""

    text: str
    left: int
    top: int
    right: int
    bottom: int
    confidence: float


@dataclass(frozen=True, slots=True)
class ReadLine:
    """A line: its text, box in image pixels, font size in pixels (Tesseract's estimate for the
    first word, else the box's height), whether a paragraph starts with it, and its words."""

    text: str
    left: int
    top: int
    right: int
    bottom: int
    size: float
    paragraph: bool
    words: tuple[ReadWord, ...]
    language: str

    @property
    def confidence(self) -> float:
        """The mean confidence of its words, weighted by their length."""
        total = sum(len(word.text) for word in self.words)
        if not total:
            return 0.0
        return sum(word.confidence * len(word.text) for word in self.words) / total


@dataclass(frozen=True, slots=True)
class Reading:
    """What one reading found, in reading order."""

    lines: tuple[ReadLine, ...]

    @property
    def confidence(self) -> float:
        """The mean word confidence (Tesseract's ``MeanTextConf``, weighted by length)."""
        words = [word for line in self.lines for word in line.words]
        total = sum(len(word.text) for word in words)
        if not total:
            return 0.0
        return sum(word.confidence * len(word.text) for word in words) / total

    def text(self) -> str:
        """Lines joined by newlines, a blank line before each paragraph but the first."""
        parts: list[str] = []
        for line in self.lines:
            if line.paragraph and parts:
                parts.append("")
            parts.append(line.text)
        return "\n".join(parts) + ("\n" if parts else "")


def tidy(text: str) -> str:
    """No spaces between two CJK characters; Greek mu for the micro sign beside Greek letters."""
    return _MICRO.sub("\u03bc", _CJK_GAP.sub("", text))


def _line_heads(api: Any) -> list[dict[str, Any]]:
    """Each line's box, font size and paragraph start."""
    import tesserocr

    iterator = api.GetIterator()
    if iterator is None:
        return []
    line_level, para_level = tesserocr.RIL.TEXTLINE, tesserocr.RIL.PARA
    heads: list[dict[str, Any]] = []
    for item in tesserocr.iterate_level(iterator, line_level):
        if len(heads) >= MAX_LINES:
            break
        try:  # tesserocr raises RuntimeError for a line it found no text in
            box = item.BoundingBox(line_level)
            font = item.WordFontAttributes() or {}
        except RuntimeError:
            box, font = None, {}
        heads.append(
            {
                "box": box,
                "size": float(font.get("pointsize") or 0),
                "paragraph": bool(item.IsAtBeginningOf(para_level)),
            }
        )
    return heads


def read(api: Any, language: str) -> Reading:
    """The lines and words of ``api``'s recognised image."""
    import tesserocr

    heads = _line_heads(api)
    iterator = api.GetIterator()
    if iterator is None or not heads:
        return Reading(())
    line_level, word_level = tesserocr.RIL.TEXTLINE, tesserocr.RIL.WORD
    words: list[list[ReadWord]] = [[] for _head in heads]
    number, count = -1, 0
    for item in tesserocr.iterate_level(iterator, word_level):
        if item.IsAtBeginningOf(line_level):
            number += 1
        if number >= len(heads) or count >= MAX_WORDS:
            break
        try:  # tesserocr raises RuntimeError for a word it found no text in
            text = item.GetUTF8Text(word_level)
            box = item.BoundingBox(word_level)
            confidence = float(item.Confidence(word_level))
        except RuntimeError:
            continue
        if text and text.strip() and box is not None and number >= 0:
            left, top, right, bottom = box
            words[number].append(ReadWord(text.strip(), left, top, right, bottom, confidence))
            count += 1
    own = _own_lines(api)
    lines = []
    for head, found in zip(heads, words, strict=True):
        text = tidy(own.take("".join(word.text for word in found)) or " ".join(word.text for word in found))
        if not found or not text or head["box"] is None:
            continue
        left, top, right, bottom = head["box"]
        lines.append(
            ReadLine(
                text=text,
                left=left,
                top=top,
                right=right,
                bottom=bottom,
                size=head["size"],
                paragraph=head["paragraph"],
                words=tuple(_logical(word, text) for word in found),
                language=language,
            )
        )
    return Reading(tuple(lines))


class _OwnLines:
    """The page's lines as ``GetUTF8Text`` writes them, matched in order to the iterator's lines
    by their characters: tesserocr's iterator is Tesseract's left-to-right one, whose line text
    has right-to-left words backwards and a space between every two Korean or Chinese words it
    found, where the page's own text has them in logical order and spaced as printed."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.keys = [_key(line) for line in lines]
        self.next = 0

    def take(self, line: str) -> str:
        key = _key(line)
        for at in range(self.next, min(self.next + _LOOKAHEAD, len(self.lines))):
            if self.keys[at] == key:
                self.next = at + 1
                return self.lines[at]
        return ""


_LOOKAHEAD: Final = 8


def _key(line: str) -> str:
    return "".join(sorted(char for char in line if not char.isspace()))


def _own_lines(api: Any) -> _OwnLines:
    try:
        text = api.GetUTF8Text() or ""
    except RuntimeError:
        text = ""
    return _OwnLines([line.strip() for line in text.splitlines() if line.strip()])


def _logical(word: ReadWord, line: str) -> ReadWord:
    """The word with its characters in logical order: the result iterator gives a right-to-left
    word's characters in visual order when asked for the word alone."""
    text = tidy(word.text)
    if text not in line and text[::-1] in line:
        text = text[::-1]
    return replace(word, text=text)


def _overlap(a: ReadLine, b: ReadLine) -> bool:
    def share(low_a: int, high_a: int, low_b: int, high_b: int) -> float:
        common = min(high_a, high_b) - max(low_a, low_b)
        return common / max(min(high_a - low_a, high_b - low_b), 1)

    return (
        share(a.top, a.bottom, b.top, b.bottom) >= SAME_LINE
        and share(a.left, a.right, b.left, b.right) >= SAME_LINE
    )


def merge(readings: list[Reading]) -> Reading:
    """One reading of the same image from several: the first reading's lines in its order, each
    replaced by a matching line of another reading that is surer of it (a tie keeps the first);
    lines only another reading found are placed after the last line above them."""
    if len(readings) == 1:
        return readings[0]
    chosen = list(readings[0].lines)
    extra: list[ReadLine] = []
    for other in readings[1:]:
        for line in other.lines:
            match = next((i for i, mine in enumerate(chosen) if _overlap(mine, line)), None)
            if match is None:
                if not any(_overlap(mine, line) for mine in extra):
                    extra.append(line)
            elif line.confidence > chosen[match].confidence:
                chosen[match] = replace(line, paragraph=chosen[match].paragraph)
    for line in sorted(extra, key=lambda item: item.top):
        above = [i for i, mine in enumerate(chosen) if mine.top <= line.top]
        chosen.insert(above[-1] + 1 if above else 0, line)
    return Reading(tuple(chosen))
