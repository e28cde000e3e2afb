"""Hostile PDF classes, built in code: ``python -m tests.hostile.generate DIR`` writes them all.

Each class is a function returning the document's bytes (or a special path kind: FIFO, symlink);
``CLASSES`` maps its name to the builder and to what every tool must answer. Expectations are a
set of acceptable outcomes per (tool, engine): "ok" for a correct result, or exact error codes.
Where two codes are listed, the class can legitimately end either way (e.g. a bomb meets qpdf's
decode cap or the address-space limit first); nothing else is accepted.
"""

from __future__ import annotations

import io
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pikepdf

from tests.pdfs import encrypted_pdf, flate_stream, scattered_glyphs_pdf, text_pdf

OK = frozenset({"ok"})
BOMB = frozenset({"memory_limit", "decompression_limit"})
SLOW = frozenset({"timeout", "cpu_limit"})
MALFORMED = frozenset({"malformed"})
ENGINES = ("info", "fast", "layout")


@dataclass(frozen=True)
class HostileClass:
    name: str
    build: Callable[[], bytes] | None
    expect: dict[str, frozenset[str]]
    special: str | None = None  # "fifo" or "symlink_dev_zero": not a file's bytes
    note: str = ""
    password: str | None = field(default=None)


def _save(pdf: pikepdf.Pdf, **kwargs: object) -> bytes:
    out = io.BytesIO()
    pdf.save(out, **kwargs)  # type: ignore[arg-type]
    return out.getvalue()


def _font(pdf: pikepdf.Pdf) -> pikepdf.Object:
    return pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
        )
    )


def _page(
    pdf: pikepdf.Pdf, content: bytes = b"BT /F1 12 Tf 72 720 Td (hostile) Tj ET", **extra: object
) -> None:
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=_font(pdf))),
        Contents=pdf.make_stream(content),
        **extra,
    )
    pdf.pages.append(pikepdf.Page(page))


def _simple(content: bytes = b"BT /F1 12 Tf 72 720 Td (hostile) Tj ET") -> pikepdf.Pdf:
    pdf = pikepdf.new()
    _page(pdf, content)
    return pdf


def flate_bomb() -> bytes:
    pdf = _simple()
    pdf.pages[0].obj.Contents.write(flate_stream(2048), filter=pikepdf.Name.FlateDecode)
    return _save(pdf, compress_streams=False, stream_decode_level=pikepdf.StreamDecodeLevel.none)


def flate_bomb_double() -> bytes:
    inner = flate_stream(1024)
    outer = zlib.compress(inner, 9)
    pdf = _simple()
    stream = pdf.pages[0].obj.Contents
    stream.write(outer, filter=pikepdf.Array([pikepdf.Name.FlateDecode, pikepdf.Name.FlateDecode]))
    return _save(pdf, compress_streams=False, stream_decode_level=pikepdf.StreamDecodeLevel.none)


def _lzw_repeat(byte: int, count: int) -> bytes:
    """LZW (PDF flavour, EarlyChange 1) of ``count`` copies of one byte, built directly: after a
    clear the encoder emits the byte, then codes 258, 259, ... for runs of 2, 3, ... bytes."""
    codes: list[int] = [256]
    emitted, run, encoder_next = 0, 1, 258
    while emitted < count:
        codes.append(byte if run == 1 else encoder_next - 1)
        emitted += run
        run += 1
        encoder_next += 1
        if encoder_next >= 4094:
            codes.append(256)
            run, encoder_next = 1, 258
    codes.append(257)
    out = bytearray()
    bits = nbits = 0
    width, decoder_next, first = 9, 258, True
    for code in codes:
        bits = (bits << width) | code
        nbits += width
        while nbits >= 8:
            nbits -= 8
            out.append((bits >> nbits) & 0xFF)
        bits &= (1 << nbits) - 1
        if code == 256:
            width, decoder_next, first = 9, 258, True
            continue
        # Mirror the decoder: it adds an entry for every code but the first after a clear, and
        # widens one code early (EarlyChange).
        if not first:
            decoder_next += 1
        first = False
        width = (
            12
            if decoder_next + 1 >= 2048
            else 11
            if decoder_next + 1 >= 1024
            else 10
            if decoder_next + 1 >= 512
            else 9
        )
    if nbits:
        out.append((bits << (8 - nbits)) & 0xFF)
    return bytes(out)


