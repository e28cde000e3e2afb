"""A page's lines as blocks in reading order: headings, paragraphs, list items, tables, images.

Input: the lines of untrusted pages (``pdf_airlock.worker.pdf.layoutlines``); nothing is assumed
about them. The work is about linear in the lines of a page (sorting aside).

1. The census, over a sample of the selected pages (``Census.of``): the body font size (the size
   most characters have), the heading styles (sizes clearly above it, or bold lines at about it),
   ranked by size into levels 1-4, and the running headers and footers: lines near the top or
   bottom edge whose text, digits aside, repeats on at least half the sampled pages.
2. Per page: running headers, footers and lone page numbers near the edges are dropped. Columns:
   a vertical gutter that no line crosses, with lines on both sides, splits the page; lines that
   cross it (a title, an abstract, a wide figure) cut the page into bands, each read left column
   first. Lines on one baseline in a column form a row. Tables come from the table finder
   (``pdf_airlock.worker.pdf.tables``): their lines are left out here and each table is placed
   where it sits, as images are.
3. Rows are then headings (a heading style, short, not a sentence), list items (a bullet or a
   number, nesting by indentation; lines indented under an item continue it), or paragraph
   lines, joined across line breaks (a hyphen between two letters at a line's end is dropped)
   until a gap, an indent or a short closing line ends the paragraph.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from pdf_airlock.worker.contract import MARKDOWN_MAX_LEVEL
from pdf_airlock.worker.pdf.furniture import Removed, edge_key, kept_lines, running_keys, turned_lines
from pdf_airlock.worker.pdf.headings import (
    MAX_HEADING_WORDS,
    is_label,
    never_heading,
    numbering,
    split_number,
)
from pdf_airlock.worker.pdf.layoutlines import LINE_END_HYPHEN, PageLines, TextLine
from pdf_airlock.worker.pdf.readingorder import reading_order

__all__ = ["Block", "Census", "Placed", "Row", "join_line", "page_blocks", "rows_of", "shown"]

MAX_LEVEL: Final = MARKDOWN_MAX_LEVEL
_HEADING_SIZE_RATIO: Final = 1.12
_BOLD_HEADING_MIN_RATIO: Final = 0.95
_MAX_HEADING_CHARS: Final = 160
_ROW_OVERLAP: Final = 0.5
_INDENT_EMS: Final = 1.0
_PARAGRAPH_GAP: Final = 0.9  # a vertical gap over this many line heights ends a paragraph
_SHORT_LINE: Final = 0.8  # a line ending before this share of the column width may end one
_NEST_STEP: Final = 4.0
_TABLE_TEXT: Final = "\ufffc"  # the stand-in line of a table in the reading order (OBJECT REPLACEMENT)
_BULLET: Final = re.compile(  # bullets, dashes, and the private-use bullets of Symbol and Wingdings
    r"^([\u2022\u25e6\u25aa\u25ab\u2023\u2043\u25cf\u25cb\u25a0\u25a1\u25c6\u25c7\u25ba\u25b8\u2013\u2014*\u00b7"
    r"\u2219\u2218\u22c4\u2666\u27a2\u25b6\u2713\u2714\u2756\uf0b7\uf0a7\uf076\uf0d8\uf0fc-])\s+(.*)$"
)
_NUMBERED: Final = re.compile(r"^(\(?(\d{1,3}|[a-z]|[ivx]{1,5})[.)])\s+(.*)$")
_CJK: Final = re.compile(  # Han and kana (and their punctuation), written without spaces; not hangul
    "[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
)
_TITLE_LEVELS: Final = 1  # levels above a document's first section number (its title)
_MIN_CAPITALS: Final = 3
_LIST_COMMAS: Final = 3  # a "heading" with this many commas is a list of names (authors)
_RUN_IN_CELLS: Final = 2
_MAX_RUN_IN_WORDS: Final = 10
_LABEL_WORDS: Final = 3  # a description list's label set apart by a wide space: at most this long
_LETTER_SHARE: Final = 0.6
_PAGE_DIGITS: Final = 4
_DRAWN_REACH: Final = 2.0
_DRAWN_MARKS: Final = 2
_BODY_WORDS: Final = 30  # a paragraph this long is body text: the front matter is over
_FRONT_ENDS: Final = frozenset({"abstract", "introduction", "summary", "contents", "preface", "foreword"})
_TOC_LEADER: Final = re.compile(r"(\. ?){3,}|\u2026")
_NUMBER_GAP_EMS: Final = 4.0  # a section number stands at most this far left of its title
_MATHS: Final = re.compile("[=<>\u2190-\u21ff\u2200-\u22ff\u27e8\u27e9{}|]")
_MAX_OPEN_RUN_IN_WORDS: Final = 6  # bold words run in without a full stop: at most this many
_SENTENCE_START: Final = re.compile(r"[A-Z][a-z]")
_RUN_IN_DASHES: Final = ("\u2014", "\u2013", "-", ":")
_WORD: Final = re.compile(r"[^\W\d_]{2}")
_WORD3: Final = re.compile(r"[^\W\d_]{3}")
_NUMBERED_SIZE_RATIO: Final = 1.05
_SENTENCE_END: Final = re.compile(r"[.!?:;]\W*$")
_STATEMENT_END: Final = re.compile(r"[.!:;]\W*$")


@dataclass(frozen=True, slots=True)
class Block:
    """One block of a page in reading order. ``kind``: heading (``level``), paragraph, item
    (``depth``, ``marker``), table (``rows`` of cells) or image (``text`` is its name)."""

    kind: str
    text: str = ""
    level: int = 0
    depth: int = 0
    marker: str = ""
    rows: tuple[tuple[str, ...], ...] = ()


@dataclass(slots=True)
class Census:
    """What the sampled pages say about the document: body size, heading levels, running lines."""

    body_size: float = 0.0
    levels: dict[tuple[float, bool], int] = field(default_factory=dict)
    running: frozenset[str] = frozenset()
    outline: dict[str, int] = field(default_factory=dict)  # bookmark title -> its level
    shift: int = 0  # outline level + shift = heading level (a title above the outline's top)

    @classmethod
    def of(cls, pages: list[PageLines], outline: dict[str, int] | None = None) -> Census:
        sizes: Counter[float] = Counter()
        for page in pages:
            for line in page.lines:
                sizes[line.size] += len(line.text)
        census = cls(body_size=sizes.most_common(1)[0][0] if sizes else 0.0)
        census.running = running_keys(pages)
        styles: Counter[tuple[float, bool]] = Counter()
        depths: dict[tuple[float, bool], Counter[int]] = {}
        for page in pages:
            for line, text in _titled(page.lines):
                if not census.heading_style(line) or edge_key(page, line) in census.running:
                    continue
                if never_heading(text) or not reads_as_words(text):
                    continue
                style = (line.size, line.bold)
                styles[style] += 1
                if (depth := numbering(text)) is not None:
                    depths.setdefault(style, Counter())[depth] += 1
        census.levels = _levels(styles, depths)
        census.outline = outline or {}
        matched = [
            census.level(line) if (depth := numbering(text)) is None else depth + _TITLE_LEVELS
            for page in pages
            for line, text in _titled(page.lines)
            if census.heading_style(line) and outline_key(text) in census.outline
        ]
        census.shift = min(max(0, min(matched) - 1), _TITLE_LEVELS) if matched else 0
        return census

    def outline_level(self, text: str) -> int | None:
        """The level the document's outline gives a heading with this text, if it lists it."""
        level = self.outline.get(outline_key(text))
        return None if level is None else min(level + self.shift, MAX_LEVEL)

    def heading_style(self, line: TextLine) -> bool:
        """Whether the line looks like a heading: larger than the body, or bold at about its size."""
        if not self.body_size or len(line.text) > _MAX_HEADING_CHARS:
            return False
        if line.size >= self.body_size * _HEADING_SIZE_RATIO:
            return True
        return line.bold and line.size >= self.body_size * _BOLD_HEADING_MIN_RATIO

    def level(self, line: TextLine) -> int:
        return self.levels.get((line.size, line.bold), MAX_LEVEL)


