"""Opening an untrusted document with each engine, mapping engine failures to error codes.

Input: raw bytes of unknown provenance and an optional password. Nothing about the bytes is
assumed; every engine exception is translated into a ``WorkerError`` with a message that never
quotes the document.

Every tool gives one verdict per document and password (``encrypted``, ``wrong_password`` or a
result), whichever engine it uses (``pdf_airlock.worker.pdf.decrypt`` says how): a document PDFium refuses
is put to qpdf, which decrypts it for PDFium and pdfminer if it can; a document qpdf refuses
opens anyway when only its embedded files are encrypted (PDFium reads those); a document qpdf
cannot parse gets PDFium's verdict if that verdict is about its password. A document without a
page is ``malformed`` for every tool (PDFium refuses to load one; qpdf would open it).

PDFium reports why a load failed through a process-wide last error that only some failures
set: a failure that sets none would report the error of an earlier load (in a job child, one of
the zygote's warm-up, whose last load was refused for its password). Every load here starts
from a known error (``_pdfium_load``), so the code a failure reports is its own.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Final

import pikepdf
import pikepdf.settings
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf import decrypt

__all__ = [
    "MAX_STRING_CHARS",
    "Opened",
    "apply_decode_limits",
    "check_header",
    "clean_string",
    "open_document",
    "open_pdfium",
    "open_pikepdf",
    "password_error",
]

HEADER_SEARCH_BYTES: Final = 1024
MAX_STRING_CHARS: Final = 4096

# PDFium's FPDF_GetLastError codes for document loading.
_FPDF_ERR_FILE: Final = 2
_FPDF_ERR_FORMAT: Final = 3
_FPDF_ERR_PASSWORD: Final = 4
_FPDF_ERR_SECURITY: Final = 5
# Security handler revisions with crypt filters (/StmF, /StrF, /EFF) start at 4.
_FIRST_CRYPT_FILTER_REVISION: Final = 4
# Where only the embedded files are encrypted, the /Encrypt dictionary names an /EFF filter; it
# sits in a trailer (or cross-reference stream) dictionary, which is never compressed.
_EFF_KEY: Final = b"/EFF"


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
    if not data:
        raise WorkerError("not_a_pdf", "the file is empty (0 bytes)")
    if b"%PDF-" not in data[:HEADER_SEARCH_BYTES]:
        raise WorkerError("not_a_pdf", "the input has no PDF header in its first 1024 bytes")


def clean_string(value: object, limit: int = MAX_STRING_CHARS) -> str:
    """A bounded, printable rendering of a document-supplied string value."""
    text = str(value)
    if len(text) > limit:
        text = text[:limit]
    return text


def password_error(password: str | None) -> WorkerError:
    """The verdict when no engine opens the document with ``password``."""
    if password:
        return WorkerError("wrong_password", "the password given in `password` does not open this document")
    return WorkerError(
        "encrypted", "the document is encrypted: call again with its password in the `password` argument"
    )


def _qpdf(data: bytes, password: str | None) -> pikepdf.Pdf:
    """qpdf's open: ``pikepdf.PasswordError`` passes through, other failures become codes."""
    limit_errors = int(pikepdf.settings.qpdf_limit_errors())
    try:
        return pikepdf.open(io.BytesIO(data), password=password or "")
    except (pikepdf.PasswordError, MemoryError):
        raise
    except (pikepdf.PdfError, ValueError, RuntimeError) as exc:
        if _limit_hit(limit_errors):
            raise WorkerError("decompression_limit", "a stream exceeds qpdf's decoding limits") from exc
        raise WorkerError("malformed", "the PDF structure could not be parsed (qpdf)") from exc


_EMPTY: Final = b""


def _pdfium_load(data: bytes, password: str | None) -> pdfium.PdfDocument:
    """PDFium's open, after a load that fails with a format error (about a microsecond): a load
    that then fails without setting an error reports a format error, not an earlier load's."""
    pdfium_c.FPDF_LoadMemDocument(_EMPTY, 0, None)
    return pdfium.PdfDocument(data, password=password or None)


def _no_pages() -> WorkerError:
    return WorkerError("malformed", "the document has no pages")


def _pdfium_refusal(exc: pdfium.PdfiumError, password: str | None) -> WorkerError:
    code: Any = getattr(exc, "err_code", None)
    if code == _FPDF_ERR_PASSWORD:
        return password_error(password)
    if code == _FPDF_ERR_SECURITY:
        return WorkerError("encrypted", "the document uses an unsupported security handler")
    if code in (_FPDF_ERR_FORMAT, _FPDF_ERR_FILE):
        return WorkerError("malformed", "the PDF structure could not be parsed (PDFium)")
    return WorkerError("malformed", "PDFium could not load the document")


def _pdfium_password_verdict(data: bytes, password: str | None) -> WorkerError | None:
    """PDFium's verdict on a document qpdf cannot parse, if it is about the password or the
    security handler: the PDFium tools give it too (qpdf cannot decrypt for them)."""
    try:
        _pdfium_load(data, password).close()
    except pdfium.PdfiumError as exc:
        if getattr(exc, "err_code", None) in (_FPDF_ERR_PASSWORD, _FPDF_ERR_SECURITY):
            return _pdfium_refusal(exc, password)
    return None


