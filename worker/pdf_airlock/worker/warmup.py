"""Warm-up run in the zygote before it accepts jobs.

Imports every parser library and runs each engine once over a tiny document built here, so the
modules, codecs and lazily-loaded tables a parse needs are already in memory when a job child
is forked. The child inherits them and never has to open a file.
"""

from __future__ import annotations

import io
from typing import Any, Final, Literal

__all__ = ["warm_up"]

_WARMUP_TEXT: Final = "pdf-airlock warm-up"
_WARMUP_PASSWORD: Final = "warm-up"  # noqa: S105 - protects only the generated warm-up file


def _tiny_document(attachment: bool = True) -> Any:
    """A trusted one-page pikepdf document saying ``_WARMUP_TEXT``, with an attachment."""
    import pikepdf

    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
        )
    )
    content = f"BT /F1 12 Tf 72 720 Td ({_WARMUP_TEXT}) Tj ET".encode()
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
        Contents=pdf.make_stream(content),
    )
    pdf.pages.append(pikepdf.Page(page))
    if attachment:
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


def _tiny_pdf(encryption: object = None) -> bytes:
    import pikepdf

    pdf = _tiny_document(attachment=encryption is None)
    if encryption is None:  # exercise the outline and attachment code paths too
        with pdf.open_outline() as outline:
            outline.root.append(pikepdf.OutlineItem(_WARMUP_TEXT, 0))
        with pdf.open_metadata(set_pikepdf_as_editor=False) as meta:  # XMP: lxml and pikepdf's models
            meta["dc:title"] = _WARMUP_TEXT
            meta["xmp:CreateDate"] = "2026-01-01T00:00:00Z"
    out = io.BytesIO()
    pdf.save(out, encryption=encryption or False)
    return out.getvalue()


# Codecs the engines name in code (pdfminer's ToUnicode and text-string decoding, pikepdf's and
# pypdfium2's bindings). Python imports a codec's module on first lookup, which a job child cannot.
_CODECS: Final = (
    "ascii",
    "latin-1",
    "utf-8",
    "utf-8-sig",
    "utf-16",
    "utf-16-be",
    "utf-16-le",
    "utf-32",
    "utf-32-be",
    "utf-32-le",
    "cp1252",
    "mac_roman",
    "charmap",
    "unicode_escape",
    "raw_unicode_escape",
)


def _warm_codecs() -> None:
    import codecs

    for name in _CODECS:
        codecs.lookup(name)


def warm_up() -> None:
    """Import and exercise every engine; raises if an engine does not work at all."""
    from pdf_airlock.worker import cmaps
    from pdf_airlock.worker.parsers import get_parser

    _warm_codecs()
    cmaps.preload()
    data = _tiny_pdf()
    info = get_parser("pdf_info")(data, {})
    outline = get_parser("pdf_outline")(data, {"max_depth": 4, "max_items": 10})
    attachments = get_parser("pdf_attachments")(
        data, {"max_bytes": 100, "max_items": 10, "extract": "warm-up.txt"}
    )
    get_parser("pdf_annotations")(data, {"max_items": 10})
    get_parser("pdf_forms")(data, {"max_items": 10})
    _warm_xfa()
    get_parser("pdf_security")(data, {})
    search = get_parser("pdf_search")(
        data, {"query": "warm.up", "regex": True, "max_results": 5, "time_budget_ms": 5000}
    )
    render = get_parser("pdf_render")(data, {"page": "1", "dpi": 36, "max_pixels": 100_000})
    if len(search["hits"]) != 1 or not render["png_base64"]:
        raise RuntimeError("search or rendering failed its warm-up")
    _warm_images()
    if outline["items"][0]["page"] != 1 or attachments["extracted"] is None:
        raise RuntimeError("outline or attachment parsing failed its warm-up")
    get_parser("page_count")(data, {})
    fast = get_parser("pdf_read")(data, {"max_chars": 1000})
    layout = get_parser("pdf_read")(data, {"max_chars": 1000, "engine": "layout"})
    if info["xmp"] is None or info["metadata_conflicts"]:
        raise RuntimeError("XMP parsing failed its warm-up")
    if info["page_count"] != 1 or _WARMUP_TEXT not in fast["pages"][0]["text"]:
        raise RuntimeError("PDF engines failed their warm-up")
    if _WARMUP_TEXT not in layout["pages"][0]["text"]:
        raise RuntimeError("pdfminer failed its warm-up")
    _warm_crypto()
    _warm_decrypt()


def _warm_xfa() -> None:
    """An XFA datasets packet through the same hardened lxml parser a job uses."""
    import pikepdf

    from pdf_airlock.worker.pdf.xfa import xfa_fields

    pdf = pikepdf.new()
    packet = pdf.make_stream(
        b'<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>'
        b"<form1><name>warm-up &amp; more</name></form1></xfa:data></xfa:datasets>"
    )
    form = pikepdf.Dictionary(XFA=pikepdf.Array([pikepdf.String("datasets"), packet]))
    if xfa_fields(form, []) != [{"name": "form1.name", "value": "warm-up & more"}]:
        raise RuntimeError("XFA parsing failed its warm-up")


