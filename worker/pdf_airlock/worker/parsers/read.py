"""``pdf_read``: the text of selected pages, bounded by ``max_chars``.

Input: untrusted bytes. The default engine is PDFium (fast, character-accurate); ``layout``
uses pdfminer.six's layout analysis for reading order across columns. The answer holds whole
pages until the character budget runs out; the page that does not fit is cut and the position
to continue from is returned, so the supervisor can hand out a cursor. Nothing is dropped.

Streamed reads (job arg ``stream``, see ``pdf_airlock.worker.progress``) write a ``selection`` line
(page_count, selected_pages) and then one ``page`` line per page as it is extracted, each with
its ``position`` in the selection after ``start_index`` and the warnings it raised; their
envelope carries no pages and no warnings (nothing is sent twice):

- ``forward``: exactly the unstreamed read (``max_chars``, ``start_offset``, the cut page, ``next``).
- ``backward``: whole pages from the last position (or from ``backward_from``, if lower) down to
  position 1, ignoring ``max_chars``; position 0 is always the forward stream's (it may start at
  ``start_offset``).
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Iterator
from typing import Any, Final

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pdf_airlock.worker import progress
from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf import ocr
from pdf_airlock.worker.pdf.layoutchars import Mender, hidden_layout_chars
from pdf_airlock.worker.pdf.ocrpages import PageTexts
from pdf_airlock.worker.pdf.opening import open_document
from pdf_airlock.worker.pdf.pages import RENDER_TOOL, pdfium_labels, select_pages
from pdf_airlock.worker.pdf.sample import SAMPLE_HIDDEN, SAMPLE_TEXT, hidden_pdf
from pdf_airlock.worker.pdf.textnorm import layout_text, pdfium_text, text_layer
from pdf_airlock.worker.pdf.visibility import Withheld, page_visibility, read_text, visible_text

__all__ = ["DECRYPT_WARM_ARGS", "KIND", "run", "warm_up"]

KIND: Final = "pdf_read"
# The job arguments of this parser's warm-up on encrypted samples (``pdf_airlock.worker.warmup``).
DECRYPT_WARM_ARGS: Final[dict[str, Any]] = {"max_chars": 1000}

MAX_WARNINGS = 100
_SPACES: Final = re.compile(r"[ \t]{2,}")
_TRAILING_SPACES: Final = re.compile(r"[ \t]+\n")
MAX_OBJECTS_EXAMINED: Final = 5000  # page objects looked at for an image on a page without text
STREAMS: Final = ("forward", "backward")


def _pdfium_texts(document: Any, indices: list[int], seen: Withheld) -> Iterator[tuple[str, list[Any]]]:
    """Each page's visible text (``pdf.visibility``) and the hidden runs to list with it."""
    warnings = seen.warnings
    for index in indices:
        try:
            page = document[index]
        except pdfium.PdfiumError:
            warnings.append(f"page {index + 1} could not be loaded by PDFium; its text is empty")
            yield "", []
            continue
        try:
            textpage = page.get_textpage()
            try:
                text, visibility = read_text(page, textpage, seen.facts)
            finally:
                textpage.close()
        except pdfium.PdfiumError:
            warnings.append(f"page {index + 1}: PDFium could not extract its text; its text is empty")
            yield "", []
            continue
        finally:
            page.close()
        yield pdfium_text(text), seen.page(index + 1, visibility)


def _layout_texts(
    data: bytes, password: str | None, indices: list[int], document: Any, seen: Withheld
) -> Iterator[tuple[str, list[Any]]]:
    """pdfminer's text of each page without what PDFium's text page hides (``pdf.visibility``,
    matched to pdfminer's characters by ``layoutchars.hidden_layout_chars``), and the hidden
    runs to list with it."""
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFPasswordIncorrect
    from pdfminer.pdfparser import PDFSyntaxError
    from pdfminer.psexceptions import PSException

    wanted = sorted(set(indices))
    texts: dict[int, tuple[str, list[Any]]] = {}
    order = iter(indices)
    want = next(order, None)
    mender = Mender(data, password, _layout_strings, document)  # characters pdfminer could not decode
    try:
        # all_texts: text inside Form XObjects (LTFigure) is analysed into lines too.
        laparams = LAParams(all_texts=True)
        layouts = extract_pages(
            io.BytesIO(data), password=password or "", page_numbers=set(wanted), laparams=laparams
        )
        for index, layout in zip(wanted, layouts, strict=False):
            texts[index] = _layout_page(index, layout, mender, document, seen)
            while want is not None and want in texts:
                yield texts.pop(want)
                want = next(order, None)
    except PDFPasswordIncorrect as exc:
        code = "wrong_password" if password else "encrypted"
        raise WorkerError(code, "pdfminer could not open the encrypted document") from exc
    except (PDFSyntaxError, PSException, KeyError, TypeError, ValueError) as exc:
        raise WorkerError("malformed", "pdfminer could not parse the document") from exc
    finally:
        mender.close()
    if want is not None:
        raise WorkerError("malformed", "pdfminer found fewer pages than PDFium")


