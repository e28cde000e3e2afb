"""One encryption verdict per document and password, whichever tool is called.

Every tool (and both ``pdf_read`` engines) is called through the real server over real stdio on
small generated documents, one per encryption variant, without a password, with a wrong one and
with the right one: all give ``encrypted``, all ``wrong_password``, or all a result. Two variants
are the ones where PDFium and qpdf disagree on their own:

- ``qpdf-only``: AES-256 with an empty owner password. qpdf opens it without a password (the
  empty owner password matches), PDFium refuses it; PDFium and pdfminer read qpdf's plain copy.
- ``attachments-only``: only the embedded files are encrypted (``/StmF`` and ``/StrF``
  ``/Identity``, ``/EFF`` an AESV3 filter), as in pdf.js's ``encrypted-attachment.pdf``. PDFium
  reads it without a password, qpdf refuses it; every tool reads it and says the attachments
  are locked. pikepdf cannot write this, so it is assembled here object by object, with the
  password fields taken from a document pikepdf encrypted and the file's AES-256 key.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any, Final, NamedTuple

import pdfs
import pikepdf
import pytest
from conftest import connect
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from mcp import Client
from tool_calls import every_call

pytestmark = pytest.mark.anyio

TEXT: Final = "Verdict body text"
TITLE: Final = "Verdict title"
USER: Final = "user-pass"
OWNER: Final = "owner-pass"
WRONG: Final = "not-the-password"
ATTACHMENT: Final = b"the attachment's own bytes"
ATTACHMENT_NAME: Final = "note.txt"
LOCKED_NOTE: Final = "only the embedded files are encrypted"
# Each tool and engine (from the registry: tests/tool_calls.py) with the arguments that make it
# read the page's text or the document's structure.
CALLS: Final = every_call({"pdf_search": {"query": "body"}, "pdf_render": {"page": "1", "dpi": 36}})


def _plain() -> pikepdf.Pdf:
    """One page of text, XMP metadata (encrypted or not, per variant) and one attachment."""
    pdf = pikepdf.open(io.BytesIO(pdfs.text_pdf([TEXT], title=TITLE)))
    with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:
        meta["dc:title"] = TITLE
    pdf.attachments[ATTACHMENT_NAME] = pikepdf.AttachedFileSpec(
        pdf,
        ATTACHMENT,
        description="",
        filename=ATTACHMENT_NAME,
        mime_type="text/plain",
        creation_date="",
        mod_date="",
    )
    return pdf


def _encrypted(**settings: Any) -> bytes:
    out = io.BytesIO()
    _plain().save(out, encryption=pikepdf.Encryption(**settings))
    return out.getvalue()


def _aes_cbc(key: bytes, data: bytes) -> bytes:
    padder = padding.PKCS7(128).padder()
    body = padder.update(data) + padder.finalize()
    iv = os.urandom(16)
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    return iv + encryptor.update(body) + encryptor.finalize()


def _hex(value: bytes) -> bytes:
    return b"<" + value.hex().encode() + b">"


def attachments_only_pdf() -> bytes:
    """Pages and strings in the clear, the embedded file AES-256 encrypted (``/EFF``)."""
    with pikepdf.open(io.BytesIO(_encrypted(user=USER, owner=OWNER, R=6)), password=USER) as source:
        encrypt = source.trailer.Encrypt
        fields = b" ".join(
            b"/%s %s" % (key.encode(), _hex(bytes(encrypt["/" + key])))
            for key in ("O", "U", "OE", "UE", "Perms")
        )
        key, permissions = source.encryption.encryption_key, int(encrypt.P)
    content = f"BT /F1 24 Tf 72 720 Td ({TEXT}) Tj ET".encode()
    sealed = _aes_cbc(key, ATTACHMENT)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R /Names << /EmbeddedFiles << /Names [(%s) 6 0 R] >> >> >>"
        % ATTACHMENT_NAME.encode(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >>"
        b" /Contents 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /Filespec /F (%s) /UF (%s) /EF << /F 7 0 R >> >>" % ((ATTACHMENT_NAME.encode(),) * 2),
        b"<< /Type /EmbeddedFile /Filter [/Crypt] /DecodeParms [<< /Name /StdCF >>] /Length %d"
        b" /Params << /Size %d >> >>\nstream\n%s\nendstream" % (len(sealed), len(ATTACHMENT), sealed),
        b"<< /Filter /Standard /V 5 /R 6 /Length 256 /P %d %s /CF << /StdCF << /CFM /AESV3 /AuthEvent"
        b" /EFOpen /Length 32 >> >> /StmF /Identity /StrF /Identity /EFF /StdCF >>" % (permissions, fields),
        b"<< /Title (%s) >>" % TITLE.encode(),
    ]
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    ident = _hex(b"pdf-airlock test")
    trailer = b"/Size %d /Root 1 0 R /Info 9 0 R /Encrypt 8 0 R /ID [%s %s]" % (
        len(objects) + 1,
        ident,
        ident,
    )
    out += b"trailer\n<< %s >>\n" % trailer
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


class Variant(NamedTuple):
    build: Callable[[], bytes]
    password: str  # the password that opens it
    without: str  # every tool's verdict without a password ("ok": a result)
    wrong: str  # and with a wrong one


# pikepdf's settings for documents that need USER (or OWNER) to be read.
PROTECTED: Final[dict[str, dict[str, Any]]] = {
    "r2-rc4-40": {"R": 2, "aes": False, "metadata": False},
    "r3-rc4-128": {"R": 3, "aes": False, "metadata": False},
    "r4-rc4": {"R": 4, "aes": False, "metadata": False},
    "r4-aes": {"R": 4, "aes": True},
    "r4-aes-plain-metadata": {"R": 4, "aes": True, "metadata": False},
    "r6-aes": {"R": 6},
    "r6-aes-plain-metadata": {"R": 6, "metadata": False},
}
VARIANTS: Final[dict[str, Variant]] = {
    **{
        name: Variant(
            partial(_encrypted, user=USER, owner=OWNER, **settings), USER, "encrypted", "wrong_password"
        )
        for name, settings in PROTECTED.items()
    },
    "owner-only": Variant(partial(_encrypted, user="", owner=OWNER, R=6), OWNER, "ok", "wrong_password"),
    "qpdf-only": Variant(partial(_encrypted, user=USER, owner="", R=6), USER, "ok", "wrong_password"),
    "attachments-only": Variant(attachments_only_pdf, USER, "ok", "ok"),
}


@pytest.fixture(scope="module")
def variants(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("verdicts")
    for name, variant in VARIANTS.items():
        pdfs.write(root / f"{name}.pdf", variant.build())
    return root


def _code(result: Any) -> str:
    if result.is_error:
        return str(result.structured_content["error"]["code"])
    return "ok"


async def _verdicts(client: Client, path: str, password: str | None) -> dict[str, Any]:
    extra = {} if password is None else {"password": password}
    return {
        label: await client.call_tool(tool, {"path": path, **args, **extra})
        for label, (tool, args) in CALLS.items()
    }


def _check_readable(results: dict[str, Any], locked: bool, xmp: bool) -> None:
    """The results hold the document's text, metadata and (unless locked) its attachment."""
    data = {label: result.structured_content for label, result in results.items()}
    assert data["pdf_read"]["pages"][0]["text"] == TEXT
    assert TEXT in data["pdf_read layout"]["pages"][0]["text"]
    assert [hit["text"] for hit in data["pdf_search"]["hits"]] == ["body"]
    assert data["pdf_info"]["encrypted"] is True
    assert data["pdf_info"]["page_count"] == 1
    assert data["pdf_render"]["image"]["width_px"] > 0
    assert data["pdf_info"]["metadata"]["title"] == TITLE
    assert (data["pdf_info"]["xmp"] or {}).get("dc:title") == (TITLE if xmp else None)
    listed = data["pdf_attachments"]["attachments"]
    if locked:
        assert listed == []
        assert data["pdf_security"]["embedded_files"] == 1
        for label, result in data.items():
            assert any(LOCKED_NOTE in warning for warning in result["warnings"]), label
    else:
        assert [(item["name"], item["sha256"]) for item in listed] == [
            (ATTACHMENT_NAME, hashlib.sha256(ATTACHMENT).hexdigest())
        ]


