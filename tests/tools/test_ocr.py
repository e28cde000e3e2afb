"""OCR of scanned pages (``ocr`` / ``ocr_languages``) through the real server, over stdio, in the
real sandbox: generated image-only pages with known text."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pdfs
import pikepdf
import pytest
from conftest import PROJECT, connect

pytestmark = pytest.mark.anyio

SCAN_LINES = ["Invoice number 4711", "Total due: 1,250.00 EUR", "Payable within thirty days"]
TYPED = "A typed page with a real text layer."
REPORT = [
    ("Annual Report", 24, True),
    ("Introduction", 16, True),
    ("This is the body text of a page that goes on.", 11, False),
    ("The second line of the body paragraph here.", 11, False),
    ("- first item of the list", 11, False),
    ("- second item in the list", 11, False),
    ("Results", 16, True),
    ("The results were good and the body goes on.", 11, False),
]


def _huge_page_pdf() -> bytes:
    """One 100,000 x 100,000 pt page (UserUnit makes it legal) showing a tiny image."""
    pdf = pikepdf.new()
    image = pikepdf.Stream(pdf, bytes([255]) * 64)
    image.Type, image.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    image.Width, image.Height, image.BitsPerComponent = 8, 8, 8
    image.ColorSpace = pikepdf.Name.DeviceGray
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 100_000, 100_000],
        Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im1=image)),
        Contents=pdf.make_stream(b"q 100000 0 0 100000 0 0 cm /Im1 Do Q"),
    )
    pdf.pages.append(pikepdf.Page(page))
    out = pdfs.io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _rotated_text_pdf() -> bytes:
    """A landscape page shown upright as portrait by /Rotate 90: its text, with a text layer,
    is drawn turned a quarter counter-clockwise, so its rendering reads upright."""
    pdf = pikepdf.new()
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
    )
    text = f"q 0 1 -1 0 792 0 cm BT /F1 14 Tf 72 700 Td ({TYPED}) Tj ET Q".encode()
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 792, 612],
        Rotate=90,
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
        Contents=pdf.make_stream(text),
    )
    pdf.pages.append(pikepdf.Page(page))
    out = pdfs.io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _noise_pdf() -> bytes:
    """An image-only page of random specks: OCR reads nothing it is sure of."""
    import random

    from fpdf import FPDF
    from PIL import Image

    rng = random.Random(3)
    image = Image.new("L", (400, 500), 255)
    for _ in range(6000):
        image.putpixel((rng.randrange(400), rng.randrange(500)), 0)
    pdf = FPDF(unit="pt", format="letter")
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=612, h=792)
    return bytes(pdf.output())


def _stamped_scan_pdf() -> bytes:
    """A scan with a stamp: the page's image and a few characters of real text (a page number
    a scanning program printed on it), as scanning software often leaves them."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="letter")
    pdf.add_page()
    pdf.image(pdfs.scan_image(SCAN_LINES), x=0, y=0, w=612, h=792)
    pdf.set_font("helvetica", size=9)
    pdf.text(540, 770, "Page 3")
    return bytes(pdf.output())


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ocr")
    pdfs.write(folder / "mixed.pdf", pdfs.scan_pdf([SCAN_LINES, TYPED]))
    pdfs.write(folder / "huge.pdf", _huge_page_pdf())
    pdfs.write(folder / "noise.pdf", _noise_pdf())
    pdfs.write(folder / "report.pdf", pdfs.structured_scan_pdf(REPORT))
    pdfs.write(folder / "stamped.pdf", _stamped_scan_pdf())
    pdfs.write(folder / "rotated.pdf", _rotated_text_pdf())
    return folder


def ok(result: Any) -> dict[str, Any]:
    assert result.is_error is False, result.content[0].text
    content: dict[str, Any] = result.structured_content
    return content


def code(result: Any) -> str:
    assert result.is_error is True
    return str(result.structured_content["error"]["code"])


async def test_auto_ocrs_the_scanned_page_and_keeps_the_text_layer(root: Path) -> None:
    async with connect(root) as client:
        read = ok(await client.call_tool("pdf_read", {"path": "mixed.pdf"}))
    scan, typed = read["pages"]
    assert scan["text"].splitlines() == SCAN_LINES
    assert (scan["text_layer"], scan["text_source"]) == ("none", "ocr")
    assert scan["ocr_confidence"] >= 80
    assert typed["text"] == TYPED
    assert (typed["text_source"], typed["ocr_confidence"]) == ("text_layer", None)
    assert read["warnings"] == []