def _titled(lines: list[TextLine]) -> list[tuple[TextLine, str]]:
    """Each line with its text, a bare section number ("2.1") joined to the title beside it on
    its baseline (the pair's style is the title's)."""
    out = []
    ordered = sorted(lines, key=lambda line: (round(line.top), line.x0))
    skip = -1
    for at, line in enumerate(ordered):
        if at == skip:
            continue
        after = ordered[at + 1] if at + 1 < len(ordered) else None
        bare = not _WORD.search(line.text) and numbering(line.text + " Ab") is not None
        beside = after is not None and abs(after.top - line.top) < line.height / 2
        if bare and after is not None and beside and 0 <= after.x0 - line.x1 <= _NUMBER_GAP_EMS * line.height:
            out.append((after, f"{line.text} {after.text}"))
            skip = at + 1
            continue
        out.append((line, line.text))
    return out


def _levels(
    styles: Counter[tuple[float, bool]], depths: dict[tuple[float, bool], Counter[int]]
) -> dict[tuple[float, bool], int]:
    """Heading levels by style. A style with numbered headings takes the level of their usual
    depth (below the title's); the others take the level of the numbered style of their size or
    the next larger one (level 1 above them all: a title), one below the deepest past the
    smallest. Without numbering, styles rank by size (bold first)."""
    numbered = {style: counts.most_common(1)[0][0] + _TITLE_LEVELS for style, counts in depths.items()}
    if not numbered:
        ranked = sorted(styles, key=lambda style: (-style[0], not style[1]))
        return {style: min(rank + 1, MAX_LEVEL) for rank, style in enumerate(ranked)}
    by_size = sorted(numbered.items(), key=lambda item: (item[0][0], item[0][1]))
    levels = {}
    for style in styles:
        if style in numbered:
            levels[style] = min(numbered[style], MAX_LEVEL)
            continue
        larger = [level for numbered_style, level in by_size if numbered_style >= style]
        if style[0] < by_size[0][0][0]:
            levels[style] = min(max(numbered.values()) + 1, MAX_LEVEL)
        else:
            levels[style] = min(*larger, MAX_LEVEL) if larger else 1
    return levels


