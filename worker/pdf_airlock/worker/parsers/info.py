"""``pdf_info``: document-level facts and a per-page summary.

Input: untrusted bytes. qpdf (pikepdf) reads the object model (version, encryption, the Info
dictionary); PDFium reads page geometry and whether each page has a text layer. All strings are
bounded; the per-page list is paginated by the caller's ``start`` index.
"""

from __future__ import annotations

import ctypes
import math
from typing import Any, Final

import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pdf_airlock.worker import progress
from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.decrypt import encryption_facts
from pdf_airlock.worker.pdf.docfacts import feature_flags, reconcile, repair_report, xmp_metadata
from pdf_airlock.worker.pdf.opening import clean_string, open_document, open_pikepdf
from pdf_airlock.worker.pdf.pages import pdfium_label, pdfium_labels, select_pages

__all__ = ["DECRYPT_WARM_ARGS", "KIND", "run", "warm_up"]

KIND: Final = "pdf_info"
# The job arguments of this parser's warm-up on encrypted samples (``pdf_airlock.worker.warmup``).
DECRYPT_WARM_ARGS: Final[dict[str, Any]] = {}

MAX_PAGE_ENTRIES: Final = 1000
CHARS_PER_TOKEN: Final = 4  # a rough rule for English text with common tokenizers
SCANNED_MAX_CHARS: Final = 16
SCANNED_MIN_IMAGE_COVER: Final = 0.5
MAX_OBJECTS_EXAMINED: Final = 5000
MAX_METADATA_KEYS: Final = 64
_STANDARD_KEYS: Final = {
    "/Title": "title",
    "/Author": "author",
    "/Subject": "subject",
    "/Keywords": "keywords",
    "/Creator": "creator",
    "/Producer": "producer",
    "/CreationDate": "creation_date",
    "/ModDate": "mod_date",
    "/Trapped": "trapped",
}


def _metadata(pdf: pikepdf.Pdf, warnings: list[str]) -> dict[str, str]:
    result: dict[str, str] = {}
    try:
        items = list(pdf.docinfo.items())
    except (pikepdf.PdfError, ValueError, TypeError):
        warnings.append("the Info dictionary could not be read")
        return result
    if len(items) > MAX_METADATA_KEYS:
        warnings.append(f"Info dictionary has {len(items)} keys; the first {MAX_METADATA_KEYS} are shown")
        items = items[:MAX_METADATA_KEYS]
    for key, value in items:
        name = _STANDARD_KEYS.get(str(key), clean_string(str(key).lstrip("/"), 128))
        try:
            result[name] = clean_string(value)
        except (ValueError, TypeError, UnicodeError):
            warnings.append(f"metadata value {name!r} is not a readable string")
    return result


def _from_pdfium(document: Any) -> tuple[str, dict[str, str], None]:
    raw_version = document.get_version()
    version = (
        f"{raw_version // 10}.{raw_version % 10}" if isinstance(raw_version, int) and raw_version else "?"
    )
    metadata = {}
    for key, value in list(document.get_metadata_dict(skip_empty=True).items())[:MAX_METADATA_KEYS]:
        name = _STANDARD_KEYS.get("/" + key, clean_string(key, 128))
        metadata[name] = clean_string(value)
    return version, metadata, None


def _image_cover(page: Any, area: float) -> float:
    """Share of the page covered by image objects (top level; capped work on huge pages)."""
    covered = 0.0
    count = min(int(pdfium_c.FPDFPage_CountObjects(page.raw)), MAX_OBJECTS_EXAMINED)
    left, bottom, right, top = (ctypes.c_float() for _ in range(4))
    for index in range(count):
        obj = pdfium_c.FPDFPage_GetObject(page.raw, index)
        if not obj or pdfium_c.FPDFPageObj_GetType(obj) != pdfium_c.FPDF_PAGEOBJ_IMAGE:
            continue
        if pdfium_c.FPDFPageObj_GetBounds(obj, left, bottom, right, top):
            covered += max(0.0, right.value - left.value) * max(0.0, top.value - bottom.value)
    return min(1.0, covered / area) if area > 0 else 0.0