async def test_off_leaves_the_scan_empty_with_a_warning_and_force_ocrs_every_page(root: Path) -> None:
    async with connect(root) as client:
        off = ok(await client.call_tool("pdf_read", {"path": "mixed.pdf", "ocr": "off"}))
        force = ok(await client.call_tool("pdf_read", {"path": "mixed.pdf", "ocr": "force"}))
    sources = [(p["text"], p["text_source"]) for p in off["pages"]]
    assert sources == [("", "text_layer"), (TYPED, "text_layer")]
    assert off["warnings"] == ["page 1 has no text layer, only images (a scan?); read it with pdf_render"]
    assert [p["text_source"] for p in force["pages"]] == ["ocr", "ocr"]
    assert force["pages"][1]["text"].strip() == TYPED
    assert force["pages"][1]["text_layer"] == "ok"


async def test_an_unknown_language_is_refused_naming_the_installed_ones(root: Path) -> None:
    async with connect(root) as client:
        missing = await client.call_tool("pdf_read", {"path": "mixed.pdf", "ocr_languages": ["xyz"]})
        malformed = await client.call_tool("pdf_read", {"path": "mixed.pdf", "ocr_languages": ["../eng"]})
        mixed = await client.call_tool("pdf_read", {"path": "mixed.pdf", "ocr_languages": ["eng", "xyz"]})
    installed = ", ".join(sorted(installed_languages()))
    assert code(missing) == "invalid_arguments"
    assert missing.structured_content["error"]["message"] == (
        f"OCR language xyz is not installed; installed: {installed}"
    )
    assert code(malformed) == "invalid_arguments"
    assert code(mixed) == "invalid_arguments"
    assert (
        mixed.structured_content["error"]["message"]
        == f"OCR language xyz is not installed; installed: {installed}"
    )


def installed_languages() -> set[str]:
    """Tesseract's language data on this machine, as the worker finds it."""
    from pdf_airlock.worker.pdf import ocr

    directory = next(d for d in ocr.TESSDATA_DIRS if Path(d, "eng.traineddata").is_file())
    found = {
        name.removesuffix(".traineddata") for name in os.listdir(directory) if name.endswith(".traineddata")
    }
    return found - {"osd", "equ"}


async def test_a_huge_page_is_a_memory_limit_not_a_render(root: Path) -> None:
    async with connect(root) as client:
        huge = await client.call_tool("pdf_read", {"path": "huge.pdf", "ocr": "force"})
    assert code(huge) == "memory_limit"
    assert huge.structured_content["error"]["details"] == {"page": 1, "max_pixels": 16_000_000}


async def test_a_page_of_specks_is_a_blank_page(root: Path) -> None:
    """Random specks are no text: OCR reads nothing it is sure of, and the page says it is blank."""
    async with connect(root) as client:
        read = ok(await client.call_tool("pdf_read", {"path": "noise.pdf"}))
    page = read["pages"][0]
    assert (page["text"], page["text_source"]) == ("", "ocr")
    assert read["warnings"] == ["page 1: the scanned page is blank (no text on it)"]


async def test_search_finds_words_on_a_scan_and_says_they_came_from_ocr(root: Path) -> None:
    async with connect(root) as client:
        auto = ok(await client.call_tool("pdf_search", {"path": "mixed.pdf", "query": "total"}))
        off = ok(await client.call_tool("pdf_search", {"path": "mixed.pdf", "query": "total", "ocr": "off"}))
        typed = ok(await client.call_tool("pdf_search", {"path": "mixed.pdf", "query": "real text"}))
    assert [(h["page"], h["text"], h["after"], h["text_source"]) for h in auto["hits"]] == [
        (1, "Total", " due: 1,250.00 EUR Payable within thirty days ", "ocr")
    ]
    # The scan's second line starts one inch in, 253 px (200 dpi) from the top, 33 px high.
    ((left, bottom, right, top),) = auto["hits"][0]["rects"]
    line_top = 792 - 253 * 72 / 200
    assert abs(left - 72) < 2 and 72 + 20 < right < 72 + 45
    assert line_top - 33 * 72 / 200 - 1 < bottom < top <= line_top + 1
    assert off["hits"] == []
    assert [(h["page"], h["text_source"]) for h in typed["hits"]] == [(2, "text_layer")]
    assert typed["hits"][0]["rects"] != []


async def test_markdown_of_a_scan_has_headings_and_lists_from_the_ocr_boxes(root: Path) -> None:
    async with connect(root) as client:
        result = ok(await client.call_tool("pdf_markdown", {"path": "report.pdf"}))
        off = ok(await client.call_tool("pdf_markdown", {"path": "report.pdf", "ocr": "off"}))
    assert result["markdown"] == (
        "# Annual Report\n\n## Introduction\n\n"
        "This is the body text of a page that goes on. The second line of the body paragraph here.\n\n"
        "- first item of the list\n- second item in the list\n\n"
        "## Results\n\nThe results were good and the body goes on."
    )
    assert [(h["level"], h["text"]) for h in result["headings"]] == [
        (1, "Annual Report"),
        (2, "Introduction"),
        (2, "Results"),
    ]
    (page,) = result["pages"]
    assert page["text_source"] == "ocr" and page["ocr_confidence"] >= 80
    assert result["warnings"] == []
    assert off["pages"][0]["text_source"] == "text_layer"
    assert off["warnings"] == ["page 1 has no text layer, only images (a scan?); read it with pdf_render"]