@pytest.mark.parametrize("name", VARIANTS)
async def test_every_tool_gives_one_verdict(variants: Path, name: str) -> None:
    variant, path = VARIANTS[name], f"{name}.pdf"
    async with connect(variants) as client:
        without = await _verdicts(client, path, None)
        mistaken = await _verdicts(client, path, WRONG)
        right = await _verdicts(client, path, variant.password)
    assert {label: _code(result) for label, result in without.items()} == dict.fromkeys(
        CALLS, variant.without
    )
    assert {label: _code(result) for label, result in mistaken.items()} == dict.fromkeys(CALLS, variant.wrong)
    assert {label: _code(result) for label, result in right.items()} == dict.fromkeys(CALLS, "ok")
    xmp = name != "attachments-only"  # assembled by hand: an Info dictionary, no XMP
    _check_readable(right, locked=False, xmp=xmp)
    if variant.without == "ok":
        _check_readable(without, locked=not xmp, xmp=xmp)
    if variant.wrong == "ok":
        _check_readable(mistaken, locked=True, xmp=xmp)


async def test_locked_attachment_needs_the_password_to_be_extracted(variants: Path) -> None:
    path, args = "attachments-only.pdf", {"extract": ATTACHMENT_NAME}
    async with connect(variants) as client:
        missing = await client.call_tool("pdf_attachments", {"path": path, **args})
        wrong = await client.call_tool("pdf_attachments", {"path": path, **args, "password": WRONG})
        right = await client.call_tool("pdf_attachments", {"path": path, **args, "password": USER})
        security = await client.call_tool("pdf_security", {"path": path})
    assert (_code(missing), _code(wrong), _code(right)) == ("encrypted", "wrong_password", "ok")
    assert base64.b64decode(right.structured_content["extracted"]["data_base64"]) == ATTACHMENT
    assert security.structured_content["encryption"] == {"revision": 6, "key_bits": 256, "method": "aesv3"}


