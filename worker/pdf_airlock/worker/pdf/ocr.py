"""OCR of rendered pages with Tesseract (``tesserocr``), loaded in the zygote.

Input: a PDFium page of an untrusted document, and the limits the supervisor sent with the job
(``OcrLimits``, each checked against its range in ``contract.OCR_LIMITS``). The page is rendered
in grey at ``dpi`` within ``max_pixels`` (a page that would need fewer than ``min_dpi`` to fit is
refused with ``memory_limit``, so a 100k x 100k page never reaches the renderer), handed to
Tesseract as raw pixels (no image decoder of Leptonica runs on document bytes) and recognised
under its own deadline (``page_timeout_ms``; past it the job fails with ``timeout``). Words come
back with their boxes and the map from the rendered bitmap to the page's coordinates, so a hit
in OCR'd text can be shown on the page (``pdf.ocrwords``).

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

from pdf_airlock.worker.contract import OCR_LIMITS, OCR_LIMITS_ARG, WorkerError

__all__ = [
    "OcrLimits",
    "OcrLine",
    "OcrText",
    "OcrWord",
    "available",
    "languages",
    "recognise",
    "unavailable_reason",
    "warm_up",
]

# Thread pools (OpenMP, OpenBLAS) start at library load unless told not to; a job child may not
# create a thread (seccomp), and one thread per child is the design.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_THREAD_LIMIT"):
    os.environ[_var] = "1"

POINTS_PER_INCH: Final = 72.0
MAX_LANGUAGES: Final = 8
MAX_LINES: Final = 5000  # lines of one page kept for pdf_markdown
MAX_WORDS: Final = 20_000  # words of one page kept with their boxes for pdf_search
IDENTITY: Final = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)  # an affine map that changes nothing
# Where Debian's tesseract-ocr-<lang> packages put the data, newest first.
TESSDATA_DIRS: Final = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
)
_NOT_LANGUAGES: Final = frozenset({"osd", "equ"})  # orientation/script and equation data


@dataclass(frozen=True, slots=True)
class OcrLimits:
    """The OCR limits of one job (defaults and ranges: ``contract.OCR_LIMITS``). The defaults
    are Tesseract's best resolution for body text (300 dpi), a pixel budget that holds a Letter
    page at 300 dpi (8.4 Mpx) and nearly A3 (17.4 Mpx), 100 dpi as the least at which body text
    is still worth reading, 20 s a page and a warning under a mean confidence of 60."""

    dpi: int = OCR_LIMITS["dpi"][0]
    min_dpi: int = OCR_LIMITS["min_dpi"][0]
    max_pixels: int = OCR_LIMITS["max_pixels"][0]
    page_timeout_ms: int = OCR_LIMITS["page_timeout_ms"][0]
    low_confidence: int = OCR_LIMITS["low_confidence"][0]

    @classmethod
    def from_job(cls, args: dict[str, Any]) -> OcrLimits:
        """The job argument ``ocr_limits`` (absent: the defaults), each value an integer in its
        range and ``min_dpi`` at most ``dpi``; anything else is ``invalid_arguments``."""
        untrusted = args.get(OCR_LIMITS_ARG)
        if untrusted is None:
            return cls()
        if not isinstance(untrusted, dict) or set(untrusted) - set(OCR_LIMITS):
            raise WorkerError("invalid_arguments", f"{OCR_LIMITS_ARG} must name only {', '.join(OCR_LIMITS)}")
        values: dict[str, int] = {}
        for name, untrusted_value in untrusted.items():
            _default, lowest, highest = OCR_LIMITS[name]
            if type(untrusted_value) is not int or not lowest <= untrusted_value <= highest:
                raise WorkerError(
                    "invalid_arguments", f"OCR limit {name} must be an integer from {lowest} to {highest}"
                )
            values[name] = untrusted_value
        limits = cls(**values)
        if limits.min_dpi > limits.dpi:
            raise WorkerError("invalid_arguments", "OCR limit min_dpi must not exceed dpi")
        return limits


@dataclass(frozen=True, slots=True)
class OcrWord:
    """A word Tesseract found: its box in pixels of the rendered bitmap (top-left origin) and
    the number of its line on the page."""

    text: str
    left: int
    top: int
    right: int
    bottom: int
    line: int


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
    words: tuple[OcrWord, ...] = ()
    # bitmap pixel (x, y) -> page point (a*x + c*y + e, b*x + d*y + f): PDFium's own mapping,
    # so the page's rotation and crop box are accounted for
    to_page: tuple[float, float, float, float, float, float] = IDENTITY


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


def _scale_for(width_pt: float, height_pt: float, page_number: int, limits: OcrLimits) -> float:
    if not (math.isfinite(width_pt) and math.isfinite(height_pt)) or width_pt <= 0 or height_pt <= 0:
        raise WorkerError("malformed", f"page {page_number} has no usable size")
    scale = limits.dpi / POINTS_PER_INCH
    if width_pt * height_pt * scale * scale > limits.max_pixels:
        scale = math.sqrt(limits.max_pixels / (width_pt * height_pt)) * 0.999
    if scale * POINTS_PER_INCH < limits.min_dpi:
        raise WorkerError(
            "memory_limit",
            f"page {page_number} is too large to OCR: it would need more than {limits.max_pixels} pixels "
            f"at {limits.min_dpi} dpi",
            {"page": page_number, "max_pixels": limits.max_pixels},
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


def _words(api: Any) -> tuple[OcrWord, ...]:
    """The words in Tesseract's reading order, with their boxes in bitmap pixels."""
    import tesserocr

    found: list[OcrWord] = []
    iterator = api.GetIterator()
    if iterator is None:
        return ()
    word, textline = tesserocr.RIL.WORD, tesserocr.RIL.TEXTLINE
    line = -1
    for item in tesserocr.iterate_level(iterator, word):
        if len(found) >= MAX_WORDS:
            break
        if item.IsAtBeginningOf(textline):
            line += 1
        try:  # tesserocr raises RuntimeError for a word it found no text in
            text = item.GetUTF8Text(word)
            box = item.BoundingBox(word)
        except RuntimeError:
            continue
        if text and text.strip() and box is not None:
            left, top, right, bottom = box
            found.append(OcrWord(text.strip(), left, top, right, bottom, max(line, 0)))
    return tuple(found)


