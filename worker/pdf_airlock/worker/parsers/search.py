"""``pdf_search``: literal or regular-expression search over page text, with boxes and context.

Input: untrusted bytes and a query from the client. PDFium extracts each selected page's text;
the query runs over it with the ``regex`` module, whose matching can be interrupted: the whole
search has a time budget, so a pattern with catastrophic backtracking on crafted text ends as a
``timeout`` error instead of spinning until the job's deadline. Each hit carries its page, the
matched text, the surrounding context, and the rectangles it covers on the page (PDF points,
origin bottom-left); on a page read by OCR, the boxes of the words Tesseract read
(``pdf.ocrwords``). Results stop at ``max_results``; the position to continue from is returned
so the supervisor can hand out a cursor. Empty matches are skipped.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any, Final

import pypdfium2 as pdfium
import regex

from pdf_airlock.worker import progress
from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf import ocr
from pdf_airlock.worker.pdf.ocrpages import PageTexts
from pdf_airlock.worker.pdf.ocrwords import WordPlaces
from pdf_airlock.worker.pdf.opening import open_document
from pdf_airlock.worker.pdf.pages import pdfium_label, pdfium_labels, select_pages
from pdf_airlock.worker.pdf.textnorm import searchable
from pdf_airlock.worker.pdf.visibility import REASONS, Withheld, page_visibility, visible_text

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_search"

MAX_MATCH_CHARS: Final = 1000
MAX_RECTS: Final = 16
MAX_WARNINGS: Final = 100


def _compile(args: dict[str, Any]) -> Any:
    query = str(args["query"])
    pattern = query if args.get("regex") else regex.escape(query)
    prefix = 0
    if args.get("whole_word"):
        pattern = rf"(?<!\w)(?:{pattern})(?!\w)"
        prefix = pattern.index(query) if args.get("regex") else 0
    flags = regex.VERSION0 | (0 if args.get("case_sensitive") else regex.IGNORECASE | regex.FULLCASE)
    try:
        return regex.compile(pattern, flags)
    except regex.error as exc:
        position = None if exc.pos is None else min(max(0, exc.pos - prefix), len(query))
        where = f" at position {position} of the query" if args.get("regex") and position is not None else ""
        raise WorkerError(
            "invalid_arguments", f"the query is not a valid regular expression: {exc.msg}{where}"
        ) from exc
    except (OverflowError, RecursionError) as exc:
        raise WorkerError(
            "invalid_arguments", "the query is not a valid regular expression (too complex)"
        ) from exc


_SPACE = regex.compile(r"\s+")


def _flat(text: str) -> str:
    """Context on one line: every run of whitespace (line breaks included) becomes one space."""
    flat: str = _SPACE.sub(" ", text)
    return flat


def _rects(textpage: Any, start: int, length: int) -> list[list[float]]:
    count = min(int(textpage.count_rects(start, length)), MAX_RECTS)
    return [[round(float(v), 2) for v in textpage.get_rect(i)] for i in range(count)]


def _page_text(document: Any, index: int, warnings: list[str]) -> tuple[str, Any, Any] | None:
    try:
        page = document[index]
    except pdfium.PdfiumError:
        warnings.append(f"page {index + 1} could not be loaded by PDFium; it was not searched")
        return None
    try:
        textpage = page.get_textpage()
        text = textpage.get_text_range()
    except pdfium.PdfiumError:
        page.close()
        warnings.append(f"page {index + 1}: PDFium could not extract its text; it was not searched")
        return None
    return text, page, textpage


class _Budget:
    """Matching time over the whole search; text extraction is bounded by the job's deadline."""

    def __init__(self, milliseconds: int) -> None:
        self.milliseconds = milliseconds
        self.left = milliseconds / 1000

    def spans(self, pattern: Any, text: str, page: int) -> Iterator[tuple[int, int]]:
        """Non-empty match spans; raises ``timeout`` when the budget is spent."""
        started = time.monotonic()
        try:
            if self.left <= 0:
                raise TimeoutError
            for match in pattern.finditer(text, timeout=self.left):
                if match.end() > match.start():
                    yield match.span()
        except TimeoutError as exc:
            raise WorkerError(
                "timeout",
                f"the search ran past its time budget of {self.milliseconds} ms on page {page}",
                {"time_budget_ms": self.milliseconds, "page": page},
            ) from exc
        finally:
            self.left -= time.monotonic() - started


def _hit(text: str, span: tuple[int, int], context: int, rects: list[list[float]]) -> dict[str, Any]:
    begin, end = span
    return {
        "text": text[begin : min(end, begin + MAX_MATCH_CHARS)],
        "offset": begin,
        "before": _flat(text[max(0, begin - context) : begin])[-context:] if context else "",
        "after": _flat(text[end : end + context])[:context] if context else "",
        "rects": rects,
    }


