"""pdf_search, pdf_render, pdf_images, the pdf_info additions and page-label selectors, on
generated fixtures with exact values, over the real client, server and sandbox."""

from __future__ import annotations

import base64
import hashlib
import io
import math
from pathlib import Path
from typing import Any

import pdfs
import pytest
from conftest import connect
from PIL import Image

pytestmark = pytest.mark.anyio

SEARCH_PAGES = [
    "Alpha beta gamma.\nThe word beta again, and Betamax.",
    "Nothing here.",
    "Last page: BETA and alphabet.",
]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("search")
    pdfs.write(folder / "search.pdf", pdfs.text_pdf(SEARCH_PAGES))
    pdfs.write(folder / "structured.pdf", pdfs.structured_pdf())
    pdfs.write(folder / "interactive.pdf", pdfs.interactive_pdf())
    pdfs.write(folder / "images.pdf", pdfs.images_pdf())
    pdfs.write(folder / "xmp.pdf", pdfs.xmp_pdf())
    pdfs.write(folder / "damaged.pdf", pdfs.damaged_xref_pdf())
    # Crafted text for a regular expression with catastrophic backtracking.
    pdfs.write(folder / "redos.pdf", pdfs.text_pdf(["a" * 60 + "!"]))
    return folder


def code(result: Any) -> str:
    assert result.is_error is True
    return str(result.structured_content["error"]["code"])


def hits(result: Any) -> list[tuple[int, str, str, str]]:
    assert result.is_error is False, result.content[0].text
    return [(h["page"], h["text"], h["before"], h["after"]) for h in result.structured_content["hits"]]


async def test_search_literal_options_and_boxes(root: Path) -> None:
    async with connect(root) as client:
        plain = await client.call_tool(
            "pdf_search", {"path": "search.pdf", "query": "beta", "context_chars": 6}
        )
        cased = await client.call_tool(
            "pdf_search", {"path": "search.pdf", "query": "BETA", "case_sensitive": True}
        )
        word = await client.call_tool(
            "pdf_search", {"path": "search.pdf", "query": "beta", "whole_word": True}
        )
        alpha = await client.call_tool("pdf_search", {"path": "search.pdf", "query": "alpha", "pages": "3"})
    assert hits(plain) == [
        (1, "beta", "Alpha ", " gamma"),
        (1, "beta", " word ", " again"),
        (1, "Beta", ", and ", "max."),
        (3, "BETA", "page: ", " and a"),
    ]
    assert [h["page"] for h in cased.structured_content["hits"]] == [3]
    assert [h["text"] for h in word.structured_content["hits"]] == ["beta", "beta", "BETA"]
    assert hits(alpha) == [(3, "alpha", "Last page: BETA and ", "bet.")]
    assert plain.structured_content["pages_searched"] == 3 and plain.structured_content["cursor"] is None
    # Boxes: one rectangle per hit on one line, inside the letter-size page, in reading order.
    boxes = [h["rects"] for h in plain.structured_content["hits"]]
    assert all(len(rects) == 1 for rects in boxes)
    for left, bottom, right, top in (rects[0] for rects in boxes):
        assert 0 < left < right < 612 and 0 < bottom < top < 792
    assert boxes[0][0][1] > boxes[1][0][1]  # the second line is lower on the page
    assert "page 1: ...Alpha [beta] gamma..." in plain.content[0].text


async def test_search_regex_cursor_and_errors(root: Path) -> None:
    args = {"path": "search.pdf", "query": r"\b[Bb]\w+", "regex": True}
    async with connect(root) as client:
        whole = await client.call_tool("pdf_search", args)
        pages: list[Any] = []
        cursor = None
        while True:
            part = await client.call_tool(
                "pdf_search", args | {"max_results": 2, **({"cursor": cursor} if cursor else {})}
            )
            pages.append(part)
            cursor = part.structured_content["cursor"]
            if cursor is None:
                break
        other = await client.call_tool(
            "pdf_search",
            {"path": "search.pdf", "query": "beta", "cursor": pages[0].structured_content["cursor"]},
        )
        invalid = await client.call_tool(
            "pdf_search", {"path": "search.pdf", "query": "(unclosed", "regex": True}
        )
        redos = await client.call_tool(
            "pdf_search",
            {"path": "redos.pdf", "query": "(a|aa)+$", "regex": True, "time_budget_ms": 200},
        )
        after = await client.call_tool("pdf_search", {"path": "redos.pdf", "query": "!"})
    found = [(h["page"], h["text"]) for h in whole.structured_content["hits"]]
    assert found == [(1, "beta"), (1, "beta"), (1, "Betamax"), (3, "BETA")]
    paged = [(h["page"], h["text"]) for p in pages for h in p.structured_content["hits"]]
    assert paged == found and len(pages) == 2
    assert code(other) == "invalid_arguments"
    assert code(invalid) == "invalid_arguments"
    assert code(redos) == "timeout"
    assert redos.structured_content["error"]["details"] == {"time_budget_ms": 200, "page": 1}
    assert hits(after)[0][1] == "!"