def test_the_self_test_ocrs_a_page_in_the_sandbox() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pdf_airlock.server", "self-test", "--json"],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=300,  # the zygote's warm-up loads every installed language first
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    layers = json.loads(done.stdout)["layers"]
    assert layers["seccomp"].startswith("active") and layers["landlock"].startswith("active")
    assert layers["ocr"].startswith("active: read the sample page (confidence ")
    assert "; scripts and orientation detected; languages: " in layers["ocr"]
    assert layers["ocr"].endswith("languages: " + ", ".join(sorted(installed_languages())))


_WITHOUT_DATA = """
import json, sys
from pdf_airlock.worker.pdf import ocr
ocr.TESSDATA_DIRS = ("/nonexistent/tessdata",)
from pdf_airlock.worker.warmup import warm_up
warm_up()
from pdf_airlock.worker.parsers.read import run
print(json.dumps(run(open(sys.argv[1], "rb").read(), {"max_chars": 1000, "ocr": "auto"})))
"""


def test_without_language_data_the_worker_still_reads_and_warns(root: Path) -> None:
    """The zygote's warm-up with no Tesseract data: it still warms up, and a scanned page comes
    back empty with a warning that says OCR is unavailable and why (never silently empty)."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", _WITHOUT_DATA, str(root / "mixed.pdf")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    read = json.loads(done.stdout)
    assert [(p["text"], p["text_source"]) for p in read["pages"]] == [
        ("", "text_layer"),
        (TYPED, "text_layer"),
    ]
    assert read["warnings"] == [
        "page 1 needs OCR, which is unavailable here: no Tesseract language data is installed "
        "(Debian: tesseract-ocr-eng)"
    ]


async def test_auto_ocrs_a_scan_whose_text_layer_is_only_a_stamp(root: Path) -> None:
    async with connect(root) as client:
        auto = ok(await client.call_tool("pdf_read", {"path": "stamped.pdf"}))
        off = ok(await client.call_tool("pdf_read", {"path": "stamped.pdf", "ocr": "off"}))
    (page,) = auto["pages"]
    assert (page["text_layer"], page["text_source"]) == ("ok", "ocr")
    assert page["text"].splitlines()[:3] == SCAN_LINES
    assert off["pages"][0]["text"] == "Page 3"


async def test_an_ocr_hit_has_the_rects_of_the_same_words_in_the_text_layer(root: Path) -> None:
    """OCR's word boxes, mapped back through the rendering, land where PDFium puts the same
    characters of the text layer; a match inside a word gets only its share of the word."""
    query = {"path": "mixed.pdf", "pages": "2", "query": "typed page with"}
    async with connect(root) as client:
        layer = ok(await client.call_tool("pdf_search", query))
        forced = ok(await client.call_tool("pdf_search", query | {"ocr": "force"}))
        inside = ok(await client.call_tool("pdf_search", query | {"ocr": "force", "query": "yped"}))
    (layer_rect,) = layer["hits"][0]["rects"]
    (ocr_rect,) = forced["hits"][0]["rects"]
    assert forced["hits"][0]["text_source"] == "ocr"
    assert all(abs(a - b) < 3 for a, b in zip(layer_rect, ocr_rect, strict=True)), (layer_rect, ocr_rect)
    (part,) = inside["hits"][0]["rects"]
    assert ocr_rect[0] < part[0] < part[2] < ocr_rect[0] + (ocr_rect[2] - ocr_rect[0]) / 2


async def test_the_rects_of_an_ocr_hit_on_a_rotated_page_are_in_its_own_coordinates(root: Path) -> None:
    """/Rotate 90: OCR reads the upright rendering, and its boxes are turned back into the
    page's unrotated space, where PDFium's text-layer boxes of the same words are."""
    query = {"path": "rotated.pdf", "query": "typed page with"}
    async with connect(root) as client:
        layer = ok(await client.call_tool("pdf_search", query))
        forced = ok(await client.call_tool("pdf_search", query | {"ocr": "force"}))
    (layer_rect,) = layer["hits"][0]["rects"]
    (ocr_rect,) = forced["hits"][0]["rects"]
    assert layer_rect[3] - layer_rect[1] > layer_rect[2] - layer_rect[0]  # the words run up the page
    assert all(abs(a - b) < 3 for a, b in zip(layer_rect, ocr_rect, strict=True)), (layer_rect, ocr_rect)


async def test_lowered_ocr_limits_take_effect(root: Path) -> None:
    """The --ocr-* flags reach the job child: a tiny pixel budget refuses the page, a tiny
    per-page deadline times out, a high confidence bar warns about a well-read page."""
    args = {"path": "mixed.pdf", "pages": "1"}
    async with connect(root, "--ocr-max-pixels", "200000") as client:
        budget = await client.call_tool("pdf_read", args)
    async with connect(root, "--ocr-page-timeout", "0.001") as client:
        deadline = await client.call_tool("pdf_read", args)
    async with connect(root, "--ocr-low-confidence", "100") as client:
        strict = ok(await client.call_tool("pdf_read", args))
    assert code(budget) == "memory_limit"
    assert budget.structured_content["error"]["details"] == {"page": 1, "max_pixels": 200_000}
    assert code(deadline) == "timeout"
    assert deadline.structured_content["error"]["details"] == {"page": 1, "page_timeout_ms": 1}
    confidence = strict["pages"][0]["ocr_confidence"]
    assert strict["warnings"] == [
        f"page 1: OCR confidence is low ({confidence}/100); check the text against pdf_render"
    ]


def test_ocr_limits_from_the_environment_and_out_of_range(root: Path) -> None:
    command = [sys.executable, "-m", "pdf_airlock.server", "call", "pdf_read", "--root", str(root)]
    command += ["--json", json.dumps({"path": "mixed.pdf", "pages": "1"})]
    run = functools.partial(subprocess.run, capture_output=True, text=True, cwd=PROJECT, timeout=60)
    from_env = run(command, env=os.environ | {"PDF_AIRLOCK_OCR_MAX_PIXELS": "200000"}, check=False)
    too_low = run([*command, "--ocr-dpi", "10"], check=False)
    crossed = run([*command, "--ocr-dpi", "150", "--ocr-min-dpi", "200"], check=False)
    assert from_env.returncode == 1
    assert json.loads(from_env.stdout)["structuredContent"]["error"]["details"]["max_pixels"] == 200_000
    assert (too_low.returncode, too_low.stdout) == (2, "")
    assert "--ocr-dpi must be from 72 to 1200" in too_low.stderr
    assert "--ocr-min-dpi must not exceed --ocr-dpi" in crossed.stderr


@pytest.mark.parametrize(
    "untrusted",
    [
        {"dpi": 10},
        {"dpi": 300.0},
        {"dpi": True},
        {"page_timeout_ms": 0},
        {"max_pixels": 10**12},
        {"dpi": 100, "min_dpi": 200},
        {"unknown": 1},
        [300],
    ],
)
def test_a_job_with_ocr_limits_out_of_range_is_refused(untrusted: object) -> None:
    """OCR's limits are checked once, in ``OcrLimits``: when ``Settings`` is made, and when a job
    message's ``limits`` are read (the job child or the zygote refuses the job)."""
    from pdf_airlock.worker.contract import Job, Limits, OcrLimitError, OcrLimits, ProtocolError

    limits = Limits(memory_bytes=1 << 28, cpu_seconds=5, max_input_bytes=1 << 20, max_result_bytes=1 << 20)
    sent = json.loads(Job(7, "pdf_read", {}, limits, {}, 1.0, 1.0).to_wire())
    assert Job.from_wire(json.dumps(sent).encode()).limits.ocr == OcrLimits()
    del sent["limits"]["ocr"]  # absent: the defaults
    assert Job.from_wire(json.dumps(sent).encode()).limits.ocr == OcrLimits()
    sent["limits"]["ocr"] = {"dpi": 150}
    assert Job.from_wire(json.dumps(sent).encode()).limits.ocr.dpi == 150
    sent["limits"]["ocr"] = untrusted
    with pytest.raises(ProtocolError) as refused:
        Job.from_wire(json.dumps(sent).encode())
    assert refused.value.job_id == 7
    if isinstance(untrusted, dict) and "unknown" not in untrusted:
        with pytest.raises(OcrLimitError):
            OcrLimits(**untrusted)


async def test_a_disk_cache_entry_made_under_other_ocr_limits_is_not_reused(
    root: Path, tmp_path: Path
) -> None:
    cache = ["--cache-dir", str(tmp_path / "cache"), "--cache-key-file", str(tmp_path / "cache.key")]
    args = {"path": "mixed.pdf", "pages": "1"}
    async with connect(root, *cache) as client:
        first = ok(await client.call_tool("pdf_read", args))
    async with connect(root, *cache, "--ocr-low-confidence", "100") as client:
        stricter = ok(await client.call_tool("pdf_read", args))
        text_only = ok(await client.call_tool("pdf_read", args | {"ocr": "off"}))
    assert first["warnings"] == []
    assert stricter["warnings"][0].startswith("page 1: OCR confidence is low")
    assert text_only["pages"][0]["text_source"] == "text_layer"