def reads_as_words(text: str) -> bool:
    """Whether a line reads as words (a heading's), not as a formula, code or a figure's labels:
    a word of two letters at least, most characters letters, no operator of mathematics."""
    compact = [ch for ch in text if not ch.isspace()]
    letters = sum(1 for ch in compact if ch.isalpha())
    return bool(_WORD3.search(text)) and letters >= _LETTER_SHARE * len(compact) and not _MATHS.search(text)


def outline_key(text: str) -> str:
    """A title as compared with the outline's: case, spacing and closing punctuation aside."""
    return " ".join(text.casefold().split()).rstrip(".:")


@dataclass(slots=True)
class Row:
    """Lines on one baseline, left to right (``_rows`` sorts them once the row is complete)."""

    cells: list[TextLine]
    top: float = 0.0
    bottom: float = 0.0

    @classmethod
    def of(cls, line: TextLine) -> Row:
        return cls([line], line.top, line.bottom)

    def add(self, line: TextLine) -> None:
        self.cells.append(line)
        self.top, self.bottom = min(self.top, line.top), max(self.bottom, line.bottom)

    @property
    def text(self) -> str:
        return " ".join(cell.text for cell in self.cells)

    @property
    def first(self) -> TextLine:
        return self.cells[0]


def rows_of(run: list[TextLine]) -> list[Row]:
    rows: list[Row] = []
    for line in sorted(run, key=lambda line: (line.top, line.x0)):
        if rows:
            row = rows[-1]
            overlap = min(row.bottom, line.bottom) - max(row.top, line.top)
            if overlap >= _ROW_OVERLAP * min(line.height, row.bottom - row.top):
                row.add(line)
                continue
        rows.append(Row.of(line))
    for row in rows:
        row.cells.sort(key=lambda cell: cell.x0)
    return rows