async def test_render_page_to_png(root: Path) -> None:
    async with connect(root) as client:
        rendered = await client.call_tool("pdf_render", {"path": "search.pdf", "page": 3, "dpi": 72})
        capped = await client.call_tool(
            "pdf_render", {"path": "search.pdf", "page": "1", "dpi": 600, "max_pixels": 100_000}
        )
        by_label = await client.call_tool("pdf_render", {"path": "structured.pdf", "page": "ii", "dpi": 36})
        scan = await client.call_tool("pdf_render", {"path": "images.pdf", "page": 1, "dpi": 36})
        missing = await client.call_tool("pdf_render", {"path": "search.pdf", "page": 4})
        two = await client.call_tool("pdf_render", {"path": "search.pdf", "page": "1-2"})
    assert rendered.is_error is False
    _text, block = rendered.content
    assert block.type == "image" and block.mime_type == "image/png"
    png = base64.b64decode(block.data)
    image = Image.open(io.BytesIO(png))
    assert image.size == (612, 792)
    info = rendered.structured_content
    assert (info["page"], info["dpi"], info["page_count"]) == (3, 72.0, 3)
    assert info["image"] == {
        "width_px": 612,
        "height_px": 792,
        "png_bytes": len(png),
        "png_sha256": hashlib.sha256(png).hexdigest(),
    }
    # Black text on a white page: both colours are present.
    colours = {pixel[:3] for pixel in image.convert("RGB").get_flattened_data()}
    assert (255, 255, 255) in colours and min(sum(c) for c in colours) < 200
    size = capped.structured_content["image"]
    assert size["width_px"] * size["height_px"] <= 100_000
    assert capped.structured_content["dpi"] == pytest.approx(72 * math.sqrt(100_000 / (612 * 792)), abs=0.3)
    assert "max_pixels" in capped.structured_content["warnings"][0]
    assert (by_label.structured_content["page"], by_label.structured_content["label"]) == (2, "ii")
    scan_image = Image.open(io.BytesIO(base64.b64decode(scan.content[1].data))).convert("RGB")
    assert scan_image.getpixel((150, 200)) == pdfs.IMAGE_RGB
    assert code(missing) == "page_out_of_range"
    assert code(two) == "invalid_arguments"


async def test_images_listed_and_extracted(root: Path) -> None:
    async with connect(root) as client:
        listed = await client.call_tool("pdf_images", {"path": "images.pdf"})
        flate = await client.call_tool(
            "pdf_images", {"path": "images.pdf", "extract": {"page": 2, "name": "Fm0/Inner"}}
        )
        jpeg = await client.call_tool(
            "pdf_images", {"path": "images.pdf", "extract": {"page": 2, "name": "Photo"}}
        )
        huge = await client.call_tool(
            "pdf_images", {"path": "images.pdf", "extract": {"page": 2, "name": "Huge"}}
        )
        unknown = await client.call_tool(
            "pdf_images", {"path": "images.pdf", "extract": {"page": 1, "name": "Photo"}}
        )
        first = await client.call_tool("pdf_images", {"path": "images.pdf", "max_items": 3})
        rest = await client.call_tool(
            "pdf_images", {"path": "images.pdf", "max_items": 3, "cursor": first.structured_content["cursor"]}
        )
    images = [
        (
            i["page"],
            i["name"],
            i["width"],
            i["height"],
            i["color_space"],
            i["filters"],
            i["bits_per_component"],
        )
        for i in listed.structured_content["images"]
    ]
    assert images == [
        (1, "Scan", 40, 30, "DeviceRGB", ["FlateDecode"], 8),
        (2, "Fm0/Inner", 40, 30, "DeviceRGB", ["FlateDecode"], 8),
        (2, "Huge", 20000, 20000, "DeviceGray", ["FlateDecode"], 8),
        (2, "Photo", 4, 4, "DeviceRGB", ["DCTDecode"], 8),
    ]
    assert (
        listed.structured_content["images"][0]["object"] == listed.structured_content["images"][1]["object"]
    )
    assert len(listed.content) == 1 and listed.structured_content["cursor"] is None
    decoded = Image.open(io.BytesIO(base64.b64decode(flate.content[1].data)))
    assert decoded.size == (40, 30) and set(decoded.convert("RGB").get_flattened_data()) == {pdfs.IMAGE_RGB}
    assert (
        flate.structured_content["extracted"]["png_sha256"]
        == hashlib.sha256(base64.b64decode(flate.content[1].data)).hexdigest()
    )
    blue = Image.open(io.BytesIO(base64.b64decode(jpeg.content[1].data))).convert("RGB").getpixel((1, 1))
    assert blue[2] > 200 and blue[0] < 40  # JPEG is lossy: nearly pure blue
    assert code(huge) == "decompression_limit"
    assert huge.structured_content["error"]["details"] == {
        "width": 20000,
        "height": 20000,
        "max_pixels": 4_000_000,
    }
    assert code(unknown) == "invalid_arguments"
    names = [i["name"] for i in first.structured_content["images"] + rest.structured_content["images"]]
    assert names == ["Scan", "Fm0/Inner", "Huge", "Photo"] and rest.structured_content["cursor"] is None


