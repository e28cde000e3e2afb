"""Where OCR's words are in a page's text and on the page: the ``rects`` of a search hit
on a page read by OCR.

Input: the text OCR read from a page of an untrusted document (as ``pdf.ocrpages`` gives it) and
Tesseract's words with their boxes (``ocr.OcrText``); nothing else is assumed. Each word is
placed in the text in reading order, a little way after the one before (a word joined across a
line-end hyphen is placed without its hyphen; a word the text does not hold there gets no place
and no box). A match covers the words it overlaps, and of a word it covers in part the share of
its box that its characters take; the covered words of one line make one rectangle, in PDF
points with the origin bottom-left, as PDFium gives the rectangles of a text-layer hit.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Final

from pdf_airlock.worker.pdf.ocr import OcrText, OcrWord

__all__ = ["WordPlaces"]

# How far past the end of the word before a word may start: the whitespace between them, and a
# word Tesseract read that the text no longer holds (a hyphen, a joined part).
MAX_GAP: Final = 16
_HYPHENS: Final = "-\u00ad\u2010"
_DIGITS: Final = 2


class WordPlaces:
    """Tesseract's words placed in the text of their page."""

    def __init__(self, text: str, read: OcrText) -> None:
        self.to_page = read.to_page
        self.starts: list[int] = []  # where each placed word starts in the text, ascending
        self.words: list[OcrWord] = []
        position = 0
        for word in read.words:
            for form in (word.text, word.text.rstrip(_HYPHENS)):
                found = text.find(form, position, position + MAX_GAP + len(form)) if form else -1
                if found >= 0:
                    self.starts.append(found)
                    self.words.append(word)
                    position = found + len(form)
                    break

    def rects(self, begin: int, end: int, most: int) -> list[list[float]]:
        """The rectangles ``[left, bottom, right, top]`` the text ``[begin, end)`` covers, at
        most ``most``, one per line."""
        boxes: list[list[float]] = []  # line, left, top, right, bottom, in bitmap pixels
        for index in range(max(0, bisect_right(self.starts, begin) - 1), len(self.starts)):
            start, word = self.starts[index], self.words[index]
            if start >= end:
                break
            stop = start + len(word.text)
            if stop <= begin:
                continue
            share = (word.right - word.left) / len(word.text)
            left = word.left + share * (max(begin, start) - start)
            right = word.left + share * (min(end, stop) - start)
            if boxes and boxes[-1][0] == word.line:
                _line, x0, y0, x1, y1 = boxes[-1]
                boxes[-1] = [
                    word.line,
                    min(x0, left),
                    min(y0, word.top),
                    max(x1, right),
                    max(y1, word.bottom),
                ]
            elif len(boxes) < most:
                boxes.append([word.line, left, word.top, right, word.bottom])
            else:
                break
        return [self._on_page(left, top, right, bottom) for _line, left, top, right, bottom in boxes]

    def _on_page(self, left: float, top: float, right: float, bottom: float) -> list[float]:
        a, b, c, d, e, f = self.to_page
        xs, ys = [], []
        for x, y in ((left, top), (right, bottom)):
            xs.append(a * x + c * y + e)
            ys.append(b * x + d * y + f)
        return [round(v, _DIGITS) for v in (min(xs), min(ys), max(xs), max(ys))]