def _layout_page(
    index: int, layout: Any, mender: Mender, document: Any, seen: Withheld
) -> tuple[str, list[Any]]:
    """One page's layout text, without the characters PDFium's text page hides."""
    try:
        page = document[index]
    except pdfium.PdfiumError:
        return layout_text(mender.text(index, layout)), []
    try:
        textpage = page.get_textpage()
        try:
            raw = textpage.get_text_range()
            visibility = page_visibility(page, textpage, seen.facts, raw)
            if not visibility.runs:
                return layout_text(mender.text(index, layout)), []
            hidden = hidden_layout_chars(layout, page, textpage, visibility.codes)
            if hidden is None:  # the engines could not be matched: PDFium's visible text
                text = pdfium_text(visible_text(raw, visibility, textpage)[0])
            else:

                def shown(theirs: str, _textpage: Any) -> str:
                    return visible_text(theirs, visibility, textpage)[0]

                strings = functools.partial(_layout_strings, hidden=hidden)
                text = layout_text(mender.text(index, layout, strings, shown))
        finally:
            textpage.close()
    except pdfium.PdfiumError:
        return layout_text(mender.text(index, layout)), []
    finally:
        page.close()
    return text, seen.page(index + 1, visibility)


def _layout_strings(container: Any, hidden: frozenset[int] | set[int] = frozenset()) -> Iterator[str]:
    """The text of a page's boxes in pdfminer's order, descending into figures (Form XObjects);
    without the LTChars in ``hidden`` (their ``id``): a line left with nothing shown is left
    out, and the spaces around what was taken out become one."""
    from pdfminer.layout import LTFigure, LTText, LTTextContainer, LTTextLine

    for element in container:
        if hidden and isinstance(element, LTTextLine):
            parts = [
                child.get_text() for child in element if isinstance(child, LTText) and id(child) not in hidden
            ]
            if len(parts) == sum(1 for child in element if isinstance(child, LTText)):
                yield element.get_text()
                continue
            text = _TRAILING_SPACES.sub("\n", _SPACES.sub(" ", "".join(parts)))
            if text.strip():
                yield text.lstrip(" ")
        elif hidden and isinstance(element, LTTextContainer):
            yield from _layout_strings(element, hidden)
        elif isinstance(element, LTTextContainer):
            yield element.get_text()
        elif isinstance(element, LTFigure):
            yield from _layout_strings(element, hidden)


def _layout_each(
    data: bytes, password: str | None, indices: list[int], document: Any, seen: Withheld
) -> Iterator[tuple[str, list[Any]]]:
    """One pdfminer pass per page, in the given order (the backward stream walks down)."""
    for index in indices:
        yield from _layout_texts(data, password, [index], document, seen)


class _Layers:
    """Judges each page's text layer (``textnorm.text_layer``), OCRs the pages the ``ocr``
    argument asks for (``pdf.ocrpages``) and warns about the bad ones, with what to do."""

    def __init__(self, document: Any, warnings: list[str], args: dict[str, Any]) -> None:
        self.document = document
        self.warnings = warnings
        self.ocr = PageTexts(document, args, warnings)

    def judge(self, index: int, text: str) -> dict[str, Any]:
        """The page's fields: its final text, the text layer's verdict, the text's source."""
        layer = text_layer(text)
        final = self.ocr.text(index, text, layer)
        if final.source == "text_layer" and self.ocr.mode == "off":
            self._warn(index, layer)
        return {
            "text": final.text,
            "text_layer": layer,
            **final.fields(),
        }

    def _warn(self, index: int, layer: str) -> None:
        if layer == "unusable":
            self.warnings.append(
                f"page {index + 1}: its text layer is unusable (glyph codes without a Unicode map); "
                f"read the page with {RENDER_TOOL} instead"
            )
        elif layer == "none" and _has_image(self.document, index):
            self.warnings.append(
                f"page {index + 1} has no text layer, only images (a scan?); read it with {RENDER_TOOL}"
            )


def _has_image(document: Any, index: int) -> bool:
    try:
        page = document[index]
    except pdfium.PdfiumError:
        return False
    try:
        count = min(int(pdfium_c.FPDFPage_CountObjects(page.raw)), MAX_OBJECTS_EXAMINED)
        return any(
            pdfium_c.FPDFPageObj_GetType(pdfium_c.FPDFPage_GetObject(page.raw, i))
            == pdfium_c.FPDF_PAGEOBJ_IMAGE
            for i in range(count)
        )
    finally:
        page.close()


def _stream_page(position: int, page: dict[str, Any], warnings: list[str]) -> None:
    progress.emit("page", {"position": position, **page, "warnings": warnings[:MAX_WARNINGS]})


_Texts = Iterator[tuple[str, list[Any]]]  # each page's visible text and the hidden runs to list