def join_line(parts: list[str], more: str) -> None:
    """The next line of a block onto its parts (joined at the end, so a long block is not copied
    line by line): a hyphen PDFium read as a word's break, or a hyphen between letters before a
    small letter, is dropped; lines of Chinese or Japanese join without a space; else a space
    joins them."""
    last = parts[-1] if parts else ""
    if last.endswith(LINE_END_HYPHEN) or (
        len(last) > 1 and last.endswith("-") and last[-2].isalpha() and more[:1].islower()
    ):
        parts[-1] = last[:-1]
        parts.append(more)
    elif last and more and _CJK.match(last[-1]) and _CJK.match(more[0]):
        parts.append(more)  # Chinese and Japanese put no space between lines
    else:
        parts += [" ", more] if parts else [more]


def shown(text: str) -> str:
    """A block's text as written: a line-end hyphen no line joined is a hyphen."""
    return text.replace(LINE_END_HYPHEN, "-")


class _Marks:
    """Points of a page's curves and slanted lines, by height, to ask what lies near a line."""

    def __init__(self, points: Sequence[tuple[float, float]]) -> None:
        self.points = sorted((y, x) for x, y in points)
        self.ys = [y for y, _ in self.points]

    def near(self, line: TextLine) -> bool:
        """Whether ``_DRAWN_MARKS`` marks lie within ``_DRAWN_REACH`` line heights of the line
        (it is a label of a drawing or a plot)."""
        reach = _DRAWN_REACH * line.height
        start = bisect.bisect_left(self.ys, line.top - reach)
        end = bisect.bisect_right(self.ys, line.bottom + reach)
        if end - start < _DRAWN_MARKS:
            return False
        found = sum(1 for _, x in self.points[start:end] if line.x0 - reach <= x <= line.x1 + reach)
        return found >= _DRAWN_MARKS


