"""qpdf's help where PDFium and qpdf disagree about an encrypted document.

Input: untrusted bytes and the caller's password. ``worker.parsers.common`` calls this module
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
    "warm_up",
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


# --- warm-up (zygote only) --------------------------------------------------------------------

_WARM_TEXT: Final = "pdf-airlock decrypt warm-up"
_WARM_PASSWORD: Final = "warm-up"  # noqa: S105 - protects only the generated warm-up file
_TRAILER_STAND_IN: Final = b"/NoCrypt"  # as long as b"/Encrypt": offsets stay valid when swapped
_WARM_ARGS: Final[dict[str, dict[str, Any]]] = {
    "pdf_info": {},
    "pdf_read": {"max_chars": 1000},
    "pdf_attachments": {"max_bytes": 100, "max_items": 10},
    "pdf_security": {},
}


def _warm_pdf() -> pikepdf.Pdf:
    pdf = pikepdf.new()
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
    )
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=pdf.make_indirect(font))),
        Contents=pdf.make_stream(f"BT /F1 12 Tf 72 720 Td ({_WARM_TEXT}) Tj ET".encode()),
    )
    pdf.pages.append(pikepdf.Page(page))
    pdf.attachments["warm-up.txt"] = pikepdf.AttachedFileSpec(
        pdf,
        b"warm-up",
        description="",
        filename="warm-up.txt",
        mime_type="text/plain",
        creation_date="",
        mod_date="",
    )
    return pdf


def _qpdf_only_sample() -> bytes:
    """AES-256 with an empty owner password: qpdf opens it without a password, PDFium does not."""
    out = io.BytesIO()
    _warm_pdf().save(out, encryption=pikepdf.Encryption(user=_WARM_PASSWORD, owner="", R=6))
    return out.getvalue()


def _locked_sample() -> bytes:
    """Embedded files alone encrypted (AES-128: cheaper to check than AES-256's hash, and the
    path is the same). qpdf writes no /Encrypt into a plain file, so the dictionary goes in
    under a stand-in key swapped afterwards; no password opens it (only the placeholder key)."""
    pdf = _warm_pdf()
    encrypt = pikepdf.Dictionary(
        Filter=pikepdf.Name.Standard,
        V=4,
        R=4,
        Length=128,
        P=-4,
        O=pikepdf.String(bytes(32)),
        U=pikepdf.String(bytes(32)),
        CF=pikepdf.Dictionary(StdCF=pikepdf.Dictionary(CFM=pikepdf.Name.AESV2, Length=16)),
        StmF=pikepdf.Name.Identity,
        StrF=pikepdf.Name.Identity,
        EFF=pikepdf.Name.StdCF,
    )
    pdf.trailer[_TRAILER_STAND_IN.decode()] = pdf.make_indirect(encrypt)
    out = io.BytesIO()
    pdf.save(out, static_id=True)
    return out.getvalue().replace(_TRAILER_STAND_IN, b"/Encrypt")


def warm_up() -> None:
    """Open a document only qpdf opens, and one whose embedded files alone are encrypted (with no
    password and a wrong one), through each path of this module and of ``common``'s callers, so a
    job child finds them loaded. Zygote only."""
    from worker.parsers import get_parser
    from worker.parsers.common import open_document

    # A qpdf-only document differs from any other only in how PDFium gets it: one read does.
    read = get_parser("pdf_read")(_qpdf_only_sample(), _WARM_ARGS["pdf_read"])
    if _WARM_TEXT not in read["pages"][0]["text"]:
        raise RuntimeError("reading a decrypted copy failed its warm-up")
    locked = _locked_sample()
    for password in (None, "x"):
        for kind, args in _WARM_ARGS.items():
            get_parser(kind)(locked, args | {"password": password})
        opened = open_document(locked, password)
        opened.layout_input()
        opened.document.close()
