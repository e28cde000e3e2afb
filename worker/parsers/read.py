"""``pdf_read``: the text of selected pages, bounded by ``max_chars``.

Input: untrusted bytes. The default engine is PDFium (fast, character-accurate); ``layout``
uses pdfminer.six's layout analysis for reading order across columns. The answer holds whole
pages until the character budget runs out; the page that does not fit is cut and the position
to continue from is returned, so the supervisor can hand out a cursor. Nothing is dropped.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pypdfium2 as pdfium

from worker import progress
from worker.errors import WorkerError
from worker.parsers.common import open_pdfium
from worker.parsers.pages import pdfium_labels, select_pages

__all__ = ["run"]

MAX_WARNINGS = 100


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _pdfium_texts(document: Any, indices: list[int], warnings: list[str]) -> Iterator[str]:
    for index in indices:
        try:
            page = document[index]
        except pdfium.PdfiumError:
            warnings.append(f"page {index + 1} could not be loaded by PDFium; its text is empty")
            yield ""
            continue
        try:
            textpage = page.get_textpage()
            try:
                yield _normalise(textpage.get_text_range())
            finally:
                textpage.close()
        except pdfium.PdfiumError:
            warnings.append(f"page {index + 1}: PDFium could not extract its text; its text is empty")
            yield ""
        finally:
            page.close()


def _layout_texts(data: bytes, password: str | None, indices: list[int]) -> Iterator[str]:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams, LTTextContainer
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfminer.psexceptions import PSException

    wanted = sorted(set(indices))
    texts: dict[int, str] = {}
    order = iter(indices)
    want = next(order, None)
    try:
        layouts = extract_pages(
            io.BytesIO(data), password=password or "", page_numbers=set(wanted), laparams=LAParams()
        )
        for index, layout in zip(wanted, layouts, strict=False):
            texts[index] = _normalise(
                "".join(element.get_text() for element in layout if isinstance(element, LTTextContainer))
            )
            while want is not None and want in texts:
                yield texts.pop(want)
                want = next(order, None)
    except PDFPasswordIncorrect as exc:
        code = "wrong_password" if password else "encrypted"
        raise WorkerError(code, "pdfminer could not open the encrypted document") from exc
    except (PDFSyntaxError, PSException, KeyError, TypeError, ValueError) as exc:
        raise WorkerError("malformed", "pdfminer could not parse the document") from exc
    if want is not None:
        raise WorkerError("malformed", "pdfminer found fewer pages than PDFium")


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    password = args.get("password")
    engine = args.get("engine", "fast")
    max_chars = int(args["max_chars"])
    start_index = int(args.get("start_index", 0))
    start_offset = int(args.get("start_offset", 0))

    warnings: list[str] = []
    document = open_pdfium(data, password)
    try:
        page_count = len(document)
        selection = select_pages(args.get("pages"), page_count, pdfium_labels(document))
        todo = selection[start_index:]
        layout = engine == "layout"
        texts = _layout_texts(data, password, todo) if layout else _pdfium_texts(document, todo, warnings)
        pages: list[dict[str, Any]] = []
        budget = max_chars
        next_position: dict[str, int] | None = None
        for position, (index, text) in enumerate(zip(todo, texts, strict=False)):
            offset = start_offset if position == 0 else 0
            remaining = text[offset:]
            if len(remaining) > budget:
                pages.append(
                    {"page": index + 1, "text": remaining[:budget], "offset": offset, "complete": False}
                )
                next_position = {"index": start_index + position, "offset": offset + budget}
                break
            pages.append({"page": index + 1, "text": remaining, "offset": offset, "complete": True})
            progress.page_done(position + 1, len(todo))
            budget -= len(remaining)
            if budget == 0 and position + 1 < len(todo):
                next_position = {"index": start_index + position + 1, "offset": 0}
                break
    finally:
        document.close()
    return {
        "engine": engine,
        "page_count": page_count,
        "selected_pages": len(selection),
        "pages": pages,
        "next": next_position,
        "warnings": warnings[:MAX_WARNINGS],
    }