def _forward(
    todo: list[int], texts: _Texts, layers: _Layers, args: dict[str, Any], streamed: bool
) -> tuple[list[dict[str, Any]], dict[str, int] | None]:
    """Whole pages from the start of ``todo`` until ``max_chars`` is spent; the page that does not
    fit is cut. Returns the pages (empty when streamed) and the position to continue from."""
    start_index = int(args.get("start_index", 0))
    budget = int(args["max_chars"])
    warnings = layers.warnings
    pages: list[dict[str, Any]] = []
    reported = 0
    for position, (index, (layer_text, hidden)) in enumerate(zip(todo, texts, strict=False)):
        offset = int(args.get("start_offset", 0)) if position == 0 else 0
        fields = layers.judge(index, layer_text)
        remaining = fields.pop("text")[offset:]
        page = {
            "page": index + 1,
            "text": remaining[:budget],
            "offset": offset,
            "complete": len(remaining) <= budget,
            **fields,
            "hidden": hidden if offset == 0 else [],  # listed with the page's first part
        }
        if streamed:
            _stream_page(position, page, warnings[reported:])
            reported = len(warnings)
        else:
            pages.append(page)
        if len(remaining) > budget:
            return pages, {"index": start_index + position, "offset": offset + budget}
        progress.page_done(position + 1, len(todo))
        budget -= len(remaining)
        if budget == 0 and position + 1 < len(todo):
            return pages, {"index": start_index + position + 1, "offset": 0}
    return pages, None


def _backward(todo: list[int], top: int, texts: _Texts, layers: _Layers) -> None:
    """Whole pages from position ``top`` of ``todo`` down to position 1 (position 0 belongs to
    the forward stream: it may start at an offset), each streamed as it is extracted."""
    reported = 0
    warnings = layers.warnings
    for position, index, (text, hidden) in zip(range(top, 0, -1), todo[top:0:-1], texts, strict=False):
        page = {
            "page": index + 1,
            "offset": 0,
            "complete": True,
            **layers.judge(index, text),
            "hidden": hidden,
        }
        _stream_page(position, page, warnings[reported:])
        reported = len(warnings)


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    password = args.get("password")
    engine = args.get("engine", "fast")
    stream = args.get("stream")
    if stream not in (None, *STREAMS):
        raise WorkerError("invalid_arguments", "stream must be 'forward' or 'backward'")

    opened = open_document(data, password)  # PDFium reads qpdf's decrypted copy if it refused
    document, warnings = opened.document, list(opened.warnings)
    try:
        if engine == "layout":
            data, password = opened.layout_input()
        page_count = len(document)
        selection = select_pages(args.get("pages"), page_count, pdfium_labels(document))
        todo = selection[int(args.get("start_index", 0)) :]
        top = min(len(todo) - 1, int(args.get("backward_from", len(todo))))
        order = todo[top:0:-1] if stream == "backward" else todo
        seen = Withheld(data, args, warnings)
        texts: _Texts
        if engine != "layout":
            texts = _pdfium_texts(document, order, seen)
        elif stream == "backward":
            texts = _layout_each(data, password, order, document, seen)
        else:
            texts = _layout_texts(data, password, order, document, seen)
        if stream is not None:
            progress.emit("selection", {"page_count": page_count, "selected_pages": len(selection)})
        if stream == "backward":
            _backward(todo, top, texts, _Layers(document, warnings, args))
            pages: list[dict[str, Any]] = []
            next_position = None
        else:
            layers = _Layers(document, warnings, args)
            pages, next_position = _forward(todo, texts, layers, args, streamed=stream == "forward")
    finally:
        document.close()
    return {
        "engine": engine,
        "page_count": page_count,
        "selected_pages": len(selection),
        "pages": pages,
        "next": next_position,
        "warnings": [] if stream else warnings[:MAX_WARNINGS],
    }


def warm_up(sample: bytes) -> None:
    """Read the sample with both engines, and by OCR where it is installed; raise unless each
    finds its text."""
    for engine in ("fast", "layout"):
        read = run(sample, {"max_chars": 1000, "engine": engine, "ocr": "auto"})
        if SAMPLE_TEXT not in read["pages"][0]["text"]:
            raise RuntimeError(f"pdf_read ({engine}) failed its warm-up")
    for engine in ("fast", "layout"):  # a page with hidden text: the stage and its matching
        read = run(hidden_pdf(), {"max_chars": 1000, "engine": engine, "ocr": "off", "include_hidden": True})
        page = read["pages"][0]
        if SAMPLE_HIDDEN in page["text"] or len(page["hidden"]) != 2:
            raise RuntimeError(f"pdf_read ({engine}) failed its warm-up on hidden text")
    if ocr.available():
        read = run(sample, {"max_chars": 1000, "ocr": "force", "ocr_languages": ["eng"]})
        if SAMPLE_TEXT not in read["pages"][0]["text"] or read["pages"][0]["text_source"] != "ocr":
            raise RuntimeError("pdf_read (ocr) failed its warm-up")
