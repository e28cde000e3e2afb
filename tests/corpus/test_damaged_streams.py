"""Damaged input that pdfminer (the layout engine) trips over inside its own code: each tool's
exact outcome through the real server (``malformed`` from the layout engine, never ``internal``).

Found by the sweep of qpdf's test files (docs/robustness.md): an LZW stream that is not LZW
(``IndexError`` in pdfminer's LZW decoder), a TIFF predictor with 536,870,913 colours
(``IndexError`` in its predictor), and a page tree whose pages are direct objects, not
references (``AttributeError`` in its page-tree walk). Each is rebuilt here from what qpdf's
file does; the damage is the document's, so the verdict is ``malformed``.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest
from conftest import connect
from tool_calls import every_call

pytestmark = pytest.mark.anyio

_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"
_TEXT = b"BT /F1 24 Tf 72 720 Td (Readable text) Tj ET"


def _assemble(objects: list[bytes]) -> bytes:
    """A PDF of ``objects`` (numbered from 1, the first the catalog) with a correct xref."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def _stream(dictionary: bytes, data: bytes) -> bytes:
    return b"<< %s /Length %d >>\nstream\n%s\nendstream" % (dictionary, len(data), data)


def _one_page(contents: bytes) -> bytes:
    """A page whose content is object 4, after a readable first content stream (object 5)."""
    return _assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 6 0 R >> >>"
            b" /Contents [5 0 R 4 0 R] >>",
            contents,
            _stream(b"", _TEXT),
            _FONT,
        ]
    )


def lzw_not_lzw() -> bytes:
    return _one_page(_stream(b"/Filter /LZWDecode", b"Not really compressed."))


def tiff_predictor_colours() -> bytes:
    parms = b"/DecodeParms << /Predictor 2 /Colors 536870913 /Columns 1 /BitsPerComponent 8 >>"
    return _one_page(_stream(b"/Filter /FlateDecode " + parms, zlib.compress(b"\x01")))


def direct_pages() -> bytes:
    page = (
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >>"
        b" /Contents 3 0 R >>"
    )
    return _assemble(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s %s] /Count 2 >>" % (page, page),
            _stream(b"", _TEXT),
            _FONT,
        ]
    )


DOCUMENTS = {"lzw": lzw_not_lzw, "tiff_predictor": tiff_predictor_colours, "direct_pages": direct_pages}
LAYOUT = "pdf_read layout"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("damaged")
    for name, build in DOCUMENTS.items():
        (folder / f"{name}.pdf").write_bytes(build())
    return folder


@pytest.mark.parametrize("name", DOCUMENTS)
async def test_layout_engine_calls_damage_malformed(root: Path, name: str) -> None:
    calls = every_call()
    async with connect(root) as client:
        results = {
            label: await client.call_tool(tool, {"path": f"{name}.pdf", **args})
            for label, (tool, args) in calls.items()
        }
    codes = {
        label: result.structured_content["error"]["code"] if result.is_error else "ok"
        for label, result in results.items()
    }
    assert codes[LAYOUT] == "malformed", results[LAYOUT].content
    assert (
        results[LAYOUT]
        .structured_content["error"]["message"]
        .startswith("the PDF engine could not parse the document (pdfminer: ")
    )
    # PDFium and qpdf read past the damage (the fast engine reads the other stream's text).
    assert codes == dict.fromkeys(calls, "ok") | {LAYOUT: "malformed"}