def _no_pages(**encryption: Any) -> bytes:
    """A document whose page tree is empty (qpdf opens it; PDFium refuses to load it)."""
    out = io.BytesIO()
    pikepdf.new().save(out, encryption=pikepdf.Encryption(**encryption) if encryption else False)
    return out.getvalue()


async def test_a_document_without_pages_gets_one_verdict(tmp_path: Path) -> None:
    """Every tool: ``malformed`` ("no pages") for an empty page tree, encrypted or not once its
    password is given, and the encryption verdicts before that. In a job child PDFium once
    reported the last error of the zygote's warm-up (a password refusal) for such a document,
    so the text tools said ``encrypted`` where the others answered."""
    pdfs.write(tmp_path / "empty.pdf", _no_pages())
    pdfs.write(tmp_path / "empty-locked.pdf", _no_pages(user=USER, owner=OWNER, R=6))
    async with connect(tmp_path) as client:
        plain = await _verdicts(client, "empty.pdf", None)
        locked = await _verdicts(client, "empty-locked.pdf", None)
        mistaken = await _verdicts(client, "empty-locked.pdf", WRONG)
        opened = await _verdicts(client, "empty-locked.pdf", USER)
    assert {label: _code(result) for label, result in plain.items()} == dict.fromkeys(CALLS, "malformed")
    assert {label: _code(result) for label, result in locked.items()} == dict.fromkeys(CALLS, "encrypted")
    assert {label: _code(result) for label, result in mistaken.items()} == dict.fromkeys(
        CALLS, "wrong_password"
    )
    assert {label: _code(result) for label, result in opened.items()} == dict.fromkeys(CALLS, "malformed")
    for result in [*plain.values(), *opened.values()]:
        assert result.structured_content["error"]["message"] == "the document has no pages"
