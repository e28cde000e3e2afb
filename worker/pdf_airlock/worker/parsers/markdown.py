"""``pdf_markdown``: the selected pages as Markdown that keeps the document's structure.

Input: untrusted bytes. PDFium's text page gives each page's characters with their boxes and
fonts (``pdf_airlock.worker.pdf.layoutlines``; qpdf names the images); the structure pass
(``pdf_airlock.worker.pdf.structure``) finds headings, paragraphs, lists, tables and images in
reading order without running headers, footers and page numbers; ``markdown_text`` writes them.

Heading levels and running headers come from a census of up to ``CENSUS_PAGES`` pages spread
over the whole document, so every answer (any selection, cursor after cursor) uses the same
levels and knows the running headers even of a one-page selection.
The answer holds whole pages until ``max_chars`` runs out; the page that does not fit is cut at a
blank line (else a line break) and the position to go on from is returned, with the pages whose
current headings set the heading path there (``h1``..``h4``), so the next answer can say which
section it starts in. Nothing is dropped.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from typing import Any, Final

import pypdfium2 as pdfium

from pdf_airlock.worker import progress
from pdf_airlock.worker.contract import MARKDOWN_PAGE_SEPARATOR, WorkerError
from pdf_airlock.worker.pdf import ocr
from pdf_airlock.worker.pdf.furniture import Removed
from pdf_airlock.worker.pdf.graphics import PageGraphics
from pdf_airlock.worker.pdf.layoutlines import PageLines, pdfium_page_lines
from pdf_airlock.worker.pdf.markdown_text import render_page
from pdf_airlock.worker.pdf.ocrpages import PageText, PageTexts, ocr_page_lines
from pdf_airlock.worker.pdf.opening import open_document
from pdf_airlock.worker.pdf.pages import RENDER_TOOL, pdfium_label, pdfium_labels, select_pages
from pdf_airlock.worker.pdf.sample import SAMPLE_TEXT
from pdf_airlock.worker.pdf.structure import (
    MAX_LEVEL,
    Block,
    Census,
    Placed,
    outline_key,
    page_blocks,
    sample_positions,
)
from pdf_airlock.worker.pdf.tables import Table, find_tables, read_page
from pdf_airlock.worker.pdf.visibility import Withheld, markdown_block

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_markdown"

CENSUS_PAGES: Final = 16
MAX_IMAGE_NAMES: Final = 1000
MAX_OUTLINE_ITEMS: Final = 2000
MAX_OUTLINE_DEPTH: Final = 8
_MAX_TITLE_CHARS: Final = 300
PAGE_SEPARATOR: Final = MARKDOWN_PAGE_SEPARATOR
MAX_WARNINGS: Final = 100
_LEVEL_KEYS: Final = tuple(f"h{level}" for level in range(1, MAX_LEVEL + 1))


class _Pages:
    """Pages' lines by index, read from PDFium on demand (each page once per job), and their
    tables, found only for a page whose blocks are wanted (not for a page the census only samples)."""

    def __init__(
        self, document: Any, opened: Any, texts: PageTexts, selection: list[int], seen: Withheld
    ) -> None:
        self.document = document
        self.opened = opened
        self.seen = seen
        self.warnings = seen.warnings
        self.cache: dict[int, PageLines] = {}
        self.graphics: dict[int, PageGraphics] = {}
        self.tables: dict[int, list[Table]] = {}
        self.drawn: dict[int, list[tuple[float, float]]] = {}  # where curves and slanted lines are
        self._pdf: Any = None
        self.texts = texts  # OCR (``pdf.ocrpages``), for the selected pages only
        self.selected = frozenset(selection)
        self.sources: dict[int, PageText] = {}

    def get(self, index: int) -> PageLines:
        if index not in self.cache:
            try:
                page = self.document[index]
            except pdfium.PdfiumError:
                self.cache[index] = PageLines(width=0.0, height=0.0, lines=[], images=[], cut=True)
                return self.cache[index]
            try:
                names = self._image_names(index)
                try:
                    self.cache[index], self.graphics[index] = read_page(page, names, self.seen.facts)
                except WorkerError as error:  # too many graphic objects to look for tables
                    self._no_tables(index, error)
                    self.cache[index] = pdfium_page_lines(page, names, self.seen.facts)
            finally:
                page.close()
            if index in self.selected:
                layer = self.cache[index]
                self.cache[index], self.sources[index] = ocr_page_lines(self.texts, index, layer)
                if self.cache[index] is not layer:  # read by OCR: the text layer's tables are not its
                    self.graphics.pop(index, None)
        return self.cache[index]

    def blocks(self, index: int, census: Census, removed: Removed | None = None) -> list[Block]:
        """The page's blocks, its tables among them; furniture left out is counted in ``removed``."""
        lines = self.get(index)
        tables = self._tables(index, lines)
        placed = [
            Placed(
                table.top,
                table.bottom,
                table.x0,
                table.x1,
                Block("table", rows=tuple(tuple(row) for row in table.rows)),
            )
            for table in tables
        ]
        held = {id(lines.lines[i]) for table in tables for i in table.lines}
        drawn = self.drawn.get(index, [])
        return page_blocks(lines, census, placed, held, removed, first=index == 0, drawn=drawn)

    def _tables(self, index: int, lines: PageLines) -> list[Table]:
        if index not in self.tables:
            graphics = self.graphics.pop(index, None)
            self.drawn[index] = graphics.marks if graphics is not None else []
            try:
                self.tables[index] = find_tables(lines, graphics) if graphics is not None else []
            except WorkerError as error:
                self._no_tables(index, error)
                self.tables[index] = []
        return self.tables[index]

    def _no_tables(self, index: int, error: WorkerError) -> None:
        self.warnings.append(f"page {index + 1}: no tables looked for ({error.message})")

    def load(self, indices: set[int]) -> None:
        for index in sorted(indices):
            self.get(index)

    def stream(
        self, order: list[int], census: Census, removed: Removed
    ) -> Iterator[tuple[int, PageLines, list[Block]]]:
        for index in order:
            lines = self.get(index)
            blocks = self.blocks(index, census, removed)
            self.cache.pop(index, None)
            self.tables.pop(index, None)
            self.graphics.pop(index, None)
            self.drawn.pop(index, None)
            yield index, lines, blocks

    def _image_names(self, index: int) -> list[str]:
        """The names of the images the page's content draws directly, in content order (what
        the images parser calls them); empty if qpdf cannot read the page."""
        import pikepdf

        try:
            if self._pdf is None:
                data, password = self.opened.layout_input()
                self._pdf = pikepdf.open(io.BytesIO(data), password=password or "")
            page = self._pdf.pages[index]
            xobjects = page.obj.get("/Resources", {}).get("/XObject", {})
            names = []
            for instruction in pikepdf.parse_content_stream(page, "Do"):
                name = str(instruction.operands[0])
                target = xobjects.get(name)
                if target is not None and target.get("/Subtype") == "/Image":
                    names.append(name.lstrip("/")[:200])
                if len(names) >= MAX_IMAGE_NAMES:
                    break
            return names
        except (
            pikepdf.PdfError,
            pikepdf.DependencyError,
            ValueError,
            TypeError,
            AttributeError,
            IndexError,
            KeyError,
        ):
            return []

    def close(self) -> None:
        if self._pdf is not None:
            self._pdf.close()