def open_pikepdf(data: bytes, password: str | None, warnings: list[str]) -> pikepdf.Pdf:
    """qpdf's view of the document. A document whose embedded files alone are encrypted opens
    without their password (``decrypt.attachments_locked`` is then true, ``warnings`` says so)."""
    check_header(data)
    try:
        pdf = _qpdf(data, password)
    except pikepdf.PasswordError as exc:
        locked = decrypt.open_locked(data)
        if locked is None:
            raise password_error(password) from exc
        warnings.append(decrypt.locked_note(password))
        pdf = locked
    except WorkerError as exc:
        verdict = _pdfium_password_verdict(data, password) if exc.code == "malformed" else None
        if verdict is not None:
            raise verdict from exc
        raise
    if len(pdf.pages) == 0:
        pdf.close()
        raise _no_pages()
    return pdf


@dataclass
class Opened:
    """A document PDFium opened, with what pdfminer needs to read the same text.

    ``data`` is the input, or qpdf's plain copy when PDFium refused the input (``password`` is
    then None); ``locked`` says the embedded files alone are encrypted and stay so; ``warnings``
    belong in the tool's result.
    """

    document: pdfium.PdfDocument
    data: bytes
    password: str | None
    warnings: list[str]
    locked: bool = False
    plain: bool = False

    def layout_input(self) -> tuple[bytes, str | None]:
        """Bytes and password for pdfminer, which refuses a document whose embedded files
        alone are encrypted: it gets qpdf's plain copy of such a document."""
        if not self.locked or self.plain:
            return self.data, self.password
        pdf = decrypt.open_locked(self.data)
        if pdf is None:
            return self.data, self.password
        with pdf:
            return _plain_copy(pdf), None


def _plain_copy(pdf: pikepdf.Pdf) -> bytes:
    limit_errors = int(pikepdf.settings.qpdf_limit_errors())
    try:
        return decrypt.plain_copy(pdf)
    except MemoryError:
        raise
    except (pikepdf.PdfError, ValueError, RuntimeError) as exc:
        if _limit_hit(limit_errors):
            raise WorkerError("decompression_limit", "a stream exceeds qpdf's decoding limits") from exc
        raise WorkerError("malformed", "qpdf could not write a decrypted copy of the document") from exc


def _locked_attachments(document: pdfium.PdfDocument, data: bytes, password: str | None) -> bool:
    """Whether PDFium opened a document whose embedded files alone are encrypted and that
    ``password`` does not open for qpdf. Free for unencrypted documents and for those without
    an /EFF entry (the benchmarked fast path); else one qpdf open, which reads no stream."""
    revision = int(pdfium_c.FPDF_GetSecurityHandlerRevision(document.raw))
    if revision < _FIRST_CRYPT_FILTER_REVISION or _EFF_KEY not in data:
        return False
    try:
        _qpdf(data, password).close()
    except pikepdf.PasswordError:
        pdf = decrypt.open_locked(data)
        if pdf is not None:
            pdf.close()
            return True
    except WorkerError:
        pass
    return False


def _open_plain_copy(data: bytes, password: str | None, refusal: WorkerError) -> Opened:
    """PDFium refused the document. If qpdf opens it and it is encrypted, PDFium reads qpdf's
    plain copy; if qpdf refuses the password too, that is the verdict; else PDFium's stands."""
    try:
        pdf = _qpdf(data, password)
    except pikepdf.PasswordError as exc:
        locked = decrypt.open_locked(data)
        if locked is None:
            raise password_error(password) from exc
        pdf = locked
    except WorkerError as exc:
        if exc.code == "malformed":
            raise refusal from exc
        raise
    with pdf:
        if len(pdf.pages) == 0:
            raise _no_pages()
        if not pdf.is_encrypted:
            raise refusal
        locked_attachments = decrypt.attachments_locked(pdf)
        copy = _plain_copy(pdf)
    try:
        document = _pdfium_load(copy, None)
    except pdfium.PdfiumError as exc:
        raise WorkerError("malformed", "PDFium could not load the copy qpdf decrypted") from exc
    warnings = [decrypt.locked_note(password)] if locked_attachments else []
    return Opened(document, copy, None, warnings, locked=locked_attachments, plain=True)


def open_document(data: bytes, password: str | None) -> Opened:
    """PDFium's view of the document, with the verdict qpdf gives too. qpdf is involved only when
    PDFium refuses the document (PDFium then reads qpdf's plain copy, if qpdf opens it) or opens
    an encrypted one that names an /EFF filter; never on the fast path."""
    check_header(data)
    try:
        document = _pdfium_load(data, password)
    except pdfium.PdfiumError as exc:
        return _open_plain_copy(data, password, _pdfium_refusal(exc, password))
    locked = _locked_attachments(document, data, password)
    warnings = [decrypt.locked_note(password)] if locked else []
    return Opened(document, data, password, warnings, locked=locked)


def open_pdfium(data: bytes, password: str | None) -> pdfium.PdfDocument:
    """``open_document`` for a caller with no use for its warnings or pdfminer's input."""
    return open_document(data, password).document