async def test_info_additions(root: Path) -> None:
    async with connect(root) as client:
        xmp = await client.call_tool("pdf_info", {"path": "xmp.pdf"})
        damaged = await client.call_tool("pdf_info", {"path": "damaged.pdf"})
        structured = await client.call_tool("pdf_info", {"path": "structured.pdf"})
        interactive = await client.call_tool("pdf_info", {"path": "interactive.pdf"})
        scans = await client.call_tool("pdf_info", {"path": "images.pdf"})
    info = xmp.structured_content
    assert info["xmp"] == {
        "dc:title": "XMP title",
        "dc:creator": "Ada",
        "xmp:CreateDate": "2024-05-06T07:08:09+00:00",
    }
    assert info["metadata_conflicts"] == [{"field": "title", "info": "Info title", "xmp": "XMP title"}]
    assert "metadata conflict: title" in xmp.content[0].text
    assert damaged.structured_content["repair"]["xref_rebuilt"] is True
    assert damaged.structured_content["repair"]["warning_count"] >= 1
    assert structured.structured_content["repair"] == {
        "xref_rebuilt": False,
        "warning_count": 0,
        "warnings": [],
    }
    assert [p["label"] for p in structured.structured_content["pages"]] == ["i", "ii", "1", "2"]
    features = structured.structured_content["features"]
    assert features["has_outline"] and features["has_attachments"] and features["has_page_labels"]
    assert not features["has_forms"] and not features["tagged"] and not features["linearized"]
    assert interactive.structured_content["features"]["has_forms"] is True
    assert interactive.structured_content["features"]["has_xfa"] is False
    pages = scans.structured_content["pages"]
    assert [(p["scanned"], p["has_text"]) for p in pages] == [(True, False), (False, True)]
    assert scans.structured_content["scanned_pages"] == 1
    for page in structured.structured_content["pages"]:
        assert page["tokens_estimate"] == math.ceil(page["chars"] / 4) and page["chars"] > 0
    total = sum(p["tokens_estimate"] for p in structured.structured_content["pages"])
    assert structured.structured_content["tokens_estimate"] == total


async def test_page_label_selectors(root: Path) -> None:
    async with connect(root) as client:
        roman = await client.call_tool("pdf_read", {"path": "structured.pdf", "pages": "ii"})
        spanning = await client.call_tool("pdf_read", {"path": "structured.pdf", "pages": "ii-1,4"})
        info = await client.call_tool("pdf_info", {"path": "structured.pdf", "pages": "i"})
        found = await client.call_tool(
            "pdf_search", {"path": "structured.pdf", "query": "page", "pages": "1-2"}
        )
        unknown = await client.call_tool("pdf_read", {"path": "structured.pdf", "pages": "xiv"})
    assert [p["page"] for p in roman.structured_content["pages"]] == [2]
    assert [p["page"] for p in spanning.structured_content["pages"]] == [2, 3, 4]
    assert [p["label"] for p in info.structured_content["pages"]] == ["i"]
    assert [(h["page"], h["label"]) for h in found.structured_content["hits"]] == [(1, "i"), (2, "ii")]
    assert code(unknown) == "invalid_arguments"
    assert unknown.structured_content["error"]["message"] == "no page has the label 'xiv'"