class _Page:
    """One page's searchable text (``textnorm.searchable``) and its character boxes; or, for a
    page read by OCR (``pdf.ocrpages``), what OCR read and its words' boxes (``pdf.ocrwords``).
    The text is what a person sees (``pdf.visibility``); with ``include_hidden`` it is the whole
    text page, and a hit in hidden characters says why they are hidden."""

    def __init__(
        self,
        document: Any,
        index: int,
        raw: str,
        page: Any,
        textpage: Any,
        *,
        texts: PageTexts,
        seen: Withheld,
    ) -> None:
        self.document, self.index, self.textpage = document, index, textpage
        self.words: WordPlaces | None = None
        self.visibility = page_visibility(page, textpage, seen.facts, raw)
        seen.page(index + 1, self.visibility)
        shown, kept = (raw, None) if seen.listed else visible_text(raw, self.visibility, textpage)
        final = texts.text(index, shown)
        self.source = final.source
        if final.source == "ocr":
            self.text, self.origin, self.boxes = final.text, None, False
            read = texts.read.pop(index, None)
            self.words = WordPlaces(final.text, read) if read is not None else None
            return
        self.text, origin = searchable(shown)
        if kept is not None:  # back to the text page's characters, through both mappings
            origin = [kept[at] for at in origin] if origin is not None else kept
        self.origin = origin
        self.boxes = len(raw) == int(textpage.count_chars())
        if not self.boxes:
            seen.warnings.append(f"page {index + 1}: text and character boxes disagree; no rectangles")

    def hidden_reason(self, begin: int, end: int) -> str | None:
        """Why the match ``[begin, end)`` of ``text`` is hidden, if any of it is."""
        codes = self.visibility.codes
        if not codes or self.words is not None or not self.boxes:
            return None
        first, last = (self.origin[begin], self.origin[end - 1] + 1) if self.origin else (begin, end)
        return next(
            (REASONS[codes[i] - 1] for i in range(first, min(last, len(codes))) if codes[i] > 0), None
        )

    def rects(self, begin: int, end: int) -> list[list[float]]:
        """The rectangles of the match ``[begin, end)`` of ``text``: PDFium's character boxes
        (``origin`` maps the text back to PDFium's characters: ``textnorm.searchable``), or the
        boxes of the words OCR read."""
        if self.words is not None:
            return self.words.rects(begin, end, MAX_RECTS)
        if not self.boxes:
            return []
        first, last = (self.origin[begin], self.origin[end - 1] + 1) if self.origin else (begin, end)
        return _rects(self.textpage, first, last - first)

    def collect(
        self,
        budget: _Budget,
        pattern: Any,
        *,
        context: int,
        already: int,
        hits: list[dict[str, Any]],
        most: int,
    ) -> int | None:
        """Append this page's hits after the first ``already``; returns the number of hits on
        the page seen when ``most`` is reached (where to go on from), else None."""
        label = None  # looked up once per page, and only for a page with a hit
        for seen, span in enumerate(budget.spans(pattern, self.text, self.index + 1)):
            if seen < already:
                continue
            if len(hits) == most:
                return seen
            hit = _hit(self.text, span, context, self.rects(*span))
            label = label or pdfium_label(self.document, self.index)
            hidden = self.hidden_reason(*span)
            hits.append(
                {"page": self.index + 1, "label": label, **hit, "text_source": self.source, "hidden": hidden}
            )
        return None


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    pattern = _compile(args)
    max_results = int(args["max_results"])
    context = int(args.get("context_chars", 80))
    budget = _Budget(int(args["time_budget_ms"]))
    start_index = int(args.get("start_index", 0))
    skip = int(args.get("skip", 0))

    warnings: list[str] = []
    hits: list[dict[str, Any]] = []
    next_position: dict[str, int] | None = None
    opened = open_document(data, args.get("password"))
    document = opened.document
    warnings.extend(opened.warnings)
    try:
        page_count = len(document)
        labels = pdfium_labels(document)
        selection = select_pages(args.get("pages"), page_count, labels)
        todo = selection[start_index:]
        texts = PageTexts(document, args, warnings)
        texts.with_words = True
        seen = Withheld(opened.data, args, warnings)
        searched = 0
        for position, index in enumerate(todo):
            if len(hits) == max_results:
                next_position = {"index": start_index + position, "skip": 0}
                break
            searched += 1
            loaded = _page_text(document, index, warnings)
            if loaded is None:
                continue
            raw, page, textpage = loaded
            try:
                page_hits = _Page(document, index, raw, page, textpage, texts=texts, seen=seen)
                already = skip if position == 0 else 0
                stopped = page_hits.collect(
                    budget, pattern, context=context, already=already, hits=hits, most=max_results
                )
                if stopped is not None:
                    next_position = {"index": start_index + position, "skip": stopped}
            finally:
                textpage.close()
                page.close()
            progress.page_done(position + 1, len(todo))
            if next_position is not None:
                break
    finally:
        document.close()
    return {
        "page_count": page_count,
        "selected_pages": len(selection),
        "pages_searched": searched,
        "hits": hits,
        "next": next_position,
        "warnings": warnings[:MAX_WARNINGS],
    }


def warm_up(sample: bytes) -> None:
    search = run(sample, {"query": "warm.up", "regex": True, "max_results": 5, "time_budget_ms": 5000})
    if len(search["hits"]) != 1:
        raise RuntimeError("pdf_search failed its warm-up")
    if ocr.available():
        args = {"query": "warm", "max_results": 5, "time_budget_ms": 5000, "ocr": "force"}
        hits = run(sample, args)["hits"]
        if [hit["text_source"] for hit in hits] != ["ocr"] or not hits[0]["rects"]:
            raise RuntimeError("pdf_search (ocr) failed its warm-up")