@dataclass(slots=True)
class _Builder:
    """Turns the rows of a page's column runs into blocks. List indents are kept relative to
    the run's left edge, and what is being built goes on into the next run (a paragraph or a
    list item that continues at the top of the next column, in lower case, stays one)."""

    census: Census
    blocks: list[Block] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    kind: str = ""
    last: Row | None = None
    item_x: list[float] = field(default_factory=list)
    style: tuple[float, bool] | None = None
    level: int = 0
    marker: str = ""
    goes_on: bool = False
    front: bool = False  # in the first page's front matter (``_front_matter``)
    title_size: float = 0.0  # the largest heading-styled text of the page: its title's
    drawn: _Marks | None = None  # where the page's drawings are

    def flush(self) -> None:
        text = shown("".join(self.parts))
        if text:
            if self.kind == "heading" and (len(text) > _MAX_HEADING_CHARS or text.count(",") >= _LIST_COMMAS):
                self.blocks.append(Block("paragraph", text))  # a list of names, not a title
            elif self.kind == "heading":
                level = self.census.outline_level(text) or self.level
                self.blocks.append(Block("heading", text, level=level))
            elif self.kind == "item":
                self.blocks.append(Block("item", text, depth=len(self.item_x) - 1, marker=self.marker))
            else:
                self.blocks.append(Block("paragraph", text))
                self.front = self.front and len(text.split()) < _BODY_WORDS
        self.parts, self.kind, self.style = [], "", None

    def _front_matter(self, line: TextLine, text: str, depth: int | None) -> bool:
        """Whether a heading-styled row is the first page's front matter (authors, affiliations:
        no headings), not a heading. The front matter ends at the first section number, at an
        abstract or introduction, or after a paragraph of body text; until then only the
        title's style makes headings."""
        if self.front and self.kind == "paragraph" and len("".join(self.parts).split()) >= _BODY_WORDS:
            self.front = False  # the paragraph being built is body text
        if not self.front:
            return False
        if depth is not None or outline_key(text).split(" ")[-1] in _FRONT_ENDS:
            self.front = False
            return False
        return line.size < self.title_size and outline_key(text) not in self.census.outline

    def inside(self, row: Row) -> bool:
        """Whether the row goes on the paragraph being built (no gap, no indent, no short line
        before it): nothing may come between them."""
        if self.kind != "paragraph" or self.last is None:
            return False
        line = row.first
        return row.top - self.last.bottom <= _PARAGRAPH_GAP * line.height and not line.text[:1].isupper()

    def new_run(self, *, after_column: bool) -> None:
        """A new run of lines; ``after_column``: it is the next column right of the last run's
        (where a paragraph cut by the column's foot goes on)."""
        self.last = None
        self.goes_on = after_column

    def add(self, row: Row, column_x0: float, column_x1: float, hang: float = 0.0) -> None:
        """The next row of the run; ``hang``: how far right of its start the row after it starts
        (a hanging indent, as under a description list's label)."""
        line = row.first
        text = row.text
        indent = line.x0 - column_x0
        if self.last is None and self.goes_on and self.kind in ("paragraph", "item") and text[:1].islower():
            join_line(self.parts, text)  # it goes on from the column before
            self.last = row
            return
        gap = row.top - self.last.bottom if self.last is not None else 0.0
        spaced = self.last is not None and gap > _PARAGRAPH_GAP * line.height
        depth = numbering(text)
        starts = self.kind != "paragraph" or spaced or self._new_paragraph(line, column_x0, column_x1)
        if starts and hang > _INDENT_EMS * line.size and (item := _described(row)) is not None:
            self.flush()  # a description list's item: a label, its text hanging under it
            self._nest(indent)
            self.kind, self.parts, self.marker = "item", [" ".join(item)], "-"
        elif starts and (run_in := _run_in(row)) is not None:
            self.flush()
            lead, rest = run_in
            lead_depth = numbering(lead)
            level = MAX_LEVEL if lead_depth is None else min(lead_depth + _TITLE_LEVELS, MAX_LEVEL)
            self.blocks.append(Block("heading", shown(lead), level=level))
            self.kind, self.parts, self.item_x = "paragraph", [rest], []
        elif (
            _is_heading(self.census, row, text, depth)
            and not self._front_matter(line, text, depth)
            and not (self.drawn is not None and self.drawn.near(line))
        ):
            style = (line.size, line.bold)
            if self.kind == "heading" and self.style == style and not spaced and depth is None:
                join_line(self.parts, text)  # a heading wrapped over two lines
            else:
                self.flush()
                self.kind, self.parts, self.style = "heading", [text], style
                self.level = self.census.level(line)
                if depth is not None:  # the section number says the level
                    self.level = min(depth + _TITLE_LEVELS, MAX_LEVEL)
                self.item_x = []
        elif (item := list_marker(text)) is not None:
            self.flush()
            marker, body = item
            self._nest(indent)
            self.kind, self.parts, self.marker = "item", [body], marker
        elif self.kind == "item" and self.last is not None and not spaced and indent > self.item_x[-1] + 1.0:
            join_line(self.parts, text)
        elif self.kind != "paragraph" or spaced or self._new_paragraph(line, column_x0, column_x1):
            self.flush()
            self.item_x = [] if spaced or indent <= 1.0 else self.item_x
            self.kind, self.parts = "paragraph", [text]
        else:
            join_line(self.parts, text)
        self.last = row

    def _nest(self, x0: float) -> None:
        while self.item_x and x0 < self.item_x[-1] - _NEST_STEP:
            self.item_x.pop()
        if not self.item_x or x0 > self.item_x[-1] + _NEST_STEP:
            self.item_x.append(x0)

    def _new_paragraph(self, line: TextLine, column_x0: float, column_x1: float) -> bool:
        previous = self.last.cells[-1] if self.last is not None else None
        if previous is None:
            return True
        indented = line.x0 > column_x0 + _INDENT_EMS * line.size
        short = previous.x1 < column_x0 + _SHORT_LINE * (column_x1 - column_x0)
        return indented or (short and bool(_SENTENCE_END.search(previous.text)))


