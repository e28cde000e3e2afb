"""OCR in other languages and scripts, turned pages, blank pages and the per-page deadline,
through the real server over stdio, in the real sandbox, on generated image-only pages with known
text (German and Arabic typeset with DejaVu Sans, Chinese with WenQuanYi Micro Hei: the test
machine's fonts; ``scripts/test.sh`` installs the language data they need).
"""

from __future__ import annotations

import random
import time
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any

import pytest
from conftest import connect
from fpdf import FPDF
from PIL import Image, ImageDraw, ImageFont

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # each starts a server that loads every language

DEJAVU = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
WQY = "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
GERMAN = [
    "Der Fluss entspringt in den Hügeln nördlich der Stadt und fließt nach Süden.",
    "Im neunzehnten Jahrhundert wurde auf dem Fluss Kohle und Holz transportiert.",
    "Heute ist der Weg am Ufer bei Wanderern und Radfahrern sehr beliebt.",
    "Die Bibliothek bewahrt Briefe, Karten und Fotografien aus dieser Zeit auf.",
]
ENGLISH = [
    "The river rises in the hills north of the town and flows to the sea.",
    "Scientists measure the quality of the water every month of the year.",
    "The number of fish has grown steadily since the factories were closed.",
]
ARABIC = [
    "ينبع النهر من التلال الواقعة شمال المدينة",
    "ويجري نحو الجنوب قبل أن يصل إلى البحر",
    "وتحفظ مكتبة المدينة رسائل وخرائط وصورا قديمة",
]
CHINESE = [
    "这条河发源于城市北面的丘陵，向南流淌约两百公里后注入大海。",
    "市图书馆保存着许多信件、地图和照片，记录了风景的变化。",
    "科学家每个月都会检测水质，鱼类的数量一直在稳步增长。",
]
SPECKS = 40_000  # on a 300 dpi Letter scan: Tesseract's layout analysis alone runs for minutes


def scan(
    lines: list[str], font: str, *, dpi: int = 200, size_pt: int = 12, rtl: bool = False, turn: int = 0
) -> bytes:
    """An image-only Letter page at ``dpi`` with ``lines`` of text, scanned turned ``turn``
    degrees counter-clockwise."""
    width, height = round(8.5 * dpi), 11 * dpi
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(font, round(size_pt * dpi / 72))
    y = dpi
    for line in lines:
        assert face.getlength(line) < width - 1.5 * dpi, line  # the line fits on the page
        x = width - dpi - face.getlength(line) if rtl else dpi
        draw.text((x, y), line, font=face, fill=0)
        y += round(size_pt * 1.8 * dpi / 72)
    return _pdf(image.rotate(turn, expand=True) if turn else image)


def _pdf(image: Image.Image) -> bytes:
    landscape = image.width > image.height
    pdf = FPDF(unit="pt", format=(792, 612) if landscape else (612, 792))
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=pdf.w, h=pdf.h)
    return bytes(pdf.output())


def blank_scan() -> bytes:
    """A scan of an empty sheet: paper grain, no ink."""
    rng = random.Random(5)
    image = Image.new("L", (850, 1100), 245)
    pixels = image.load()
    assert pixels is not None
    for _ in range(20_000):
        pixels[rng.randrange(850), rng.randrange(1100)] = rng.randrange(200, 256)
    return _pdf(image)


