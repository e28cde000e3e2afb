"""``pdf_markdown`` over the real MCP client, on a report built with known structure
(tests/markdown_docs.py): exact headings and levels, lists with nesting, the table, the image
placeholder, two columns in reading order, no running header or page number, page offsets,
chunks with heading paths, cursors, and the typed errors ``pdf_read`` gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import markdown_docs
import pdfs
import pytest
from conftest import connect

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("markdown")
    markdown_docs.build(folder)
    markdown_docs.build_outlined(folder)
    pdfs.write(folder / "locked.pdf", pdfs.encrypted_pdf("s3cret"))
    pdfs.write(folder / "images.pdf", pdfs.images_pdf())
    (folder / "not-a-pdf.pdf").write_bytes(b"<html>hello</html>")
    return folder


async def _whole(root: Path, **arguments: Any) -> dict[str, Any]:
    async with connect(root) as client:
        result = await client.call_tool("pdf_markdown", {"path": "report-structured.pdf", **arguments})
    assert result.is_error is False, result
    structured: dict[str, Any] = result.structured_content
    assert result.content[0].text.startswith(structured["markdown"])  # then the warnings, if any
    return structured


async def test_headings_lists_table_image_and_columns(root: Path) -> None:
    answer = await _whole(root)
    markdown = answer["markdown"]
    assert [(h["level"], h["text"]) for h in answer["headings"]] == markdown_docs.HEADINGS
    for heading in answer["headings"]:
        assert markdown[heading["offset"] :].startswith("#" * heading["level"] + " " + heading["text"] + "\n")
    lines = markdown.split("\n")
    for item in [*markdown_docs.BULLETS, *markdown_docs.NUMBERED]:
        assert item in lines, item
    assert "This report describes the transformation of the company over the year. It is short." in lines
    assert "| Region | Units | Revenue |" in lines
    assert "| North | 120 | 4.5 |" in lines
    assert "| --- | --- | --- |" in lines
    assert any(line.startswith("![image p2 #1](pdf_images:page=2&name=") for line in lines)
    left, right = (" ".join(part) for part in (markdown_docs.LEFT, markdown_docs.RIGHT))
    assert left in lines and right in lines and markdown.index(left) < markdown.index(right)
    assert markdown_docs.HEADER not in markdown
    assert "Page 1 of 3" not in markdown and "of 3" not in markdown
    assert answer["page_count"] == answer["selected_pages"] == 3
    assert answer["cursor"] is None
    # the running header and the "Page N of 3" footers are left out, and counted
    assert answer["warnings"] == ["page furniture left out: 6 running header or footer lines (21 words)"]


async def test_page_spans_and_chunks_index_the_markdown(root: Path) -> None:
    answer = await _whole(root, chunk_chars=200)
    markdown = answer["markdown"]
    spans = answer["pages"]
    assert [span["page"] for span in spans] == [1, 2, 3]
    assert spans[0]["start"] == 0 and spans[-1]["end"] == len(markdown)
    assert markdown[spans[2]["start"] :].startswith("## 3 Discussion")
    chunks = answer["chunks"]
    assert all(chunk["text"] == markdown[chunk["start"] : chunk["end"]] for chunk in chunks)
    assert all(len(chunk["text"]) <= 200 for chunk in chunks)
    by_start = {chunk["text"].split("\n")[0]: chunk for chunk in chunks}
    scope = by_start["### 1.1 Scope"]
    assert scope["heading_path"] == ["Annual Report 2026", "1 Introduction", "1.1 Scope"]
    assert (scope["first_page"], scope["last_page"]) == (1, 1)
    discussion = by_start["## 3 Discussion"]
    assert discussion["heading_path"] == ["Annual Report 2026", "3 Discussion"]
    table = next(chunk for chunk in chunks if "| Region |" in chunk["text"])
    assert table["heading_path"] == ["Annual Report 2026", "2 Results"] and table["first_page"] == 2


async def test_cursor_parts_join_into_the_whole_and_keep_the_heading_path(root: Path) -> None:
    whole = (await _whole(root))["markdown"]
    parts: list[dict[str, Any]] = []
    async with connect(root) as client:
        arguments: dict[str, Any] = {"path": "report-structured.pdf", "max_chars": 150}
        while True:
            result = await client.call_tool("pdf_markdown", arguments)
            assert result.is_error is False, result
            parts.append(result.structured_content)
            if not result.structured_content["cursor"]:
                break
            arguments["cursor"] = result.structured_content["cursor"]
            assert len(parts) < 40
        other = await client.call_tool(
            "pdf_markdown", {"path": "report-structured.pdf", "pages": "2-3", "cursor": parts[0]["cursor"]}
        )
    assert other.is_error is True and other.structured_content["error"]["code"] == "invalid_arguments"
    assert len(parts) > 3
    assert all(len(part["markdown"]) <= 150 for part in parts)
    joined = ""
    for part in parts:
        first = part["pages"][0]
        cut = bool(joined) and first["offset"] > 0
        joined += ("" if not joined or cut else "\n\n") + part["markdown"]
    assert joined == whole
    late = [part for part in parts if part["pages"][0]["page"] == 3 and part["pages"][0]["offset"] > 0]
    assert late and all(not part["markdown"].startswith("#") for part in late)
    assert all(part["chunks"][0]["heading_path"] == ["Annual Report 2026", "3 Discussion"] for part in late)


async def test_errors_are_the_typed_ones_pdf_read_gives(root: Path) -> None:
    async with connect(root) as client:
        calls = {
            "locked": {"path": "locked.pdf"},
            "wrong": {"path": "locked.pdf", "password": "nope"},
            "garbage": {"path": "not-a-pdf.pdf"},
            "range": {"path": "report-structured.pdf", "pages": "9"},
            "chunk": {"path": "report-structured.pdf", "chunk_chars": 10},
        }
        codes = {}
        for name, arguments in calls.items():
            result = await client.call_tool("pdf_markdown", arguments)
            read = await client.call_tool(
                "pdf_read", {k: v for k, v in arguments.items() if k != "chunk_chars"}
            )
            assert result.is_error is True
            codes[name] = result.structured_content["error"]["code"]
            if name != "chunk":
                assert codes[name] == read.structured_content["error"]["code"]
        opened = await client.call_tool("pdf_markdown", {"path": "locked.pdf", "password": "s3cret"})
    assert codes == {
        "locked": "encrypted",
        "wrong": "wrong_password",
        "garbage": "not_a_pdf",
        "range": "page_out_of_range",
        "chunk": "invalid_arguments",
    }
    assert opened.is_error is False and "Secret text" in opened.structured_content["markdown"]


async def test_a_scanned_page_is_an_image_placeholder_with_a_warning(root: Path) -> None:
    """A page of one image and no text: its placeholder names what pdf_images extracts."""
    async with connect(root) as client:
        answer = await client.call_tool("pdf_markdown", {"path": "images.pdf", "ocr": "off"})
        ocr = await client.call_tool("pdf_markdown", {"path": "images.pdf"})
        image = await client.call_tool(
            "pdf_images", {"path": "images.pdf", "extract": {"page": 1, "name": "Scan"}}
        )
    assert answer.is_error is False and image.is_error is False
    result = answer.structured_content
    assert result["markdown"] == "![image p1 #1](pdf_images:page=1&name=Scan)\n\nPage with pictures"
    assert result["warnings"] == ["page 1 has no text layer, only images (a scan?); read it with pdf_render"]
    assert image.structured_content["extracted"]["name"] == "Scan"
    # OCR (the default) reads nothing in a plain picture: the placeholder stays, with its warning.
    assert ocr.structured_content["markdown"] == result["markdown"]
    assert ocr.structured_content["warnings"] == [
        "page 1: OCR found no text on it (a picture?); see pdf_render",
        "page 1 has no text layer, only images (a scan?); read it with pdf_render",
    ]


async def test_the_outline_sets_heading_levels_one_style_cannot(root: Path) -> None:
    async with connect(root) as client:
        result = await client.call_tool("pdf_markdown", {"path": "outlined.pdf"})
    assert result.is_error is False, result
    headings = [(h["level"], h["text"]) for h in result.structured_content["headings"]]
    assert headings == markdown_docs.OUTLINED
    assert "## Setup\n\nBody text of the setup section" in result.structured_content["markdown"]


def test_a_code_that_is_no_character_reads_as_the_replacement_character() -> None:
    """Found on pdf.js's issue11768_reduced.pdf and issue18117.pdf (bench/robustness/differential.py):
    PDFium passes on whatever a broken ToUnicode map says."""
    from pdf_airlock.worker.pdf.layoutlines import char_text

    assert [char_text(code) for code in (0x41, 0x10FFFF, 0x110000, 0xD800, 2**32 - 1, 0)] == [
        "A",
        "\U0010ffff",
        "\ufffd",
        "\ufffd",
        "\ufffd",
        "\ufffd",
    ]


async def test_a_jbig2_encoded_content_stream_runs_no_program(tmp_path: Path) -> None:
    """Found on pdf.js's bomb_giant.pdf: reading a page's content for its image names made qpdf
    ask pikepdf to run ``jbig2dec``, which the sandbox forbids (the child was killed as a
    sandbox violation). The decoder now refuses at once; the page is read without image names."""
    import pikepdf

    pdf = pikepdf.new()
    pdf.add_blank_page()
    pdf.pages[0].obj.Contents = pdf.make_stream(b"\x00\x01\x02\x03", Filter=pikepdf.Name.JBIG2Decode)
    pdf.save(tmp_path / "jbig2.pdf")
    async with connect(tmp_path) as client:
        result = await client.call_tool("pdf_markdown", {"path": "jbig2.pdf"})
        read = await client.call_tool("pdf_read", {"path": "jbig2.pdf"})
    assert read.is_error is False
    assert result.is_error is False, result.structured_content
    assert result.structured_content["markdown"] == "" and result.structured_content["page_count"] == 1
