"""OCR of rendered pages with Tesseract (``tesserocr``), loaded in the zygote.

Input: a PDFium page of an untrusted document, the languages asked for (or none: detected), and
the OCR limits of the job's ``limits`` (``contract.OcrLimits``, each in its range: set by
``apply_limits`` before the parse, the way qpdf's decode caps are). The page is rendered in grey
and handed to Tesseract as raw pixels (no image decoder of Leptonica runs on document bytes):

1. **Resolution** (``pdf.ocrimage``). A scan (a page whose text layer is absent or sparse and
   that is mostly one image) is rendered at the image's own pixels per inch as placed, pixel for
   pixel, so Tesseract sees the scanner's pixels, not a resampling of them; any other page at
   ``dpi``. Either way within ``max_pixels`` (a page that would need fewer than ``min_dpi`` to
   fit is refused with ``memory_limit``, so a 100k x 100k page never reaches the renderer) and
   never under ``min_dpi``.
2. **Ink.** A page with almost no dark pixels (``MIN_INK_SHARE``) is blank: nothing is read.
3. **Script and orientation.** With no language named, Tesseract's OSD finds the script and
   whether the page is turned; the page is rendered upright and read with the script's languages
   (``pdf.ocrscripts``), one reading kept whole. With languages named, the page is read as it
   is (several languages: their readings merged line by line) and OSD runs only when
   the reading is unsure (under ``UNSURE``), in case the page was scanned turned. An unsure
   reading with no language named is also tried with the first language of every script on a
   band of its lines (``PROBES``), in case OSD named the wrong script.
4. **Reading.** Each language's Tesseract reads the whole image; the readings of several named
   languages are merged line by line, each line from the surest (``pdf.ocrpass``). A reading
   that is all noise (mean confidence under ``NOISE_CONFIDENCE``) reads as nothing: a blank page
   when its ink is sparse (specks: ``MAX_SPECKS_INK_SHARE``), else a picture with no text in it.

The page's whole OCR (rendering, OSD, every reading, layout analysis included) runs under its
deadline (``page_timeout_ms``): in a job child by the child's own clock (``worker.deadline``),
which answers ``timeout`` for the page when it runs out, in-process by Tesseract's own deadline
on each recognition. Words come back with their boxes and the map from the rendered bitmap to
the page's coordinates (``to_page``, the rotation included), so a hit in OCR'd text can be shown
on the page (``pdf.ocrwords``).

The engine and its language data are loaded by ``warm_up`` in the zygote: one Tesseract instance
per installed language (``tessdata``) and one for OSD, each having read a first page. A job
child inherits them copy-on-write and opens no file. Tesseract's debug output goes to stderr
(its default, ``/dev/null``, would be opened on first use, which the sandbox refuses). When the
language data is absent the server still serves: ``available`` is False and callers warn that
OCR is unavailable.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any, Final

from pdf_airlock.worker import deadline
from pdf_airlock.worker.contract import OcrLimits, WorkerError
from pdf_airlock.worker.pdf import ocrimage, ocrpass, ocrscripts

__all__ = [
    "OcrLimits",
    "OcrLine",
    "OcrText",
    "OcrWord",
    "apply_limits",
    "available",
    "check_languages",
    "current_limits",
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
MAX_LANGUAGES: Final = 64  # language data files loaded at most (the image ships 26)
IDENTITY: Final = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)  # an affine map that changes nothing
# Where Debian's tesseract-ocr-<lang> packages put the data, newest first.
TESSDATA_DIRS: Final = (
    "/usr/share/tesseract-ocr/5/tessdata",
    "/usr/share/tesseract-ocr/4.00/tessdata",
    "/usr/share/tessdata",
)
OSD_DATA: Final = "osd"
_NOT_LANGUAGES: Final = frozenset({OSD_DATA, "equ"})  # orientation/script and equation data
NOISE_CONFIDENCE: Final = 30  # a reading this unsure of every word is noise, not text
UNSURE: Final = 80  # a reading under this mean confidence is checked: turned? another script?
PROBE_LINES: Final = 2  # lines of an unsure reading that the probes read
PROBE_PAD: Final = 8  # pixels above and below the probed lines
PROBE_MARGIN: Final = 10  # a probe must be this much surer than the reading to replace it
MIN_ORIENTATION_CONFIDENCE: Final = 1.5  # OSD's orientation confidence to act on
OSD_CHARACTERS: Final = 20  # characters OSD classifies at least (Tesseract's default: 50)
_ROTATIONS: Final = {0: 0, 90: 3, 180: 2, 270: 1}  # OSD's turn -> PDFium's rotation index


_limits = OcrLimits()  # this (single-job) process's, set by ``apply_limits``


def apply_limits(limits: OcrLimits) -> None:
    """The OCR limits of the job this process runs (``pdf_airlock.worker.child``)."""
    global _limits  # noqa: PLW0603 - one job per process: its limits are the process's
    _limits = limits


def current_limits() -> OcrLimits:
    """The OCR limits of the job this process runs (the defaults until ``apply_limits``)."""
    return _limits


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
    """A line Tesseract found: its box in points from the top-left corner of the page as read
    (upright), and the font size in points Tesseract estimates for its first word (what the
    structure census needs)."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float