def _outline(document: Any) -> dict[str, int]:
    """Bookmark titles and their levels (1 for the top), the first of each title; at most
    ``MAX_OUTLINE_ITEMS`` bookmarks and ``MAX_OUTLINE_DEPTH`` levels are read (PDFium stops at a
    cycle)."""
    levels: dict[str, int] = {}
    try:
        for item in itertools.islice(document.get_toc(max_depth=MAX_OUTLINE_DEPTH), MAX_OUTLINE_ITEMS):
            title = outline_key(str(item.get_title() or "")[:_MAX_TITLE_CHARS])
            if title:
                levels.setdefault(title, int(item.level) + 1)
    except (pdfium.PdfiumError, ValueError, TypeError, AttributeError):
        return levels
    return levels


def _cut(text: str, budget: int, *, first: bool) -> int:
    """Where a page's Markdown that does not fit is cut: after the last blank line within the
    budget, else the last line break (a table row or list item stays whole), else, for the first
    page of an answer only, the last sentence end, then the last space, then the budget itself.
    0: the page does not start in this answer."""
    for separator in ("\n\n", "\n"):
        at = text.rfind(separator, 0, budget)
        if at > 0:
            return at + len(separator)
    if not first:
        return 0
    for separator in (". ", " "):
        at = text.rfind(separator, 0, budget)
        if at > 0:
            return at + len(separator)
    return max(budget, 1)


def _context(
    pages: _Pages, census: Census, args: dict[str, Any], selection: list[int]
) -> list[dict[str, Any]]:
    """The heading path where this answer starts: for each level, the last heading of that level
    on the page the cursor names (before the cursor's offset on the page it starts in)."""
    start_index = int(args.get("start_index", 0))
    start_offset = int(args.get("start_offset", 0))
    wanted = {level: int(args.get(key) or 0) for level, key in enumerate(_LEVEL_KEYS, 1)}
    positions = {position - 1 for position in wanted.values() if 0 < position <= len(selection)}
    pages.load({selection[position] for position in positions})
    path = []
    for level, position in wanted.items():
        if not 0 < position <= len(selection):
            continue
        index = selection[position - 1]
        rendered = render_page(pages.blocks(index, census), index + 1)
        limit = start_offset if position - 1 == start_index else len(rendered.text) + 1
        found = [text for offset, lvl, text in rendered.headings if lvl == level and offset < limit]
        if found:
            path.append({"level": level, "text": found[-1]})
    return path


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    password = args.get("password")
    opened = open_document(data, password)
    document, warnings = opened.document, list(opened.warnings)
    try:
        page_count = len(document)
        selection = select_pages(args.get("pages"), page_count, pdfium_labels(document))
        texts = PageTexts(document, args, warnings)
        texts.with_lines = True
        pages = _Pages(document, opened, texts, selection, Withheld(opened.data, args, warnings))
        census_indices = set(sample_positions(page_count, CENSUS_PAGES))
        pages.load(census_indices)
        sampled = [pages.cache[index] for index in sorted(census_indices)]
        census = Census.of(sampled, _outline(document))
        for index in list(pages.cache):
            if index not in census_indices:
                del pages.cache[index]
                pages.graphics.pop(index, None)
        start_index = int(args.get("start_index", 0))
        context = _context(pages, census, args, selection) if start_index or args.get("start_offset") else []
        result = _forward(pages, census, selection, args, warnings=warnings, document=document)
        pages.close()
    finally:
        document.close()
    return {
        "page_count": page_count,
        "selected_pages": len(selection),
        "context": context,
        **result,
        "warnings": warnings[:MAX_WARNINGS],
    }


