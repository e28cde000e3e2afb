"""Page furniture: what a reader skips because it is the page's, not the text's.

A stage of the Markdown parser's pipeline (lines -> furniture left out -> reading order). Input:
the lines of untrusted pages (``layoutlines``); nothing is assumed about them. What it leaves
out, and counts (``Removed``: the answer's warnings say how many lines and words):

* running headers and footers: lines near the top or bottom edge (``EDGE_SHARE`` of the
  page's height) whose text, digits aside, repeats on at least half the sampled pages
  (``running_keys``, over the census's sample);
* page numbers: a lone number ("12", "- 3 -", "Page 2 of 9", "iv") near those edges;
* a header or footer seen once (a one-page document's, "Downloaded from ... on ..."): a short
  line near those edges in type no larger than about the body's, with a wide space between it
  and the body, and no footnote mark at its start;
* margin stamps: text set at an angle to the page (``PageLines.turned``) that lies in the
  margin beside the body's lines (an arXiv identifier up the left edge, a "Draft" stamp).

Turned text inside the body (a plot's vertical axis label, a diagonal watermark over the text)
is not furniture: ``turned_blocks`` keeps it, as text of its own, never merged into a body line.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

from pdf_airlock.worker.pdf.layoutlines import PageLines, TextLine

__all__ = ["EDGE_SHARE", "Removed", "edge_key", "kept_lines", "running_keys", "turned_lines"]

EDGE_SHARE: Final = 0.09  # the top and bottom bands where running headers and footers live
_RUNNING_SHARE: Final = 0.5
_MARGIN_SLACK: Final = 2.0  # points: a stamp ends this close to the body's edge and still is beside it
_PAGE_NUMBER: Final = re.compile(
    r"^(page|p\.|seite|pagina)?\s*[-\u2013\u2014(]?\s*(\d{1,5}|[ivxlcdm]{1,7})\s*[-\u2013\u2014)]?"
    r"(\s*(of|/|de|von)\s*\d{1,5})?$",
    re.IGNORECASE,
)
_DIGITS: Final = re.compile(r"\d+")
_LONE_WORDS: Final = 16
_LONE_BODY_LINES: Final = 5
_LONE_SIZE: Final = 1.25  # a lone header or footer is set no larger than this share of the body's size
_LONE_GAP_LINES: Final = 1.2  # line heights of space between a lone header or footer and the body
_FOOTNOTE: Final = re.compile(r"^([*\u2020\u2021\u00a7\u00b6]|\d{1,2}\s|\[\d{1,3}\])")
_WORD: Final = re.compile(r"\w+")  # a word as the fidelity check counts them


@dataclass(slots=True)
class Removed:
    """What was left out as furniture: lines by kind, and their words (runs of letters and
    digits)."""

    running: int = 0
    numbers: int = 0
    stamps: int = 0
    words: int = 0

    def add(self, kind: str, line: TextLine) -> None:
        setattr(self, kind, getattr(self, kind) + 1)
        self.words += len(_WORD.findall(line.text))

    def warning(self) -> str | None:
        """The answer's warning about them, None when nothing was left out."""
        parts = [
            f"{count} {name}"
            for count, name in (
                (self.running, "running header or footer lines"),
                (self.numbers, "page numbers"),
                (self.stamps, "margin stamps"),
            )
            if count
        ]
        if not parts:
            return None
        return f"page furniture left out: {', '.join(parts)} ({self.words} words)"


def edge_key(page: PageLines, line: TextLine) -> str | None:
    """The line's text with digits masked, if it lies near the page's top or bottom edge."""
    band = page.height * EDGE_SHARE
    if line.bottom <= band or line.top >= page.height - band:
        return _DIGITS.sub("#", line.text.casefold())
    return None


def running_keys(pages: list[PageLines]) -> frozenset[str]:
    """The edge keys that repeat on at least half the pages (two at least)."""
    if len(pages) < 2:
        return frozenset()
    seen: Counter[str] = Counter()
    for page in pages:
        seen.update({key for line in page.lines if (key := edge_key(page, line)) is not None})
    needed = max(2, int(len(pages) * _RUNNING_SHARE + 0.5))
    return frozenset(key for key, count in seen.items() if count >= needed)


def kept_lines(
    page: PageLines, running: frozenset[str], removed: Removed | None = None, body_size: float = 0.0
) -> list[TextLine]:
    """The page's lines without running headers, footers and lone page numbers at the edges,
    nor a lone header or footer (``_lone_edge``; ``body_size``: the body's font size)."""
    kept = []
    for line in page.lines:
        key = edge_key(page, line)
        if key is not None and key in running:
            if removed is not None:
                removed.add("running", line)
        elif key is not None and _PAGE_NUMBER.match(line.text.strip()):
            if removed is not None:
                removed.add("numbers", line)
        elif key is not None and _lone_edge(page, line, body_size):
            if removed is not None:
                removed.add("running", line)
        else:
            kept.append(line)
    return kept


def _lone_edge(page: PageLines, line: TextLine, body_size: float) -> bool:
    """A header or footer seen once ("Downloaded from ...", a journal's name and issue): a short
    line at the edge in type about the body's size or smaller (not a title), with a wide space
    between it and every line on the body's side, and no footnote mark at its start."""
    if not body_size or line.size > _LONE_SIZE * body_size or len(line.text.split()) > _LONE_WORDS:
        return False
    if _FOOTNOTE.match(line.text):
        return False
    top = line.bottom <= page.height * EDGE_SHARE
    space = _LONE_GAP_LINES * line.height
    body = 0
    for other in page.lines:
        beyond = other.bottom <= line.top if top else other.top >= line.bottom  # the page's edge side
        beside = other.top < line.bottom and other.bottom > line.top and edge_key(page, other) is not None
        if other is line or beyond or beside:
            continue  # the header's other half on its row does not count
        gap = other.top - line.bottom if top else line.top - other.bottom
        if gap < space:
            return False
        body += 1
    return body >= _LONE_BODY_LINES  # a page of a few lines has no header: those lines are its text


def turned_lines(page: PageLines, body: list[TextLine], removed: Removed | None = None) -> list[TextLine]:
    """The page's turned lines that are not margin stamps: those beside the body's lines (wholly
    left of their left edge or right of their right edge) are left out and counted."""
    if not page.turned:
        return []
    left = min((line.x0 for line in body), default=page.width / 2)
    right = max((line.x1 for line in body), default=page.width / 2)
    kept = []
    for line in page.turned:
        if line.x1 <= left + _MARGIN_SLACK or line.x0 >= right - _MARGIN_SLACK:
            if removed is not None:
                removed.add("stamps", line)
        else:
            kept.append(line)
    return kept