def _page_entry(page: Any, index: int, label: str) -> dict[str, Any]:
    width, height = page.get_size()
    textpage = page.get_textpage()
    chars = max(0, int(textpage.count_chars()))
    textpage.close()
    scanned = False
    if chars < SCANNED_MAX_CHARS:
        scanned = _image_cover(page, float(width) * float(height)) >= SCANNED_MIN_IMAGE_COVER
    return {
        "page": index + 1,
        "label": label,
        "width_pt": round(float(width), 2),
        "height_pt": round(float(height), 2),
        "rotation": int(page.get_rotation()),
        "has_text": chars > 0,
        "chars": chars,
        "tokens_estimate": math.ceil(chars / CHARS_PER_TOKEN),
        "scanned": scanned,
    }


def _structure(data: bytes, password: str | None, warnings: list[str]) -> dict[str, Any] | None:
    """What qpdf reads from the object model; None when qpdf cannot parse the structure."""
    try:
        with open_pikepdf(data, password, warnings) as pdf:
            metadata = _metadata(pdf, warnings)
            xmp = xmp_metadata(pdf, warnings)
            return {
                "pdf_version": str(pdf.pdf_version),
                "metadata": metadata,
                "encryption": encryption_facts(pdf),
                "xmp": xmp,
                "metadata_conflicts": reconcile(metadata, xmp),
                "features": feature_flags(pdf, warnings),
                "repair": repair_report(pdf),
            }
    except WorkerError as exc:
        if exc.code != "malformed":
            raise
        return None


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    password = args.get("password")
    warnings: list[str] = []
    facts = _structure(data, password, warnings)
    opened = open_document(data, password)
    document = opened.document
    warnings.extend(note for note in opened.warnings if note not in warnings)
    if facts is None:
        # qpdf refuses some damaged structures PDFium still reads (page-tree loops, lost /Root):
        # answer from PDFium and say so, rather than fail the whole call.
        version, metadata, encryption = _from_pdfium(document)
        warnings.append("qpdf could not parse the document structure; version and metadata come from PDFium")
        facts = {
            "pdf_version": version,
            "metadata": metadata,
            "encryption": encryption,
            "xmp": None,
            "metadata_conflicts": [],
            "features": None,
            "repair": None,
        }
    try:
        page_count = len(document)
        labels = pdfium_labels(document)
        selection = select_pages(args.get("pages"), page_count, labels)
        start = int(args.get("start", 0))
        window = selection[start : start + MAX_PAGE_ENTRIES]
        pages = []
        for index in window:
            try:
                page = document[index]
            except pdfium.PdfiumError:
                warnings.append(f"page {index + 1} could not be loaded by PDFium")
                continue
            try:
                pages.append(_page_entry(page, index, pdfium_label(document, index)))
            except pdfium.PdfiumError:
                warnings.append(f"page {index + 1}: PDFium could not read its text layer")
            finally:
                page.close()
            progress.page_done(len(pages), len(window))
    finally:
        document.close()
    end = start + len(window)
    return {
        "page_count": page_count,
        "pdf_version": facts["pdf_version"],
        "encrypted": facts["encryption"] is not None,
        "encryption": facts["encryption"],
        "producer": facts["metadata"].get("producer"),
        "metadata": facts["metadata"],
        "xmp": facts["xmp"],
        "metadata_conflicts": facts["metadata_conflicts"],
        "features": facts["features"],
        "repair": facts["repair"],
        "tokens_estimate": sum(page["tokens_estimate"] for page in pages),
        "scanned_pages": sum(1 for page in pages if page["scanned"]),
        "pages": pages,
        "next_start": end if end < len(selection) else None,
        "warnings": warnings,
    }


def warm_up(sample: bytes) -> None:
    """Parse the sample (XMP included); raise if the engines do not work."""
    info = run(sample, {})
    if info["xmp"] is None or info["metadata_conflicts"] or info["page_count"] != 1:
        raise RuntimeError("pdf_info failed its warm-up")