def _forward(
    pages: _Pages,
    census: Census,
    selection: list[int],
    args: dict[str, Any],
    *,
    warnings: list[str],
    document: Any,
) -> dict[str, Any]:
    """Whole pages' Markdown from the start position until ``max_chars`` is spent; the page that
    does not fit is cut (``_cut``). Each page lists the headings in its part, in order."""
    start_index = int(args.get("start_index", 0))
    budget = int(args["max_chars"])
    levels = {level: int(args.get(key) or 0) for level, key in enumerate(_LEVEL_KEYS, 1)}
    out: list[dict[str, Any]] = []
    todo = selection[start_index:]
    next_position: dict[str, int] | None = None
    removed = Removed()
    for position, (index, lines, blocks) in enumerate(pages.stream(todo, census, removed)):
        if lines.cut:
            warnings.append(f"page {index + 1}: only its first lines were read (too many text lines)")
        if not lines.lines and lines.images:
            warnings.append(
                f"page {index + 1} has no text layer, only images (a scan?); read it with {RENDER_TOOL}"
            )
        if out:  # the blank line the supervisor puts between two pages counts too
            budget -= len(PAGE_SEPARATOR)
        rendered = render_page(blocks, index + 1)
        hidden = pages.seen.page(index + 1, lines.visibility)
        whole = rendered.text
        if hidden:  # after the page's body, never in it
            whole = f"{whole}\n\n{markdown_block(hidden)}" if whole else markdown_block(hidden)
        offset = int(args.get("start_offset", 0)) if position == 0 else 0
        text = whole[offset:]
        fits = len(text) <= budget
        end = len(text) if fits else _cut(text, budget, first=not out)
        if not fits and end == 0:  # nothing of this page fits after the pages before it
            next_position = {"index": start_index + position, "offset": offset}
            break
        headings = [
            (level, heading) for at, level, heading in rendered.headings if offset <= at < offset + end
        ]
        for level, _ in headings:
            levels[level] = start_index + position + 1
            for deeper in range(level + 1, MAX_LEVEL + 1):
                levels[deeper] = 0
        out.append(
            {
                "page": index + 1,
                "label": pdfium_label(document, index),
                "text": text[:end],
                "offset": offset,
                "complete": fits,
                "headings": [{"level": level, "text": heading} for level, heading in headings],
                **_source(pages, index),
                "hidden": hidden if offset == 0 else [],
            }
        )
        progress.page_done(position + 1, len(todo))
        if not fits:
            next_position = {"index": start_index + position, "offset": offset + end}
            break
        budget -= len(text)
        if budget <= len(PAGE_SEPARATOR) and position + 1 < len(todo):
            next_position = {"index": start_index + position + 1, "offset": 0}
            break
    if next_position is not None:
        next_position |= {f"h{level}": levels[level] for level in range(1, MAX_LEVEL + 1)}
    if (furniture := removed.warning()) is not None:
        warnings.insert(0, furniture)  # first: the warnings a long answer has are cut at a bound
    return {"pages": out, "next": next_position}


def _source(pages: _Pages, index: int) -> dict[str, Any]:
    """Where the page's text came from: its text layer or OCR (``pdf.ocrpages``)."""
    source = pages.sources.get(index)
    if source is None:
        return {"text_source": "text_layer", "ocr_confidence": None}
    return source.fields()


def warm_up(sample: bytes) -> None:
    """Lay out the sample and write it as Markdown; raise unless its text comes through. qpdf's
    JBIG2 support (off in the sandbox: ``warmup._no_external_decoders``) loads on first sight of
    such a stream, which reading a page's content for its image names can be: loaded here."""
    import pikepdf.jbig2  # noqa: F401

    result = run(sample, {"max_chars": 10_000})
    if SAMPLE_TEXT not in result["pages"][0]["text"]:
        raise RuntimeError("pdf_markdown failed its warm-up")
    if ocr.available():
        result = run(sample, {"max_chars": 10_000, "ocr": "force"})
        if SAMPLE_TEXT not in result["pages"][0]["text"] or result["pages"][0]["text_source"] != "ocr":
            raise RuntimeError("pdf_markdown (ocr) failed its warm-up")
