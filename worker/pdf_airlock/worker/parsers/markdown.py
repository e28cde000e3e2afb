"""``pdf_markdown``: the selected pages as Markdown that keeps the document's structure.

Input: untrusted bytes. pdfminer.six lays out each page (its characters mended from PDFium where
it could not decode a glyph, as the ``layout`` engine of ``pdf_read``); the structure pass
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
from collections.abc import Iterator
from typing import Any, Final

from pdf_airlock.worker import progress
from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.layoutchars import Mender
from pdf_airlock.worker.pdf.layoutlines import PageLines, page_lines
from pdf_airlock.worker.pdf.markdown_text import render_page
from pdf_airlock.worker.pdf.opening import open_document
from pdf_airlock.worker.pdf.pages import pdfium_label, pdfium_labels, select_pages
from pdf_airlock.worker.pdf.sample import SAMPLE_TEXT
from pdf_airlock.worker.pdf.structure import MAX_LEVEL, Census, page_blocks, sample_positions

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_markdown"

CENSUS_PAGES: Final = 16
PAGE_SEPARATOR: Final = "\n\n"  # between two pages in the published Markdown
MAX_WARNINGS: Final = 100
_LEVEL_KEYS: Final = tuple(f"h{level}" for level in range(1, MAX_LEVEL + 1))


def _layouts(data: bytes, password: str | None, indices: set[int]) -> Iterator[tuple[int, PageLines]]:
    """(index, lines) for the given pages, in document order, one pdfminer pass."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfminer.psexceptions import PSException

    wanted = sorted(indices)
    mender = Mender(data, password, _strings)
    try:
        layouts = extract_pages(
            io.BytesIO(data),
            password=password or "",
            page_numbers=set(wanted),
            laparams=LAParams(all_texts=True),
        )
        count = 0
        for index, layout in zip(wanted, layouts, strict=False):
            mender.text(index, layout)  # mends the layout's characters in place
            count += 1
            yield index, page_lines(layout)
    except PDFPasswordIncorrect as exc:
        code = "wrong_password" if password else "encrypted"
        raise WorkerError(code, "pdfminer could not open the encrypted document") from exc
    except (PDFSyntaxError, PSException, KeyError, TypeError, ValueError) as exc:
        raise WorkerError("malformed", "pdfminer could not parse the document") from exc
    finally:
        mender.close()
    if count < len(wanted):
        raise WorkerError("malformed", "pdfminer found fewer pages than PDFium")


def _strings(container: Any) -> Iterator[str]:
    from pdfminer.layout import LTFigure, LTTextContainer

    for element in container:
        if isinstance(element, LTTextContainer):
            yield element.get_text()
        elif isinstance(element, LTFigure):
            yield from _strings(element)


class _Pages:
    """Pages' lines by index, laid out on demand in as few pdfminer passes as the order allows."""

    def __init__(self, data: bytes, password: str | None) -> None:
        self.data, self.password = data, password
        self.cache: dict[int, PageLines] = {}

    def load(self, indices: set[int]) -> None:
        missing = indices - set(self.cache)
        if missing:
            self.cache.update(_layouts(self.data, self.password, missing))

    def stream(self, order: list[int]) -> Iterator[tuple[int, PageLines]]:
        """Pages in ``order``; a run of ascending pages is laid out lazily, page by page."""
        position = 0
        while position < len(order):
            end = position + 1
            while end < len(order) and order[end] > order[end - 1]:
                end += 1
            run = order[position:end]
            pending = [index for index in run if index not in self.cache]
            layouts = _layouts(self.data, self.password, set(pending)) if pending else iter(())
            for index in run:
                if index not in self.cache:
                    for found, lines in layouts:
                        self.cache[found] = lines
                        if found == index:
                            break
                yield index, self.cache.pop(index)
            position = end


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
        rendered = render_page(page_blocks(pages.cache[index], census), index + 1)
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
        data, password = opened.layout_input()
        page_count = len(document)
        selection = select_pages(args.get("pages"), page_count, pdfium_labels(document))
        pages = _Pages(data, password)
        census_indices = set(sample_positions(page_count, CENSUS_PAGES))
        pages.load(census_indices)
        census = Census.of([pages.cache[index] for index in sorted(census_indices)])
        for index in list(pages.cache):
            if index not in census_indices:
                del pages.cache[index]
        start_index = int(args.get("start_index", 0))
        context = _context(pages, census, args, selection) if start_index or args.get("start_offset") else []
        result = _forward(pages, census, selection, args, warnings=warnings, document=document)
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
    for position, (index, lines) in enumerate(pages.stream(todo)):
        if lines.cut:
            warnings.append(f"page {index + 1}: only its first lines were read (too many text lines)")
        if not lines.lines and lines.images:
            warnings.append(
                f"page {index + 1} has no text layer, only images (a scan?); read it with pdf_render"
            )
        if out:  # the blank line the supervisor puts between two pages counts too
            budget -= len(PAGE_SEPARATOR)
        rendered = render_page(page_blocks(lines, census), index + 1)
        offset = int(args.get("start_offset", 0)) if position == 0 else 0
        text = rendered.text[offset:]
        fits = len(text) <= budget
        end = len(text) if fits else _cut(text, budget, first=not out)
        if end == 0:
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
    return {"pages": out, "next": next_position}


def warm_up(sample: bytes) -> None:
    """Lay out the sample and write it as Markdown; raise unless its text comes through."""
    result = run(sample, {"max_chars": 10_000})
    if SAMPLE_TEXT not in result["pages"][0]["text"]:
        raise RuntimeError("pdf_markdown failed its warm-up")