def _warm_images() -> None:
    """Image decoding: every Pillow plugin registered, and one image per common filter decoded
    and encoded to PNG through the same code path as a job."""
    import pikepdf
    from PIL import Image

    from pdf_airlock.worker.parsers import get_parser

    Image.init()
    pdf = pikepdf.new()
    pdf.add_blank_page()
    xobjects = pikepdf.Dictionary()
    sample = Image.new("RGB", (4, 4), (200, 30, 30))
    jpeg = io.BytesIO()
    sample.save(jpeg, format="JPEG")
    # Unfiltered data is Flate-encoded by save(); the JPEG keeps its own filter.
    streams = {"Flate": (b"\xc8\x1e\x1e" * 16, None), "DCT": (jpeg.getvalue(), pikepdf.Name.DCTDecode)}
    for name, (raw, decode_filter) in streams.items():
        stream = pikepdf.Stream(pdf, raw)
        stream.Type, stream.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
        stream.Width, stream.Height, stream.BitsPerComponent = 4, 4, 8
        stream.ColorSpace = pikepdf.Name.DeviceRGB
        if decode_filter is not None:
            stream.Filter = decode_filter
        xobjects[f"/{name}"] = stream
    pdf.pages[0].Resources = pikepdf.Dictionary(XObject=xobjects)
    out = io.BytesIO()
    pdf.save(out)
    for name in streams:
        result = get_parser("pdf_images")(
            out.getvalue(), {"max_items": 10, "max_pixels": 100, "extract": {"page": 1, "name": name}}
        )
        if result["extracted"] is None:
            raise RuntimeError("image extraction failed its warm-up")


def _warm_crypto() -> None:
    """qpdf's crypto provider initialises itself (and may read its config) on first use, which
    a sandboxed child cannot do: decrypt once per supported handler here, with every engine."""
    import pikepdf

    from pdf_airlock.worker.parsers import get_parser

    handlers: tuple[tuple[Literal[2, 3, 4, 5, 6], bool], ...] = (
        (6, True),
        (4, True),
        (4, False),
        (3, False),
        (2, False),
    )
    for revision, aes in handlers:
        data = _tiny_pdf(
            pikepdf.Encryption(
                user=_WARMUP_PASSWORD, owner=_WARMUP_PASSWORD, R=revision, aes=aes, metadata=aes
            )
        )
        args = {"password": _WARMUP_PASSWORD, "max_chars": 1000}
        get_parser("pdf_info")(data, args)
        get_parser("pdf_read")(data, args)
        get_parser("pdf_read")(data, args | {"engine": "layout"})


# Decrypting for PDFium (``pdf_airlock.worker.pdf.decrypt``), through each path of its callers.
_TRAILER_STAND_IN: Final = b"/NoCrypt"  # as long as b"/Encrypt": offsets stay valid when swapped
_DECRYPT_WARM_ARGS: Final[dict[str, dict[str, Any]]] = {
    "pdf_info": {},
    "pdf_read": {"max_chars": 1000},
    "pdf_attachments": {"max_bytes": 100, "max_items": 10},
    "pdf_security": {},
}


def _qpdf_only_sample() -> bytes:
    """AES-256 with an empty owner password: qpdf opens it without a password, PDFium does not."""
    import pikepdf

    out = io.BytesIO()
    _tiny_document().save(out, encryption=pikepdf.Encryption(user=_WARMUP_PASSWORD, owner="", R=6))
    return out.getvalue()


def _locked_sample() -> bytes:
    """Embedded files alone encrypted (AES-128: cheaper to check than AES-256's hash, and the
    path is the same). qpdf writes no /Encrypt into a plain file, so the dictionary goes in
    under a stand-in key swapped afterwards; no password opens it (only the placeholder key)."""
    import pikepdf

    pdf = _tiny_document()
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


def _warm_decrypt() -> None:
    """``pdf_airlock.worker.pdf.decrypt``: open a document only qpdf opens, and one whose embedded files
    alone are encrypted (with no password and a wrong one), through each path of that module and of
    ``common``'s callers, so a job child finds them loaded."""
    from pdf_airlock.worker.parsers import get_parser
    from pdf_airlock.worker.pdf.opening import open_document

    # A qpdf-only document differs from any other only in how PDFium gets it: one read does.
    read = get_parser("pdf_read")(_qpdf_only_sample(), _DECRYPT_WARM_ARGS["pdf_read"])
    if _WARMUP_TEXT not in read["pages"][0]["text"]:
        raise RuntimeError("reading a decrypted copy failed its warm-up")
    locked = _locked_sample()
    for password in (None, "x"):
        for kind, args in _DECRYPT_WARM_ARGS.items():
            get_parser(kind)(locked, args | {"password": password})
        opened = open_document(locked, password)
        opened.layout_input()
        opened.document.close()
