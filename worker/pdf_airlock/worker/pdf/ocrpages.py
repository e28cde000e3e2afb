"""Which pages to OCR, and the text a page ends up with: the ``ocr`` argument of the text tools.

Input: an open PDFium document of an untrusted file and each page's text layer as extracted.
``off`` keeps the text layer; ``force`` OCRs every page; ``auto`` OCRs a page whose text layer
is unusable (glyph codes that decode to garbage), absent on a page that shows an image, or so
sparse (under ``SPARSE_TEXT_CHARS`` visible characters) on a page mostly covered by images (at
least ``MOSTLY_IMAGE`` of its area) that it is likely a scan with a stamp or a page number.
Every page says where its text came from and, when OCR read it, the languages that read it and
the rotation that set it upright; ``ocr_languages`` absent, they are detected page by page
(``pdf.ocr``). A page OCR'd with a mean confidence under the job's ``low_confidence``
(``contract.OcrLimits``) gets a warning, a blank scanned page says it is blank, and a page that needed
OCR where it is unavailable says so too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf import ocr
from pdf_airlock.worker.pdf.layoutlines import PageLines, TextLine
from pdf_airlock.worker.pdf.pages import RENDER_TOOL
from pdf_airlock.worker.pdf.textnorm import layout_text, text_layer

__all__ = ["OCR_MODES", "PageText", "PageTexts", "image_share", "ocr_page_lines"]

OCR_MODES: Final = ("auto", "off", "force")
SPARSE_TEXT_CHARS: Final = 50
MOSTLY_IMAGE: Final = 0.5
MAX_OBJECTS_EXAMINED: Final = 5000  # image objects looked at on one page
_OBJECT_DEPTH: Final = 4  # form XObjects nested this deep are looked into for images


@dataclass(frozen=True, slots=True)
class PageText:
    """A page's final text, where it came from, OCR's mean confidence (None: text layer), the
    languages OCR read it with and the clockwise rotation it applied (None: text layer)."""

    text: str
    source: str
    confidence: int | None
    languages: tuple[str, ...] | None = None
    rotation: int | None = None

    def fields(self) -> dict[str, Any]:
        """The page's OCR fields of a tool's result (the OCR ones only when OCR read it)."""
        found: dict[str, Any] = {"text_source": self.source, "ocr_confidence": self.confidence}
        if self.source == "ocr":
            found["ocr_languages"] = list(self.languages or ())
            found["ocr_rotation"] = self.rotation or 0
        return found


def image_share(page: Any) -> float:
    """The share of the page's area covered by images (overlaps counted twice, at most 1)."""
    width, height = (float(v) for v in page.get_size())
    area = width * height
    if not area > 0:
        return 0.0
    covered = 0.0
    objects = page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=_OBJECT_DEPTH)
    for count, obj in enumerate(objects):
        if count >= MAX_OBJECTS_EXAMINED or covered >= area:
            break
        try:
            left, bottom, right, top = obj.get_bounds()
        except pdfium.PdfiumError:
            continue
        w = min(right, width) - max(left, 0.0)
        h = min(top, height) - max(bottom, 0.0)
        if w > 0 and h > 0:
            covered += w * h
    return min(1.0, covered / area)


def _sparse(text: str) -> bool:
    """Fewer than ``SPARSE_TEXT_CHARS`` visible characters (counting stops there)."""
    visible = 0
    for word in text.split():
        visible += len(word)
        if visible >= SPARSE_TEXT_CHARS:
            return False
    return True