@dataclass(frozen=True, slots=True)
class OcrText:
    """One page's recognised text, Tesseract's mean word confidence (0-100), the resolution it
    was read at, the languages that read it, the clockwise rotation (degrees) that turned it
    upright, whether it was blank, and (when asked for) its lines in reading order and words."""

    text: str
    confidence: int
    dpi: float
    lines: tuple[OcrLine, ...]
    words: tuple[OcrWord, ...] = ()
    # bitmap pixel (x, y) -> page point (a*x + c*y + e, b*x + d*y + f): PDFium's own mapping,
    # so the page's rotation, the rotation applied and the crop box are accounted for
    to_page: tuple[float, float, float, float, float, float] = IDENTITY
    languages: tuple[str, ...] = ()
    rotation: int = 0
    blank: bool = False


_engines: dict[str, Any] = {}  # language -> its Tesseract instance, loaded by warm_up
_osd: list[Any] = []  # the orientation and script detector, when its data is installed
_why_not: list[str] = ["OCR was not loaded"]  # why OCR is unavailable (empty once loaded)


def available() -> bool:
    return bool(_engines)


def unavailable_reason() -> str | None:
    return None if _engines else (_why_not or ["unknown"])[0]


def languages() -> list[str]:
    """The languages this installation can read, sorted."""
    return sorted(_engines)


def detects() -> bool:
    """Whether scripts and orientation are detected (Tesseract's ``osd`` data is installed)."""
    return bool(_osd)


def check_languages(requested: list[str] | None) -> None:
    """Raise ``invalid_arguments`` unless every requested language is installed (None: the
    languages are detected page by page)."""
    if not available() or requested is None:
        return
    unknown = [lang for lang in requested if lang not in _engines]
    if unknown or not requested:
        shipped = ", ".join(languages()) or "none"
        raise WorkerError(
            "invalid_arguments",
            f"OCR language {', '.join(unknown) or '(none)'} is not installed; installed: {shipped}",
        )


# -- reading -----------------------------------------------------------------------------------