def specks_scan() -> bytes:
    """A 300 dpi scan of 40,000 specks of 2 x 2 pixels."""
    rng = random.Random(3)
    image = Image.new("L", (2550, 3300), 255)
    draw = ImageDraw.Draw(image)
    for _ in range(SPECKS):
        x, y = rng.randrange(2549), rng.randrange(3299)
        draw.rectangle((x, y, x + 1, y + 1), fill=0)
    return _pdf(image)


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ocr-languages")
    (folder / "german.pdf").write_bytes(scan(GERMAN, DEJAVU))
    (folder / "two.pdf").write_bytes(scan([*GERMAN[:2], "", *ENGLISH], DEJAVU))
    (folder / "arabic.pdf").write_bytes(scan(ARABIC, DEJAVU, size_pt=16, rtl=True))
    (folder / "chinese.pdf").write_bytes(scan(CHINESE, WQY, dpi=300))
    for turn in (90, 180, 270):
        (folder / f"turned{turn}.pdf").write_bytes(scan(ENGLISH, DEJAVU, turn=turn))
    (folder / "blank.pdf").write_bytes(blank_scan())
    (folder / "specks.pdf").write_bytes(specks_scan())
    return folder


def ok(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content[0].text
    content: dict[str, Any] = result.structured_content
    return content


def words(lines: list[str]) -> list[str]:
    return " ".join(lines).split()


async def test_a_german_scan_is_read_in_german_named_or_not(root: Path) -> None:
    async with connect(root) as client:
        named = ok(await client.call_tool("pdf_read", {"path": "german.pdf", "ocr_languages": ["deu"]}))
        detected = ok(await client.call_tool("pdf_read", {"path": "german.pdf"}))
    for read in (named, detected):
        (page,) = read["pages"]
        assert page["text"].split() == words(GERMAN)
        assert (page["text_source"], page["ocr_languages"], page["ocr_rotation"]) == ("ocr", ["deu"], 0)


async def test_two_named_languages_read_a_page_in_both(root: Path) -> None:
    async with connect(root) as client:
        read = ok(await client.call_tool("pdf_read", {"path": "two.pdf", "ocr_languages": ["deu", "eng"]}))
    (page,) = read["pages"]
    assert page["text"].split() == words(GERMAN[:2] + ENGLISH)
    assert page["ocr_languages"][0] == "deu"


async def test_an_unknown_language_is_refused_with_the_installed_ones(root: Path) -> None:
    async with connect(root) as client:
        missing = await client.call_tool("pdf_read", {"path": "german.pdf", "ocr_languages": ["deu", "xyz"]})
    assert missing.structured_content["error"]["code"] == "invalid_arguments"
    message = missing.structured_content["error"]["message"]
    assert message.startswith("OCR language xyz is not installed; installed: ")
    assert {"ara", "chi_sim", "deu", "eng"} <= set(message.split("installed: ")[1].split(", "))


async def test_arabic_comes_out_in_logical_order(root: Path) -> None:
    async with connect(root) as client:
        read = ok(await client.call_tool("pdf_read", {"path": "arabic.pdf"}))
    (page,) = read["pages"]
    assert page["ocr_languages"] == ["ara"]
    # Words in reading order (first word first), whatever letter Tesseract misreads.
    assert SequenceMatcher(None, page["text"].split(), words(ARABIC)).ratio() >= 0.9, page["text"]


async def test_chinese_is_read_without_spaces_between_characters(root: Path) -> None:
    async with connect(root) as client:
        read = ok(await client.call_tool("pdf_read", {"path": "chinese.pdf"}))
    (page,) = read["pages"]
    assert page["ocr_languages"][0] in {"chi_sim", "chi_tra"}
    found = [line for line in page["text"].splitlines() if line]
    assert all(" " not in line for line in found), found
    same = sum(a == b for a, b in zip("".join(found), "".join(CHINESE), strict=False))
    assert same >= 0.9 * len("".join(CHINESE))


@pytest.mark.parametrize("turn", [90, 180, 270])
async def test_a_page_scanned_turned_is_read_upright(root: Path, turn: int) -> None:
    async with connect(root) as client:
        named = ok(
            await client.call_tool("pdf_read", {"path": f"turned{turn}.pdf", "ocr_languages": ["eng"]})
        )
        detected = ok(await client.call_tool("pdf_read", {"path": f"turned{turn}.pdf"}))
    for read in (named, detected):
        (page,) = read["pages"]
        assert page["text"].split() == words(ENGLISH)
        assert page["ocr_rotation"] in {turn, 0}  # Tesseract reads some sideways lines itself
    assert detected["pages"][0]["ocr_rotation"] == turn


async def test_search_boxes_on_a_turned_scan_map_back_to_the_page(root: Path) -> None:
    """The page turned 90 degrees counter-clockwise: its first line runs up the left side of the
    landscape page, from the bottom; the hit's box is there, taller than wide."""
    async with connect(root) as client:
        found = ok(await client.call_tool("pdf_search", {"path": "turned90.pdf", "query": "river rises"}))
    (hit,) = found["hits"]
    ((left, bottom, right, top),) = hit["rects"]
    assert top - bottom > 3 * (right - left)  # the words run up the page
    assert abs(left - 72) < 20, (left, bottom, right, top)  # the upright page's top margin, turned
    assert 72 - 10 < bottom < 200  # the line starts one inch in, at the bottom of the landscape page


async def test_a_blank_scan_reads_as_nothing_and_says_so(root: Path) -> None:
    async with connect(root) as client:
        read = ok(await client.call_tool("pdf_read", {"path": "blank.pdf"}))
        forced = ok(await client.call_tool("pdf_read", {"path": "blank.pdf", "ocr": "force"}))
    for result in (read, forced):
        (page,) = result["pages"]
        assert (page["text"], page["text_source"]) == ("", "ocr")
        assert result["warnings"] == ["page 1: the scanned page is blank (no text on it)"]


async def test_the_page_deadline_bounds_layout_analysis_too(root: Path) -> None:
    """40,000 specks: Tesseract's layout analysis alone would run for minutes; the page's
    deadline (1 s) ends it, typed, long before the job's (60 s)."""
    async with connect(root, "--ocr-page-timeout", "1", "--timeout", "60") as client:
        started = time.monotonic()
        result = await client.call_tool("pdf_read", {"path": "specks.pdf", "ocr_languages": ["eng"]})
        seconds = time.monotonic() - started
        after = await client.call_tool("pdf_info", {"path": "german.pdf"})
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == "timeout"
    assert result.structured_content["error"]["details"] == {"page": 1, "page_timeout_ms": 1000}
    assert seconds < 30, seconds
    assert after.is_error is False  # the server goes on serving


def test_a_scan_is_read_at_its_own_resolution() -> None:
    """Native resolution: a 200 dpi scan is rendered at 200 dpi pixel for pixel (not resampled
    to --ocr-dpi), a 600 dpi one at 600 within the pixel budget, and a page of vector text at
    --ocr-dpi."""
    import pypdfium2 as pdfium

    from pdf_airlock.worker.pdf import ocr, ocrimage

    limits = ocr.OcrLimits()

    def dpi_of(
        document: pdfium.PdfDocument, *, scan: bool = True, max_pixels: int = limits.max_pixels
    ) -> float:
        scale = ocrimage.scale_for(
            document[0], 1, dpi=limits.dpi, min_dpi=limits.min_dpi, max_pixels=max_pixels, scan=scan
        )
        return scale * 72

    for dpi in (200, 150, 300):
        document = pdfium.PdfDocument(_pdf(Image.new("L", (round(8.5 * dpi), 11 * dpi), 255)))
        assert abs(dpi_of(document) - dpi) < 0.01
        bitmap = document[0].render(scale=dpi_of(document) / 72)
        assert (bitmap.width, bitmap.height) == (round(8.5 * dpi), 11 * dpi)
    document = pdfium.PdfDocument(_pdf(Image.new("L", (5100, 6600), 255)))  # 600 dpi: over the budget
    budget = (limits.max_pixels / (612 * 792)) ** 0.5 * 72
    assert budget - 1 < dpi_of(document) < budget
    assert dpi_of(document, scan=False) == limits.dpi