def _to_page(page: Any, width: int, height: int) -> tuple[float, float, float, float, float, float]:
    """The affine map from a ``width`` x ``height`` rendering of ``page`` to its coordinates,
    read from PDFium (``FPDF_DeviceToPage``) at three corners."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    corners = []
    for x, y in ((0, 0), (width, 0), (0, height)):
        px, py = ctypes.c_double(), ctypes.c_double()
        pdfium_c.FPDF_DeviceToPage(page.raw, 0, 0, width, height, 0, x, y, px, py)
        corners.append((px.value, py.value))
    (ox, oy), (wx, wy), (hx, hy) = corners
    return ((wx - ox) / width, (wy - oy) / width, (hx - ox) / height, (hy - oy) / height, ox, oy)


def recognise(
    page: Any,
    page_number: int,
    requested: list[str],
    limits: OcrLimits,
    *,
    with_lines: bool = False,
    with_words: bool = False,
) -> OcrText:
    """Render ``page`` (a pypdfium2 page) and recognise it with the engine for ``requested``."""
    import pypdfium2 as pdfium

    api = _engine_for(requested)
    width_pt, height_pt = (float(v) for v in page.get_size())
    scale = _scale_for(width_pt, height_pt, page_number, limits)
    try:
        bitmap = page.render(scale=scale, grayscale=True, may_draw_forms=False)
    except pdfium.PdfiumError as exc:
        raise WorkerError("malformed", f"PDFium could not render page {page_number} for OCR") from exc
    try:
        pixels = bytes(bitmap.buffer)
        width, height = bitmap.width, bitmap.height
        api.SetImageBytes(pixels, width, height, 1, bitmap.stride)
    finally:
        bitmap.close()
    del pixels
    dpi = scale * POINTS_PER_INCH
    api.SetSourceResolution(round(dpi))
    try:
        if not api.Recognize(limits.page_timeout_ms):
            raise WorkerError(
                "timeout",
                f"OCR of page {page_number} exceeded its deadline ({limits.page_timeout_ms} ms)",
                {"page": page_number, "page_timeout_ms": limits.page_timeout_ms},
            )
        text = api.GetUTF8Text() or ""
        confidence = max(0, int(api.MeanTextConf())) if text.strip() else 0
        lines = _lines(api, dpi) if with_lines else ()
        words = _words(api) if with_words else ()
    finally:
        api.Clear()
    to_page = _to_page(page, width, height) if words else IDENTITY
    return OcrText(text, confidence, round(dpi, 2), lines, words, to_page)


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
        read = recognise(sample_page, 1, [lang], OcrLimits(), with_lines=True, with_words=True)
        if lang == "eng" and expected not in read.text:
            raise RuntimeError("OCR failed its warm-up")
    _why_not.clear()