class _Page:
    """One page's OCR: its rendering and the readings made of it, under one deadline."""

    def __init__(self, page: Any, page_number: int, limits: OcrLimits, scan: bool) -> None:
        self.page = page
        self.number = page_number
        self.limits = limits
        self.stop = time.monotonic() + limits.page_timeout_ms / 1000
        self.scale = ocrimage.scale_for(
            page, page_number, dpi=limits.dpi, min_dpi=limits.min_dpi, max_pixels=limits.max_pixels, scan=scan
        )
        self.dpi = self.scale * POINTS_PER_INCH
        self.image = ocrimage.render(page, page_number, self.scale, 0)

    def timeout(self) -> WorkerError:
        return WorkerError(
            "timeout",
            f"OCR of page {self.number} exceeded its deadline ({self.limits.page_timeout_ms} ms)",
            {"page": self.number, "page_timeout_ms": self.limits.page_timeout_ms},
        )

    def _left_ms(self) -> int:
        left = math.floor((self.stop - time.monotonic()) * 1000)
        if left <= 0:
            raise self.timeout()
        return left

    def _set(self, api: Any) -> None:
        image = self.image
        api.SetImageBytes(image.pixels, image.width, image.height, 1, image.stride)
        api.SetSourceResolution(round(self.dpi))

    def turn(self, rotation: int) -> None:
        if rotation != self.image.rotation:
            self.image = ocrimage.render(self.page, self.number, self.scale, rotation)

    def detect(self) -> tuple[str | None, int]:
        """OSD's script name (None: unsure) and the clockwise turn that sets the page upright."""
        if not _osd:
            return None, 0
        api = _osd[0]
        self._left_ms()
        self._set(api)
        try:
            found = api.DetectOrientationScript()
        except RuntimeError:
            found = None
        finally:
            api.Clear()
        if not found:
            return None, 0
        turn = (360 - int(found.get("orient_deg") or 0)) % 360
        if float(found.get("orient_conf") or 0) < MIN_ORIENTATION_CONFIDENCE or turn not in _ROTATIONS:
            turn = 0
        return str(found.get("script_name") or "") or None, turn

    def _recognise(self, api: Any) -> bool:
        """Tesseract's recognition under what is left of the deadline; False: it found nothing
        (its layout analysis failed on the image), a timeout if the deadline passed."""
        if api.Recognize(self._left_ms()):
            return True
        if time.monotonic() >= self.stop:
            raise self.timeout()
        return False

    def read(self, language: str) -> ocrpass.Reading:
        api = _engines[language]
        self._set(api)
        try:
            return ocrpass.read(api, language) if self._recognise(api) else ocrpass.Reading(())
        finally:
            api.Clear()

    def read_all(self, wanted: list[str]) -> ocrpass.Reading:
        return ocrpass.merge([self.read(language) for language in wanted])

    def probe(self, reading: ocrpass.Reading, tried: set[str]) -> str | None:
        """The first language of another script when it reads a band of ``reading``'s first
        lines surer, by ``PROBE_MARGIN``, than ``reading`` did."""
        lines = reading.lines[:PROBE_LINES]
        if not lines:
            return None
        image = self.image
        top = max(0, min(line.top for line in lines) - PROBE_PAD)
        bottom = min(image.height, max(line.bottom for line in lines) + PROBE_PAD)
        band = image.pixels[top * image.stride : bottom * image.stride]  # whole rows: no copy per row
        mine = ocrpass.Reading(lines).confidence
        best: tuple[float, str] | None = None
        for language in ocrscripts.PROBES:
            if language in tried or language not in _engines:
                continue
            api = _engines[language]
            api.SetImageBytes(band, image.width, bottom - top, 1, image.stride)
            api.SetSourceResolution(round(self.dpi))
            try:
                confidence = float(api.MeanTextConf()) if self._recognise(api) else 0.0
            finally:
                api.Clear()
            if confidence >= mine + PROBE_MARGIN and (best is None or confidence > best[0]):
                best = (confidence, language)
        return None if best is None else best[1]


def _script_of(language: str) -> str | None:
    return next((script for script, (first, _o) in ocrscripts.SCRIPTS.items() if first == language), None)


def _read_detected(ocr: _Page) -> tuple[ocrpass.Reading, list[str]]:
    """No language named: OSD's script and turn, the script's languages, and the probes when
    the reading is unsure."""
    installed = set(_engines)
    script, turn = ocr.detect()
    ocr.turn(turn)
    reading, wanted = _read_script(ocr, script, installed)
    if reading.confidence < UNSURE:
        other = ocr.probe(reading, set(wanted))
        if other is not None:
            reading, wanted = _read_script(ocr, _script_of(other), installed)
    return reading, wanted


def _read_script(ocr: _Page, script: str | None, installed: set[str]) -> tuple[ocrpass.Reading, list[str]]:
    """The page read by the first language of ``script``, then by the others it calls for
    (``ocrscripts.languages_for``, in order of preference); one reading is kept whole: the first
    in that order that is at most ``ocrpass.MERGE_MARGIN`` less sure of the page than the surest
    (for a script whose candidates are all read, the surest)."""
    first, _others = ocrscripts.candidates(script, installed)
    readings = {first: ocr.read(first)}
    wanted = ocrscripts.languages_for(script, installed, readings[first].text())
    for language in wanted:
        if language not in readings:
            readings[language] = ocr.read(language)
    if script in ocrscripts.ALWAYS_BOTH:
        wanted.sort(key=lambda language: -readings[language].confidence)
    surest = max(reading.confidence for reading in readings.values())
    kept = next(lang for lang in wanted if readings[lang].confidence + ocrpass.MERGE_MARGIN >= surest)
    return readings[kept], [kept]


def _read_named(ocr: _Page, requested: list[str]) -> ocrpass.Reading:
    """Languages named: read as it is; an unsure reading is read again upright if OSD finds the
    page turned, and the surer of the two kept."""
    reading = ocr.read_all(requested)
    if reading.confidence < UNSURE and _osd:
        _script, turn = ocr.detect()
        if turn:
            upright_from = ocr.image
            ocr.turn(turn)
            upright = ocr.read_all(requested)
            if upright.confidence > reading.confidence:
                return upright
            ocr.image = upright_from
    return reading


