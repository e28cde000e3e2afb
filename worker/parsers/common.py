"""Opening an untrusted document with each engine, mapping engine failures to error codes.

Input: raw bytes of unknown provenance and an optional password. Nothing about the bytes is
assumed; every engine exception is translated into a ``WorkerError`` with a message that never
quotes the document.
"""

from __future__ import annotations

import io
from typing import Any, Final

import pikepdf
import pikepdf.settings
import pypdfium2 as pdfium

from worker.errors import WorkerError

__all__ = [
    "MAX_STRING_CHARS",
    "apply_decode_limits",
    "check_header",
    "clean_string",
    "open_pdfium",
    "open_pikepdf",
]

HEADER_SEARCH_BYTES: Final = 1024
MAX_STRING_CHARS: Final = 4096

# PDFium's FPDF_GetLastError codes for document loading.
_FPDF_ERR_FILE: Final = 2
_FPDF_ERR_FORMAT: Final = 3
_FPDF_ERR_PASSWORD: Final = 4
_FPDF_ERR_SECURITY: Final = 5


def apply_decode_limits(max_decode_bytes: int) -> None:
    """qpdf's global decoder caps for this (single-document) process: a stream that would
    decode past them fails with a qpdf error instead of exhausting memory."""
    pikepdf.settings.set_qpdf_limits(
        flate_max_memory=max_decode_bytes,
        png_max_memory=max_decode_bytes,
        run_length_max_memory=max_decode_bytes,
        tiff_max_memory=max_decode_bytes,
        dct_max_memory=max_decode_bytes,
    )


def _limit_hit(before: int) -> bool:
    return int(pikepdf.settings.qpdf_limit_errors()) > before


def check_header(data: bytes) -> None:
    """A PDF must carry ``%PDF-`` within its first KiB (readers tolerate leading junk up to that)."""
    if b"%PDF-" not in data[:HEADER_SEARCH_BYTES]:
        raise WorkerError("not_a_pdf", "the input has no PDF header in its first 1024 bytes")


def clean_string(value: object, limit: int = MAX_STRING_CHARS) -> str:
    """A bounded, printable rendering of a document-supplied string value."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit]
    return text


def _password_error(password: str | None) -> WorkerError:
    if password:
        return WorkerError("wrong_password", "the password does not open this document")
    return WorkerError("encrypted", "the document is encrypted; pass its password")


def open_pikepdf(data: bytes, password: str | None) -> pikepdf.Pdf:
    check_header(data)
    limit_errors = int(pikepdf.settings.qpdf_limit_errors())
    try:
        return pikepdf.open(io.BytesIO(data), password=password or "")
    except pikepdf.PasswordError as exc:
        raise _password_error(password) from exc
    except MemoryError:
        raise
    except (pikepdf.PdfError, ValueError, RuntimeError) as exc:
        if _limit_hit(limit_errors):
            raise WorkerError("decompression_limit", "a stream exceeds qpdf's decoding limits") from exc
        raise WorkerError("malformed", "the PDF structure could not be parsed (qpdf)") from exc


def open_pdfium(data: bytes, password: str | None) -> pdfium.PdfDocument:
    check_header(data)
    try:
        return pdfium.PdfDocument(data, password=password or None)
    except pdfium.PdfiumError as exc:
        code: Any = getattr(exc, "err_code", None)
        if code == _FPDF_ERR_PASSWORD:
            raise _password_error(password) from exc
        if code == _FPDF_ERR_SECURITY:
            raise WorkerError("encrypted", "the document uses an unsupported security handler") from exc
        if code in (_FPDF_ERR_FORMAT, _FPDF_ERR_FILE):
            raise WorkerError("malformed", "the PDF structure could not be parsed (PDFium)") from exc
        raise WorkerError("malformed", "PDFium could not load the document") from exc