def _is_heading(census: Census, row: Row, text: str, depth: int | None) -> bool:
    """Whether the row is a heading: in a heading style (larger than the body, or bold) and not
    a sentence; or numbered as a section ("2.1 Methods", "IV. RESULTS", "B. Data") and set
    apart from the body (bold, italic, larger, or in capitals), and not a sentence; or a title
    the document's outline lists. Never a bullet, a caption, a date or a page number."""
    if not census.body_size or _BULLET.match(text) or never_heading(text) or is_label(text):
        return False
    if not reads_as_words(text) or _toc_entry(row, depth):
        return False
    title = split_number(text)
    if title[:1].islower() or (depth is None and len(text.split()) > MAX_HEADING_WORDS):
        return False  # a heading starts with a capital; a long unnumbered line is a caption's
    sentence = bool(_STATEMENT_END.search(text))  # a heading may ask a question
    if all(census.heading_style(cell) for cell in row.cells) and not sentence:
        return True
    if depth is not None and not sentence and all(_set_apart(census, cell, title) for cell in row.cells):
        return True
    return len(row.cells) == 1 and outline_key(text) in census.outline


def _toc_entry(row: Row, depth: int | None) -> bool:
    """A table of contents' entry: leader dots, or a page number at the row's end (apart from
    the title, or after a numbered title's last word)."""
    last = row.cells[-1].text
    if _TOC_LEADER.search(row.text) or (len(row.cells) > 1 and last.isdigit() and len(last) <= _PAGE_DIGITS):
        return True
    words = row.text.split()
    return depth is not None and len(words) > 2 and words[-1].isdigit() and len(words[-1]) <= _PAGE_DIGITS


def _described(row: Row) -> tuple[str, str] | None:
    """A description list's label and its text: a run-in lead-in, or a short first cell set apart
    by a wide space ("m   A standard mandatory argument ...")."""
    found = _run_in(row)
    if found is not None:
        return found
    first = row.first
    if len(row.cells) >= _RUN_IN_CELLS and len(first.text.split()) <= _LABEL_WORDS:
        return first.text, " ".join(cell.text for cell in row.cells[1:])
    return None


def _run_in(row: Row) -> tuple[str, str] | None:
    """A run-in heading: the bold or italic words a paragraph opens with, closed by a full stop,
    a colon or a dash ("Results. The ...", "1) Set-up: we ..."), or a few such words before a
    new sentence ("Contributions In this paper ..."), after a section number if any ("2.2.1
    Total ordering. Production ..."): (the heading, the rest)."""
    cells = row.cells
    number = ""
    if len(cells) >= _RUN_IN_CELLS and not _WORD.search(cells[0].text) and numbering(cells[0].text + " A"):
        number, cells = cells[0].text + " ", cells[1:]  # a section number set apart by a wide space
    first = cells[0]
    lead = first.lead
    if not lead:
        if len(cells) < _RUN_IN_CELLS or not (first.bold or first.italic):
            return None
        lead = first.text  # the lead-in set apart from its text by a wide space
    rest = " ".join(cell.text for cell in cells)[len(lead) :].strip()
    closed = lead.rstrip().endswith((".", ":")) or rest.startswith(_RUN_IN_DASHES)
    title = number + lead.strip().rstrip(".:").strip()
    words = len(title.split())
    if not closed and not (words <= _MAX_OPEN_RUN_IN_WORDS and _SENTENCE_START.match(rest)):
        return None
    if split_number(title)[:1].islower():
        return None  # a heading starts with a capital
    if not rest or not 1 <= words <= _MAX_RUN_IN_WORDS or never_heading(title) or is_label(title):
        return None
    if _BULLET.match(lead) or not _WORD.search(split_number(title)):
        return None
    return title, rest.lstrip("".join(_RUN_IN_DASHES) + ": ")


def _set_apart(census: Census, line: TextLine, title: str) -> bool:
    """Whether a line's style sets it apart from the body: bold, italic, larger, or capitals."""
    letters = [ch for ch in title if ch.isalpha()]
    capitals = len(letters) >= _MIN_CAPITALS and all(ch.isupper() for ch in letters)
    larger = line.size >= census.body_size * _NUMBERED_SIZE_RATIO
    return line.bold or line.italic or larger or capitals


def list_marker(text: str) -> tuple[str, str] | None:
    bullet = _BULLET.match(text)
    if bullet:
        return "-", bullet.group(2)
    numbered = _NUMBERED.match(text)
    if numbered:
        return numbered.group(1), numbered.group(3)
    return None


