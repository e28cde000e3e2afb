"""qpdf's help where PDFium and qpdf disagree about an encrypted document.

Input: untrusted bytes and the caller's password. ``pdf_airlock.worker.pdf.opening`` calls this module
so that every tool gives one verdict per document and password (``encrypted``: a password is
needed and none was given; ``wrong_password``; or readable). Two disagreements are settled here:

- qpdf opens a document PDFium refuses (an empty owner password, crypt-filter combinations
  PDFium rejects): qpdf writes a plain copy in memory and PDFium and pdfminer read that.
- Only the embedded files are encrypted (``/StmF`` and ``/StrF`` are ``/Identity``, ``/EFF`` is a
  crypt filter): pages, strings and structure are plain, PDFium reads them without a password,
  qpdf refuses the document. qpdf opens it with a placeholder key, which only the embedded files
  would need: their contents stay unreadable and the result says so.

Nothing here writes a file: the plain copy lives in the job's memory, within its memory limit.
"""

from __future__ import annotations

import io
from typing import Any, Final

import pikepdf
from pikepdf.models import EncryptionMethod

__all__ = [
    "attachments_locked",
    "encryption_facts",
    "locked_note",
    "open_locked",
    "plain_copy",
]

# Any key of AES-256's length opens a document with qpdf's password check skipped; with
# /Identity stream and string filters the key decrypts nothing but the embedded files.
_PLACEHOLDER_KEY_HEX: Final = "00" * 32
_AES_256_VERSION: Final = 5
_AES_256_BITS: Final = 256
_DEFAULT_KEY_BITS: Final = 40  # /Length's default (ISO 32000-1, table 20)
_MAX_RC4_AES128_BITS: Final = 128
_NONE: Final = EncryptionMethod.none
_LOCKED_NOTE: Final = (
    "only the embedded files are encrypted: the document is readable without its password; "
    "pass the password to list and extract the attachments"
)
_REFUSED_NOTE: Final = (
    "only the embedded files are encrypted and the password does not open them: the document is "
    "readable, its attachments are not"
)


def _attachments_only(pdf: pikepdf.Pdf) -> bool:
    info = pdf.encryption
    return bool(info.stream_method == _NONE and info.string_method == _NONE and info.file_method != _NONE)


def open_locked(data: bytes) -> pikepdf.Pdf | None:
    """The document opened without its password if only its embedded files are encrypted, else
    None. Call it only after qpdf refused the document's password."""
    try:
        pdf = pikepdf.open(io.BytesIO(data), password=_PLACEHOLDER_KEY_HEX, hex_password=True)
    except MemoryError:
        raise
    except (pikepdf.PdfError, ValueError, RuntimeError):
        return None
    try:
        if pdf.is_encrypted and _attachments_only(pdf):
            return pdf
    except (pikepdf.PdfError, ValueError, RuntimeError):
        pass
    pdf.close()
    return None


def attachments_locked(pdf: pikepdf.Pdf) -> bool:
    """True if ``pdf`` came from ``open_locked``: encrypted, and no password of it matched."""
    return bool(pdf.is_encrypted and not pdf.user_password_matched and not pdf.owner_password_matched)


def locked_note(password: str | None) -> str:
    """The warning a result carries when the embedded files stay encrypted."""
    return _REFUSED_NOTE if password else _LOCKED_NOTE


def plain_copy(pdf: pikepdf.Pdf) -> bytes:
    """The document without its encryption, written to memory. Streams keep their filters (no
    decoding, no recompression); a static /ID spares qpdf its random source."""
    out = io.BytesIO()
    pdf.save(
        out,
        encryption=False,
        stream_decode_level=pikepdf.StreamDecodeLevel.none,
        compress_streams=False,
        static_id=True,
    )
    return out.getvalue()


def _key_bits(pdf: pikepdf.Pdf) -> int:
    """Without a password qpdf knows no key: the length the /Encrypt dictionary declares, if it
    is a possible one (0 if not)."""
    encrypt = pdf.trailer.get("/Encrypt")
    if not isinstance(encrypt, pikepdf.Dictionary):
        return 0
    try:
        version = int(encrypt.get("/V", 0))
        bits = int(encrypt.get("/Length", _DEFAULT_KEY_BITS))
    except (TypeError, ValueError, OverflowError, pikepdf.PdfError):
        return 0
    if version >= _AES_256_VERSION:
        return _AES_256_BITS
    return bits if _DEFAULT_KEY_BITS <= bits <= _MAX_RC4_AES128_BITS else 0


def encryption_facts(pdf: pikepdf.Pdf) -> dict[str, Any] | None:
    """Revision, version, key length and method of an encrypted document; the method is the
    streams' one, or the embedded files' when only those are encrypted."""
    if not pdf.is_encrypted:
        return None
    info = pdf.encryption
    locked = attachments_locked(pdf)
    method = info.file_method if info.stream_method == _NONE else info.stream_method
    return {
        "revision": int(info.R),
        "version": int(info.V),
        "key_bits": _key_bits(pdf) if locked else int(info.bits),
        "method": str(method).rsplit(".", 1)[-1],
    }
