"""OCR of rendered pages with Tesseract (``tesserocr``), loaded in the zygote.

Input: a PDFium page of an untrusted document. The page is rendered in grey within
``OCR_MAX_PIXELS`` (a page that would need fewer than ``OCR_MIN_DPI`` to fit is refused with
``memory_limit``, so a 100k x 100k page never reaches the renderer), handed to Tesseract as raw
pixels (no image decoder of Leptonica runs on document bytes) and recognised under its own
deadline (``OCR_PAGE_TIMEOUT_MS``; past it the job fails with ``timeout``).

The engine and its language data are loaded by ``warm_up`` in the zygote, one Tesseract
instance per shipped language: a job child inherits them copy-on-write and opens no file.
Tesseract's debug output goes to stderr (its default, ``/dev/null``, would be opened on first
use, which the sandbox refuses). When the language data is absent the server still serves:
``available`` is False and callers warn that OCR is unavailable.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Final

from pdf_airlock.worker.contract import WorkerError

__all__ = [
    "LOW_CONFIDENCE",
    "OcrLine",
    "OcrText",
    "available",
    "languages",
    "recognise",
    "self_check",
    "unavailable_reason",
    "warm_up",
]

# Thread pools (OpenMP, OpenBLAS) start at library load unless told not to; a job child may not
# create a thread (seccomp), and one thread per child is the design.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_THREAD_LIMIT"):
    os.environ[_var] = "1"

POINTS_PER_INCH: Final = 72.0
OCR_DPI: Final = 300.0  # Tesseract's best resolution for body text
OCR_MIN_DPI: Final = 100.0  # below this, body text is unreadable: refuse instead of guessing
OCR_MAX_PIXELS: Final = 16_000_000  # a Letter page at 300 dpi is 8.4 Mpx; A3 at 300 dpi 17.4 Mpx
OCR_PAGE_TIMEOUT_MS: Final = 20_000
LOW_CONFIDENCE: Final = 60  # mean word confidence (0-100) under which a page gets a warning
MAX_LANGUAGES: Final = 8
MAX_LINES: Final = 5000  # lines of one page kept for pdf_markdown
# Where Debian's tesseract-ocr-<lang> packages put the data, newest first.
TESSDATA_DIRS: Final = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
)
_NOT_LANGUAGES: Final = frozenset({"osd", "equ"})  # orientation/script and equation data


@dataclass(frozen=True, slots=True)
class OcrLine:
    """A line Tesseract found: its box in points from the page's top-left corner, and the font
    size in points Tesseract estimates for its first word (what the structure census needs)."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float


@dataclass(frozen=True, slots=True)
class OcrText:
    """One page's recognised text, Tesseract's mean word confidence (0-100), the resolution it
    was read at and (when asked for) its lines in Tesseract's reading order."""

    text: str
    confidence: int
    dpi: float
    lines: tuple[OcrLine, ...]


_engines: dict[str, Any] = {}  # language -> its Tesseract instance, loaded by warm_up
_why_not: list[str] = ["OCR was not loaded"]  # why OCR is unavailable (empty once loaded)


def available() -> bool:
    return bool(_engines)


def unavailable_reason() -> str | None:
    return None if _engines else (_why_not or ["unknown"])[0]


def languages() -> list[str]:
    """The languages this installation can read, sorted."""
    return sorted(_engines)


def _engine_for(requested: list[str]) -> Any:
    unknown = [lang for lang in requested if lang not in _engines]
    if unknown or not requested:
        shipped = ", ".join(languages()) or "none"
        raise WorkerError(
            "invalid_arguments",
            f"OCR language {', '.join(unknown) or '(none)'} is not installed; installed: {shipped}",
        )
    if len(set(requested)) > 1:  # one Tesseract instance per language is loaded, not per mix
        raise WorkerError(
            "invalid_arguments", f"OCR reads with one language a call; installed: {', '.join(languages())}"
        )
    return _engines[requested[0]]


def check_languages(requested: list[str]) -> None:
    """Raise ``invalid_arguments`` unless every requested language is installed."""
    if available():
        _engine_for(requested)


def _scale_for(width_pt: float, height_pt: float, page_number: int) -> float:
    if not (math.isfinite(width_pt) and math.isfinite(height_pt)) or width_pt <= 0 or height_pt <= 0:
        raise WorkerError("malformed", f"page {page_number} has no usable size")
    scale = OCR_DPI / POINTS_PER_INCH
    if width_pt * height_pt * scale * scale > OCR_MAX_PIXELS:
        scale = math.sqrt(OCR_MAX_PIXELS / (width_pt * height_pt)) * 0.999
    if scale * POINTS_PER_INCH < OCR_MIN_DPI:
        raise WorkerError(
            "memory_limit",
            f"page {page_number} is too large to OCR: it would need more than {OCR_MAX_PIXELS} pixels "
            f"at {OCR_MIN_DPI:g} dpi",
            {"page": page_number, "max_pixels": OCR_MAX_PIXELS},
        )
    return scale