def recognise(
    page: Any,
    page_number: int,
    requested: list[str] | None,
    limits: OcrLimits,
    *,
    scan: bool = False,
    with_lines: bool = False,
    with_words: bool = False,
) -> OcrText:
    """Render ``page`` (a pypdfium2 page) and recognise it with the ``requested`` languages
    (None: detected); ``scan``: the page's text layer is absent or sparse, so a page that is
    mostly one image is read at that image's own resolution."""
    check_languages(requested)
    seconds = limits.page_timeout_ms / 1000
    envelope = deadline.error_envelope(
        "timeout",
        f"OCR of page {page_number} exceeded its deadline ({limits.page_timeout_ms} ms)",
        {"page": page_number, "page_timeout_ms": limits.page_timeout_ms},
    )
    with deadline.armed(seconds, envelope):
        ocr = _Page(page, page_number, limits, scan)
        dpi = round(ocr.dpi, 2)
        ink = ocrimage.ink_share(ocr.image)
        if ink < ocrimage.MIN_INK_SHARE:
            return OcrText("", 0, dpi, (), blank=True)
        if requested is None:
            reading, used = _read_detected(ocr)
        else:
            reading, used = _read_named(ocr, requested), requested
        rotation = ocr.image.rotation
        if not reading.lines or reading.confidence < NOISE_CONFIDENCE:  # specks, or a picture
            return OcrText("", 0, dpi, (), rotation=rotation, blank=ink <= ocrimage.MAX_SPECKS_INK_SHARE)
        kept = [line.language for line in reading.lines]
        languages_used = tuple(lang for lang in used if lang in kept) or tuple(used[:1])
        words = _words(reading) if with_words else ()
        to_page = ocrimage.to_page(page, ocr.image) if words else IDENTITY
        return OcrText(
            text=reading.text(),
            confidence=max(0, min(100, round(reading.confidence))),
            dpi=dpi,
            lines=_lines(reading, ocr.dpi) if with_lines else (),
            words=words,
            to_page=to_page,
            languages=languages_used,
            rotation=rotation,
        )


def _lines(reading: ocrpass.Reading, dpi: float) -> tuple[OcrLine, ...]:
    points = POINTS_PER_INCH / dpi
    return tuple(
        OcrLine(
            line.text,
            line.left * points,
            line.right * points,
            line.top * points,
            line.bottom * points,
            line.size or (line.bottom - line.top) * points,
        )
        for line in reading.lines
    )


def _words(reading: ocrpass.Reading) -> tuple[OcrWord, ...]:
    """The words in reading order, with their boxes in bitmap pixels and line numbers."""
    return tuple(
        OcrWord(word.text, word.left, word.top, word.right, word.bottom, number)
        for number, line in enumerate(reading.lines)
        for word in line.words
    )


# -- loading -----------------------------------------------------------------------------------


def _tessdata() -> str | None:
    for directory in TESSDATA_DIRS:
        if os.path.isdir(directory) and any(name.endswith(".traineddata") for name in os.listdir(directory)):
            return directory
    return None


def warm_up(sample_page: Any, expected: str) -> None:
    """In the zygote: load one Tesseract instance per installed language, and OSD's, and read
    the sample page with each (Tesseract loads parts of its model on the first page). Leaves OCR
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
    if OSD_DATA in found:
        osd = tesserocr.PyTessBaseAPI(path=directory, lang=OSD_DATA, psm=tesserocr.PSM.OSD_ONLY)
        osd.SetVariable("debug_file", "")
        osd.SetVariable("min_characters_to_try", str(OSD_CHARACTERS))
        _osd[:] = [osd]
    _warm_read(sample_page, expected)
    _why_not.clear()


def _warm_read(sample_page: Any, expected: str) -> None:
    """Read the sample page through ``recognise`` with the first language (English where
    installed, which must read it right), then only its line of text with every other language
    (what a first reading allocates, without the layout analysis of a whole page each), then
    once with detection."""
    first = "eng" if "eng" in _engines else next(iter(_engines))
    read = recognise(sample_page, 1, [first], OcrLimits(), with_lines=True, with_words=True)
    if first == "eng" and expected not in read.text:
        raise RuntimeError("OCR failed its warm-up")
    if not read.words:
        raise RuntimeError("OCR found no words on the sample page")
    left, top = min(word.left for word in read.words), min(word.top for word in read.words)
    right, bottom = max(word.right for word in read.words), max(word.bottom for word in read.words)
    sample = _Page(sample_page, 1, OcrLimits(), scan=False)
    for lang, api in _engines.items():
        if lang != first:
            sample._set(api)
            api.SetRectangle(left, top, right - left, bottom - top)
            try:
                api.Recognize()
                ocrpass.read(api, lang)
            finally:
                api.Clear()
    if _osd:
        recognise(sample_page, 1, None, OcrLimits())