def lzw_bomb() -> bytes:
    pdf = _simple()
    stream = pdf.pages[0].obj.Contents
    stream.write(_lzw_repeat(0x20, 400 << 20), filter=pikepdf.Name.LZWDecode)
    return _save(pdf, compress_streams=False, stream_decode_level=pikepdf.StreamDecodeLevel.none)


def _image_page(width: int, height: int, filter_name: str, data: bytes, bits: int = 1) -> bytes:
    pdf = pikepdf.new()
    image = pdf.make_stream(data)
    image.Type = pikepdf.Name.XObject
    image.Subtype = pikepdf.Name.Image
    image.Width, image.Height = width, height
    image.ColorSpace = pikepdf.Name.DeviceGray
    image.BitsPerComponent = bits
    image.Filter = pikepdf.Name(filter_name)
    _page(pdf, b"q 612 0 0 792 0 0 cm /Im0 Do Q BT /F1 12 Tf 72 720 Td (image) Tj ET")
    pdf.pages[0].obj.Resources.XObject = pikepdf.Dictionary(Im0=image)
    return _save(pdf, compress_streams=False)


def image_pixels_flate() -> bytes:
    return _image_page(100_000, 100_000, "/FlateDecode", zlib.compress(b"\x00" * 1024), bits=8)


def image_pixels_ccitt() -> bytes:
    return _image_page(100_000, 100_000, "/CCITTFaxDecode", b"\x00" * 1024)


def image_pixels_jbig2() -> bytes:
    return _image_page(100_000, 100_000, "/JBIG2Decode", b"\x00" * 1024)


def _tree(build: Callable[[pikepdf.Pdf], None]) -> bytes:
    pdf = _simple()
    build(pdf)
    return _save(pdf, fix_metadata_version=False)


def self_referencing_pages() -> bytes:
    def build(pdf: pikepdf.Pdf) -> None:
        pages = pdf.Root.Pages
        pages.Kids.append(pages)
        pages.Count = 2

    return _raw_tree(build)


def kids_cycle() -> bytes:
    def build(pdf: pikepdf.Pdf) -> None:
        a = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Pages, Count=1))
        b = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Pages, Count=1, Kids=[a], Parent=a))
        a.Kids = pikepdf.Array([b])
        a.Parent = b
        pdf.Root.Pages.Kids.append(a)
        pdf.Root.Pages.Count = 2

    return _raw_tree(build)


def deep_page_tree() -> bytes:
    def build(pdf: pikepdf.Pdf) -> None:
        node = pdf.Root.Pages.Kids[0]
        for _ in range(5000):
            node = pdf.make_indirect(pikepdf.Dictionary(Type=pikepdf.Name.Pages, Count=1, Kids=[node]))
        pdf.Root.Pages.Kids.append(node)
        pdf.Root.Pages.Count = 2

    return _raw_tree(build)


def _raw_tree(build: Callable[[pikepdf.Pdf], None]) -> bytes:
    """Build the structure with pikepdf, then write it without letting qpdf 'fix' the page tree."""
    pdf = _simple()
    build(pdf)
    return _save(pdf, qdf=False, object_stream_mode=pikepdf.ObjectStreamMode.disable, normalize_content=False)


def nested_arrays() -> bytes:
    depth = 200_000
    body = b"[" * depth + b"]" * depth
    return _manual(extra_objects=[b"<< /Deep " + body + b" >>"])


