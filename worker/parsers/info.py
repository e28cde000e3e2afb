"""``pdf_info``: document-level facts and a per-page summary.

Input: untrusted bytes. qpdf (pikepdf) reads the object model (version, encryption, the Info
dictionary); PDFium reads page geometry and whether each page has a text layer. All strings are
bounded; the per-page list is paginated by the caller's ``start`` index.
"""

from __future__ import annotations

from typing import Any, Final

import pikepdf
import pypdfium2 as pdfium

from worker import progress
from worker.errors import WorkerError
from worker.parsers.common import clean_string, open_pdfium, open_pikepdf
from worker.parsers.pages import select_pages

__all__ = ["run"]

MAX_PAGE_ENTRIES: Final = 1000
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


def _encryption(pdf: pikepdf.Pdf) -> dict[str, Any] | None:
    if not pdf.is_encrypted:
        return None
    info = pdf.encryption
    return {
        "revision": int(info.R),
        "version": int(info.V),
        "key_bits": int(info.bits),
        "method": str(info.stream_method).rsplit(".", 1)[-1],
    }


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


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    password = args.get("password")
    warnings: list[str] = []
    try:
        with open_pikepdf(data, password) as pdf:
            version = str(pdf.pdf_version)
            metadata = _metadata(pdf, warnings)
            encryption = _encryption(pdf)
    except WorkerError as exc:
        if exc.code != "malformed":
            raise
        version = ""  # filled from PDFium below
    document = open_pdfium(data, password)
    if not version:
        # qpdf refuses some damaged structures PDFium still reads (page-tree loops, lost /Root):
        # answer from PDFium and say so, rather than fail the whole call.
        version, metadata, encryption = _from_pdfium(document)
        warnings.append("qpdf could not parse the document structure; version and metadata come from PDFium")
    try:
        page_count = len(document)
        selection = select_pages(args.get("pages"), page_count)
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
                width, height = page.get_size()
                textpage = page.get_textpage()
                has_text = textpage.count_chars() > 0
                textpage.close()
                pages.append(
                    {
                        "page": index + 1,
                        "width_pt": round(float(width), 2),
                        "height_pt": round(float(height), 2),
                        "rotation": int(page.get_rotation()),
                        "has_text": has_text,
                    }
                )
            finally:
                page.close()
            progress.page_done(len(pages), len(window))
    finally:
        document.close()
    end = start + len(window)
    return {
        "page_count": page_count,
        "pdf_version": version,
        "encrypted": encryption is not None,
        "encryption": encryption,
        "producer": metadata.get("producer"),
        "metadata": metadata,
        "pages": pages,
        "next_start": end if end < len(selection) else None,
        "warnings": warnings,
    }