class Placed(NamedTuple):
    """A block that is not text lines (an image, a table) and where it sits on the page."""

    top: float
    bottom: float
    x0: float
    x1: float
    block: Block


def page_blocks(
    page: PageLines,
    census: Census,
    tables: Sequence[Placed] = (),
    held: Set[int] = frozenset(),
    removed: Removed | None = None,
    *,
    first: bool = False,
    drawn: Sequence[tuple[float, float]] = (),
) -> list[Block]:
    """The blocks of one page in reading order, images and ``tables`` (found by the table
    finder, holding the page's lines ``held``) where they sit. A table takes part in the reading
    order as one line of its own box: in a column when it sits in one, across both when it
    spans them. Furniture is left out and counted in ``removed``; text set at an angle inside
    the body is a paragraph of its own where it sits (as an image is). ``first``: the
    document's first page, whose front matter makes no headings but the title; ``drawn``: where
    the page's curves and slanted lines are (a drawing's labels are no headings)."""
    stand_ins = {}
    for table in tables:
        line = TextLine(_TABLE_TEXT, table.x0, table.x1, table.top, table.bottom, 0.0, False, False)
        stand_ins[id(line)] = (line, table.block)
    body = kept_lines(page, census.running, removed, census.body_size)
    lines = [line for line in body if id(line) not in held]
    lines += [line for line, _ in stand_ins.values()]
    titles = [line.size for line in lines if census.heading_style(line) and reads_as_words(line.text)]
    builder = _Builder(census, front=first, title_size=max(titles, default=0.0), drawn=_Marks(drawn))
    waiting = sorted(
        [
            *(
                Placed(image.top, image.bottom, image.x0, image.x1, Block("image", image.name))
                for image in page.images
            ),
            *(
                Placed(line.top, line.bottom, line.x0, line.x1, Block("paragraph", shown(line.text)))
                for line in turned_lines(page, body, removed)
            ),
        ],
        key=lambda placed: (placed.top, placed.x0),
    )
    previous_x1: float | None = None
    figures = [(image.x0, image.top, image.x1, image.bottom) for image in page.images]
    for run in reading_order(lines, page.width, figures):
        rows = rows_of(run)
        text = [line for line in run if id(line) not in stand_ins] or run
        column_x0 = min(line.x0 for line in text)
        column_x1 = max(line.x1 for line in text)
        builder.new_run(after_column=previous_x1 is not None and previous_x1 <= column_x0)
        previous_x1 = column_x1
        for at, row in enumerate(rows):
            waiting = _place(waiting, row, builder, (column_x0, column_x1))
            after = rows[at + 1] if at + 1 < len(rows) else None
            near = after is not None and after.top - row.bottom <= _PARAGRAPH_GAP * row.first.height
            hang = after.first.x0 - row.first.x0 if after is not None and near else 0.0
            cells = []
            for cell in row.cells:
                if id(cell) in stand_ins:
                    builder.flush()
                    builder.blocks.append(stand_ins[id(cell)][1])
                    builder.last = None
                else:
                    cells.append(cell)
            if cells:
                builder.add(Row(cells, row.top, row.bottom), column_x0, column_x1, hang)
    builder.flush()
    return builder.blocks + [placed.block for placed in waiting]


def _place(waiting: list[Placed], row: Row, builder: _Builder, column: tuple[float, float]) -> list[Placed]:
    """Images (and turned text) that end above the row and stand over its column go before it,
    between blocks: not inside a paragraph that goes on past them (an icon or a rule drawn as
    an image beside a line), nor from another column. Returns the ones still to place."""
    still = []
    for placed in waiting:
        over = min(placed.x1, column[1]) - max(placed.x0, column[0]) > 0
        if placed.bottom <= row.top + 1.0 and over and not builder.inside(row):
            builder.flush()
            builder.blocks.append(placed.block)
            builder.last = None
        else:
            still.append(placed)
    return still


def sample_positions(count: int, limit: int) -> list[int]:
    """Up to ``limit`` positions spread evenly over ``range(count)``, first and last included."""
    if count <= limit:
        return list(range(count))
    step = (count - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})