def _lines(api: Any, dpi: float) -> tuple[OcrLine, ...]:
    import tesserocr

    found: list[OcrLine] = []
    iterator = api.GetIterator()
    if iterator is None:
        return ()
    level = tesserocr.RIL.TEXTLINE
    points = POINTS_PER_INCH / dpi
    for item in tesserocr.iterate_level(iterator, level):
        if len(found) >= MAX_LINES:
            break
        try:  # tesserocr raises RuntimeError for a line it found no text in
            text = item.GetUTF8Text(level)
            box = item.BoundingBox(level)
            font = item.WordFontAttributes() or {}
        except RuntimeError:
            continue
        if not text or not text.strip() or box is None:
            continue
        left, top, right, bottom = box
        size = float(font.get("pointsize") or 0) or (bottom - top) * points
        found.append(
            OcrLine(text.strip(), left * points, right * points, top * points, bottom * points, size)
        )
    return tuple(found)


def recognise(page: Any, page_number: int, requested: list[str], *, with_lines: bool = False) -> OcrText:
    """Render ``page`` (a pypdfium2 page) and recognise it with the engine for ``requested``."""
    import pypdfium2 as pdfium

    api = _engine_for(requested)
    width_pt, height_pt = (float(v) for v in page.get_size())
    scale = _scale_for(width_pt, height_pt, page_number)
    try:
        bitmap = page.render(scale=scale, grayscale=True, may_draw_forms=False)
    except pdfium.PdfiumError as exc:
        raise WorkerError("malformed", f"PDFium could not render page {page_number} for OCR") from exc
    try:
        pixels = bytes(bitmap.buffer)
        api.SetImageBytes(pixels, bitmap.width, bitmap.height, 1, bitmap.stride)
    finally:
        bitmap.close()
    del pixels
    dpi = scale * POINTS_PER_INCH
    api.SetSourceResolution(round(dpi))
    try:
        if not api.Recognize(OCR_PAGE_TIMEOUT_MS):
            raise WorkerError(
                "timeout",
                f"OCR of page {page_number} exceeded its deadline ({OCR_PAGE_TIMEOUT_MS} ms)",
                {"page": page_number},
            )
        text = api.GetUTF8Text() or ""
        confidence = max(0, int(api.MeanTextConf())) if text.strip() else 0
        lines = _lines(api, dpi) if with_lines else ()
    finally:
        api.Clear()
    return OcrText(text=text, confidence=confidence, dpi=round(dpi, 2), lines=lines)


def _tessdata() -> str | None:
    for directory in TESSDATA_DIRS:
        if os.path.isfile(os.path.join(directory, "eng.traineddata")):
            return directory
    return None


def warm_up(sample_page: Any, expected: str) -> None:
    """In the zygote: load one Tesseract instance per installed language and read the sample
    page with each (Tesseract loads parts of its model on the first page). Leaves OCR
    unavailable, with the reason, when the engine or its data is missing."""
    try:
        import tesserocr
    except ImportError:
        _why_not[:] = ["the tesserocr package is not installed"]
        return
    directory = _tessdata()
    if directory is None:
        _why_not[:] = ["no Tesseract language data is installed (Debian: tesseract-ocr-eng)"]
        return
    found = [
        name.removesuffix(".traineddata")
        for name in sorted(os.listdir(directory))
        if name.endswith(".traineddata")
    ]
    for lang in [name for name in found if name not in _NOT_LANGUAGES][:MAX_LANGUAGES]:
        api = tesserocr.PyTessBaseAPI(path=directory, lang=lang, psm=tesserocr.PSM.AUTO)
        api.SetVariable("debug_file", "")
        _engines[lang] = api
    if not _engines:
        _why_not[:] = [f"no Tesseract language data in {directory}"]
        return
    for lang in list(_engines):
        read = recognise(sample_page, 1, [lang], with_lines=True)
        if lang == "eng" and expected not in read.text:
            raise RuntimeError("OCR failed its warm-up")
    _why_not.clear()


def self_check() -> str:
    """In a sandboxed child (``pdf-airlock self-test``): OCR the trusted sample page with
    ``pdf_read`` and say how it went, as a layer status: ``active: ...``, ``unavailable: ...``
    or ``failed: ...``."""
    from pdf_airlock.worker.parsers import get_parser
    from pdf_airlock.worker.pdf.sample import SAMPLE_TEXT, tiny_pdf

    if not available():
        return f"unavailable: {unavailable_reason()}"
    try:
        page = get_parser("pdf_read")(tiny_pdf(), {"max_chars": 1000, "ocr": "force"})["pages"][0]
    except (WorkerError, RuntimeError, MemoryError) as exc:
        return f"failed: {type(exc).__name__}"
    if SAMPLE_TEXT not in page["text"]:
        return "failed: the sample page was misread"
    return f"active: read the sample page (confidence {page['ocr_confidence']}); languages: " + ", ".join(
        languages()
    )