class PageTexts:
    """The ``ocr`` and ``ocr_languages`` job arguments applied page by page."""

    def __init__(self, document: Any, args: dict[str, Any], warnings: list[str]) -> None:
        self.document = document
        self.mode = str(args.get("ocr", "off"))
        if self.mode not in OCR_MODES:
            raise WorkerError("invalid_arguments", "ocr must be 'auto', 'off' or 'force'")
        named = args.get("ocr_languages")
        self.languages = None if named is None else [str(lang) for lang in named]
        self.limits = ocr.current_limits()
        self.warnings = warnings
        self.with_lines = False  # keep each OCR'd page's lines (the Markdown parser)
        self.with_words = False  # keep each OCR'd page's words and their boxes (the search parser)
        self.read: dict[int, ocr.OcrText] = {}  # what OCR read, for the pages kept
        if self.mode != "off":
            ocr.check_languages(self.languages)

    def wants_ocr(self, page: Any, text: str, layer: str) -> bool:
        if self.mode == "force":
            return True
        if self.mode == "off":
            return False
        if layer == "unusable":
            return True
        share = image_share(page)
        if layer == "none":
            return share > 0
        return _sparse(text) and share >= MOSTLY_IMAGE

    def text(self, index: int, text: str, layer: str | None = None) -> PageText:
        """The page's text: its text layer (judged by ``textnorm.text_layer`` unless ``layer``
        is given), or what OCR read from it."""
        if self.mode == "off":
            return PageText(text, "text_layer", None)
        layer = text_layer(text) if layer is None else layer
        if self.mode == "auto" and layer == "ok" and not _sparse(text):
            return PageText(text, "text_layer", None)  # the common case: no page object needed
        try:
            page = self.document[index]
        except pdfium.PdfiumError:
            return PageText(text, "text_layer", None)
        try:
            if not self.wants_ocr(page, text, layer):
                return PageText(text, "text_layer", None)
            if not ocr.available():
                self.warnings.append(
                    f"page {index + 1} needs OCR, which is unavailable here: {ocr.unavailable_reason()}"
                )
                return PageText(text, "text_layer", None)
            read = ocr.recognise(
                page,
                index + 1,
                self.languages,
                self.limits,
                scan=layer != "ok" or _sparse(text),
                with_lines=self.with_lines,
                with_words=self.with_words,
            )
        finally:
            page.close()
        if self.with_lines or self.with_words:
            self.read[index] = read
        found = layout_text(read.text).strip()
        if read.blank:
            self.warnings.append(f"page {index + 1}: the scanned page is blank (no text on it)")
        elif not found:
            self.warnings.append(f"page {index + 1}: OCR found no text on it (a picture?); see {RENDER_TOOL}")
        elif read.confidence < self.limits.low_confidence:
            self.warnings.append(
                f"page {index + 1}: OCR confidence is low ({read.confidence}/100); "
                f"check the text against {RENDER_TOOL}"
            )
        return PageText(found + "\n" if found else "", "ocr", read.confidence, read.languages, read.rotation)


def ocr_page_lines(texts: PageTexts, index: int, lines: PageLines) -> tuple[PageLines, PageText]:
    """The Markdown parser's lines of a page (``layoutlines.PageLines``) with OCR applied: when the
    ``ocr`` argument has the page read by OCR, its lines are OCR's (boxes in points, font size
    from Tesseract), so the structure census finds headings and lists in a scan by their
    sizes; the images that make up most of the page (the scan itself) are left out."""
    layer_text = "\n".join(line.text for line in lines.lines)
    final = texts.text(index, layer_text)
    read = texts.read.pop(index, None)
    if final.source != "ocr" or read is None or not read.lines:
        return lines, final
    width, height = (lines.height, lines.width) if read.rotation in (90, 270) else (lines.width, lines.height)
    area = max(width * height, 1.0)
    images = [
        image
        for image in lines.images
        if (image.x1 - image.x0) * (image.bottom - image.top) < MOSTLY_IMAGE * area
    ]
    ocr_lines = [
        TextLine(line.text, line.x0, line.x1, line.top, line.bottom, line.size, bold=False, italic=False)
        for line in read.lines
    ]
    return PageLines(width=width, height=height, lines=ocr_lines, images=images, cut=lines.cut), final