def _manual(
    content: bytes = b"BT /F1 12 Tf 72 720 Td (manual) Tj ET",
    extra_objects: list[bytes] | None = None,
    length: bytes | None = None,
    trailer_extra: bytes = b"",
    xref: bool = True,
    pages_count: bytes = b"1",
) -> bytes:
    """A hand-written PDF: objects 1-5 are catalog, pages, page, content, font; more follow."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count " + pages_count + b" >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + (length or str(len(content)).encode()) + b" >>\nstream\n" + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        *(extra_objects or []),
    ]
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    start = len(out)
    if xref:
        out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
        for offset in offsets:
            out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R " % (len(objects) + 1) + trailer_extra + b">>\n"
    out += b"startxref\n%d\n%%%%EOF\n" % start
    return bytes(out)


def length_self_reference() -> bytes:
    return _manual(length=b"4 0 R")


def xref_prev_loop() -> bytes:
    data = _manual()
    start = int(data.rsplit(b"startxref\n", 1)[1].split(b"\n")[0])
    return data.replace(b"/Root 1 0 R ", b"/Root 1 0 R /Prev %d " % start)


def count_huge() -> bytes:
    return _manual(pages_count=b"2147483647")


def millions_of_operators() -> bytes:
    return _manual(content=b"BT /F1 12 Tf 72 720 Td (ops) Tj ET\n" + b"0 0 m\n" * 2_000_000)


def scattered_glyphs() -> bytes:
    return scattered_glyphs_pdf(20_000)


def widths_huge() -> bytes:
    widths = b"[" + b"500 " * 3_000_000 + b"]"
    font = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /FirstChar 0 /LastChar 2999999 /Widths 6 0 R >>"
    )
    data = _manual(extra_objects=[widths])
    return data.replace(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>", font)


def form_xobject_cycle() -> bytes:
    pdf = _simple(b"/X1 Do BT /F1 12 Tf 72 720 Td (forms) Tj ET")
    x1 = pdf.make_stream(b"/X2 Do")
    x2 = pdf.make_stream(b"/X1 Do")
    for form in (x1, x2):
        form.Type, form.Subtype, form.BBox = pikepdf.Name.XObject, pikepdf.Name.Form, [0, 0, 612, 792]
        form.Resources = pikepdf.Dictionary(XObject=pikepdf.Dictionary())
    x1.Resources.XObject.X2 = x2
    x2.Resources.XObject.X1 = x1
    pdf.pages[0].obj.Resources.XObject = pikepdf.Dictionary(X1=x1)
    return _save(pdf)


def outline_cycle() -> bytes:
    pdf = _simple()
    first = pdf.make_indirect(pikepdf.Dictionary(Title=pikepdf.String("a")))
    second = pdf.make_indirect(pikepdf.Dictionary(Title=pikepdf.String("b"), Next=first, Prev=first))
    first.Next, first.Prev = second, second
    outlines = pdf.make_indirect(
        pikepdf.Dictionary(Type=pikepdf.Name.Outlines, First=first, Last=second, Count=2)
    )
    first.Parent = second.Parent = outlines
    pdf.Root.Outlines = outlines
    return _save(pdf)


def encrypted_unknown() -> bytes:
    return encrypted_pdf("not-given")


def truncated() -> bytes:
    data = text_pdf(["Truncated document text"] * 3)
    return data[: len(data) * 2 // 3]


def header_only() -> bytes:
    return b"%PDF-1.7\n"


def html_prefix() -> bytes:
    return b"<html><body>" + b"x" * 2000 + b"</body></html>\n" + text_pdf(["after html"])


def html_prefix_short() -> bytes:
    return b"<html>hi</html>\n" + text_pdf(["after a short prefix"])


def polyglot_zip() -> bytes:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("payload.txt", "zip side of the polyglot")
    return text_pdf(["polyglot text"]) + buffer.getvalue()


def active_content() -> bytes:
    pdf = pikepdf.open(io.BytesIO(text_pdf(["Active content document"])))
    js = pdf.make_indirect(pikepdf.Dictionary(S=pikepdf.Name.JavaScript, JS=pikepdf.String("app.alert(1)")))
    launch = pikepdf.Dictionary(S=pikepdf.Name.Launch, F=pikepdf.String("/bin/sh"))
    pdf.Root.OpenAction = js
    pdf.Root.AA = pikepdf.Dictionary(WC=launch)
    uri = pikepdf.Dictionary(S=pikepdf.Name.URI, URI=pikepdf.String("https://example.invalid/x"))
    annot = pikepdf.Dictionary(
        Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Link, Rect=[0, 0, 100, 100], A=uri
    )
    pdf.pages[0].obj.Annots = pdf.make_indirect(pikepdf.Array([pdf.make_indirect(annot)]))
    pdf.attachments["../../evil.sh"] = pikepdf.AttachedFileSpec(
        pdf, b"#!/bin/sh\nrm -rf /\n", filename="../../evil.sh"
    )
    return _save(pdf)


def object_stream_self() -> bytes:
    body = b"1 0 2 0 "
    objstm = (
        b"<< /Type /ObjStm /N 2 /First %d /Length %d >>\nstream\n" % (len(body), len(body) + 8)
        + body
        + b"6 0 R 6 0 R\nendstream"
    )
    return _manual(extra_objects=[objstm])


def broken_xref() -> bytes:
    data = _manual()
    return data.replace(b"0000000000 65535 f \n", b"0000000000 65535 f \n", 1).replace(
        b"00000 n \n", b"99999 n \n"
    )


def no_xref() -> bytes:
    return _manual(xref=False)


def sparse_huge() -> bytes:
    return b""  # written by write_all as a 50 MB sparse file


def zero_bytes() -> bytes:
    return b""


CLASSES: list[HostileClass] = [
    # pdf_security's visibility census reads the page's content stream, as the text tools do.
    HostileClass("flate_bomb", flate_bomb, {"info": BOMB, "fast": BOMB, "layout": BOMB, "security": BOMB}),
    HostileClass(
        "flate_bomb_double", flate_bomb_double, {"info": BOMB, "fast": BOMB, "layout": BOMB, "security": BOMB}
    ),
    HostileClass(
        "lzw_bomb",
        lzw_bomb,
        {"info": BOMB | OK, "fast": BOMB | OK, "layout": BOMB | OK, "security": BOMB | OK},
    ),
    HostileClass("image_10e10_pixels_flate", image_pixels_flate, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("image_10e10_pixels_ccitt", image_pixels_ccitt, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("image_10e10_pixels_jbig2", image_pixels_jbig2, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("pages_self_reference", self_referencing_pages, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("kids_cycle", kids_cycle, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("page_tree_5000_deep", deep_page_tree, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("nested_arrays_200k", nested_arrays, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass(
        "length_self_reference", length_self_reference, {"info": OK, "fast": OK, "layout": MALFORMED}
    ),
    HostileClass("xref_prev_loop", xref_prev_loop, {"info": OK, "fast": OK, "layout": MALFORMED}),
    HostileClass("count_2_31", count_huge, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("millions_of_operators", millions_of_operators, {"info": OK, "fast": OK, "layout": SLOW}),
    HostileClass("scattered_glyphs_20k", scattered_glyphs, {"info": OK, "fast": OK, "layout": SLOW}),
    HostileClass(
        "font_widths_3m",
        widths_huge,
        {"info": OK | BOMB | SLOW, "fast": OK | SLOW, "layout": SLOW | BOMB},
        # Parsing the 12 MB array takes about 3 s of pdf_info (qpdf, then PDFium's open and page
        # load) and 1.5-2.6 s of a PDFium read, against the suite's 5 s deadline: a loaded
        # machine times out, which is as correct an outcome as the answer.
    ),
    HostileClass("form_xobject_cycle", form_xobject_cycle, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("outline_cycle", outline_cycle, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass(
        "encrypted_unknown_password", encrypted_unknown, {e: frozenset({"encrypted"}) for e in ENGINES}
    ),
    HostileClass(
        "encrypted_wrong_password",
        encrypted_unknown,
        {e: frozenset({"wrong_password"}) for e in ENGINES},
        password="wrong",
    ),
    HostileClass("truncated", truncated, {e: MALFORMED for e in ENGINES}),
    HostileClass("zero_bytes", zero_bytes, {e: frozenset({"not_a_pdf"}) for e in ENGINES}),
    HostileClass("header_only", header_only, {e: MALFORMED for e in ENGINES}),
    HostileClass("html_before_header_2k", html_prefix, {e: frozenset({"not_a_pdf"}) for e in ENGINES}),
    HostileClass("html_before_header_short", html_prefix_short, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("polyglot_pdf_zip", polyglot_zip, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass(
        "active_content_js_launch_uri_evil_attachment", active_content, {"info": OK, "fast": OK, "layout": OK}
    ),
    HostileClass("object_stream_self_reference", object_stream_self, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("broken_xref_needs_repair", broken_xref, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("missing_xref", no_xref, {"info": OK, "fast": OK, "layout": OK}),
    HostileClass("sparse_50mb", sparse_huge, {e: frozenset({"not_a_pdf"}) for e in ENGINES}),
    HostileClass("fifo", None, {e: frozenset({"not_a_file"}) for e in ENGINES}, special="fifo"),
    HostileClass(
        "symlink_dev_zero", None, {e: frozenset({"path_denied"}) for e in ENGINES}, special="symlink"
    ),
]


# pdf_outline, pdf_attachments, pdf_annotations, pdf_forms and pdf_images read only the object model (qpdf):
# no content stream, font or image is decoded, so bombs and slow layouts read fine, and qpdf
# repairs what PDFium cannot (truncated). qpdf refuses page-tree loops and a lost /Root.
QPDF_REFUSES = frozenset(
    {"pages_self_reference", "kids_cycle", "page_tree_5000_deep", "header_only", "broken_xref_needs_repair"}
)
_INPUT_CODES = frozenset({"encrypted", "wrong_password", "not_a_pdf", "not_a_file", "path_denied"})


# pdf_search and pdf_render load pages with PDFium, as pdf_read's fast engine does.
_LIKE_FAST = frozenset({"search", "render"})


def expected(cls: HostileClass, engine: str) -> frozenset[str]:
    if engine in _LIKE_FAST:
        engine = "fast"
    if engine in ("markdown", "tables"):  # PDFium's pages, as pdf_read's fast engine: the same outcomes
        engine = "fast"
    if engine in cls.expect:
        return cls.expect[engine]
    if cls.expect["info"] <= _INPUT_CODES:
        return cls.expect["info"]
    return MALFORMED if cls.name in QPDF_REFUSES else OK


def write_all(folder: Path) -> dict[str, Path]:
    """Write every class into ``folder``; returns name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for cls in CLASSES:
        path = folder / f"{cls.name}.pdf"
        if path.exists() or path.is_symlink():
            paths[cls.name] = path
            continue
        if cls.special == "fifo":
            os.mkfifo(path)
        elif cls.special == "symlink":
            path.symlink_to("/dev/zero")
        elif cls.name == "sparse_50mb":
            with path.open("wb") as handle:
                handle.truncate(50 << 20)
        else:
            assert cls.build is not None
            path.write_bytes(cls.build())
        paths[cls.name] = path
    return paths


if __name__ == "__main__":
    import sys

    for name, path in write_all(Path(sys.argv[1])).items():
        sys.stdout.write(f"{name}: {path}\n")
