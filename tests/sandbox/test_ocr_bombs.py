"""Image bombs under OCR, through the real server and sandbox: a JPEG 2000 image that declares
100,000 x 100,000 pixels, and the hostile corpus's JBIG2, CCITT and Flate images of 10^10
pixels, each on an image-only page read with ``ocr: force``. PDFium renders the page for OCR (at
the image's own resolution, within the pixel budget) and refuses to decode such an image
itself, so each page reads as blank: the call answers within the
deadline, says the page is blank, and the server goes on serving."""

from __future__ import annotations

import io
import struct
import time
from pathlib import Path
from typing import Any

import pikepdf
import pytest
from conftest import connect
from PIL import Image

from tests.hostile.generate import CLASSES

pytestmark = pytest.mark.anyio

DECLARED = 100_000  # pixels a side the JPEG 2000 image claims
DEADLINE_S = 30.0  # the server's default deadline plus slack
HOSTILE = ("image_10e10_pixels_jbig2", "image_10e10_pixels_ccitt", "image_10e10_pixels_flate")
SIZ = b"\xff\x51"  # the JPEG 2000 image-and-tile-size marker


def jpx_bomb_pdf() -> bytes:
    """A small JPEG 2000 codestream whose SIZ marker is rewritten to 100,000 x 100,000 pixels
    (image and tile), drawn over most of a letter page."""
    buffer = io.BytesIO()
    Image.new("L", (64, 64), 128).save(buffer, "JPEG2000", irreversible=False)
    data = bytearray(buffer.getvalue())
    at = data.find(SIZ)
    assert at > 0
    struct.pack_into(">II", data, at + 6, DECLARED, DECLARED)  # Xsiz, Ysiz
    struct.pack_into(">II", data, at + 22, DECLARED, DECLARED)  # XTsiz, YTsiz
    pdf = pikepdf.new()
    image = pdf.make_stream(
        bytes(data),
        Type=pikepdf.Name.XObject,
        Subtype=pikepdf.Name.Image,
        Width=DECLARED,
        Height=DECLARED,
        ColorSpace=pikepdf.Name.DeviceGray,
        BitsPerComponent=8,
        Filter=pikepdf.Name.JPXDecode,
    )
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im0=image)),
        Contents=pdf.make_stream(b"q 500 0 0 700 50 50 cm /Im0 Do Q"),
    )
    pdf.pages.append(pikepdf.Page(page))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ocr-bombs")
    (folder / "jpx_bomb.pdf").write_bytes(jpx_bomb_pdf())
    for cls in CLASSES:
        if cls.name in HOSTILE and cls.build is not None:
            (folder / f"{cls.name}.pdf").write_bytes(cls.build())
    return folder


async def test_a_jpeg2000_bomb_reads_as_a_blank_page(root: Path) -> None:
    async with connect(root) as client:
        await client.call_tool("pdf_info", {"path": "jpx_bomb.pdf"})  # the zygote is warm
        started = time.monotonic()
        result = await client.call_tool("pdf_read", {"path": "jpx_bomb.pdf", "ocr": "force"})
        seconds = time.monotonic() - started
        after = await client.call_tool("pdf_info", {"path": "jpx_bomb.pdf"})
    assert seconds < DEADLINE_S
    assert result.is_error is False, result.content
    answer: dict[str, Any] = result.structured_content
    assert answer["pages"][0]["text_source"] == "ocr"
    assert answer["pages"][0]["text"].strip() == ""
    assert answer["warnings"] == ["page 1: the scanned page is blank (no text on it)"]
    assert after.is_error is False  # the server is still serving


@pytest.mark.parametrize("name", HOSTILE)
async def test_hostile_images_of_ten_billion_pixels_under_ocr(root: Path, name: str) -> None:
    async with connect(root) as client:
        await client.call_tool("pdf_info", {"path": f"{name}.pdf"})  # the zygote is warm
        started = time.monotonic()
        result = await client.call_tool("pdf_read", {"path": f"{name}.pdf", "ocr": "force"})
        seconds = time.monotonic() - started
    assert seconds < DEADLINE_S
    # PDFium refuses to decode the image, so the page it renders for OCR has no ink: blank.
    assert result.is_error is False, result.content
    answer: dict[str, Any] = result.structured_content
    assert [(page["text"], page["text_source"]) for page in answer["pages"]] == [("", "ocr")]
    assert answer["warnings"] == ["page 1: the scanned page is blank (no text on it)"]
