"""Classes of real-world PDF that read wrong in the sandbox and right outside it, one test each.

Found by bench/robustness/differential.py over pdf.js's public corpus; tests/realworld.py builds a small
document per class. Every server the suite starts fails a job on any lazy load after
sandboxing (tests/conftest.py), so a codec or CMap the warm-up missed is an ``internal`` error
naming it, not silently wrong text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pdfs
import pytest
import realworld
from conftest import connect

pytestmark = pytest.mark.anyio

CLASSES = {
    "to-unicode.pdf": (realworld.to_unicode_pdf, realworld.TO_UNICODE_TEXT.replace("ﬁ", "fi")),
    "cjk.pdf": (realworld.predefined_cjk_pdf, realworld.CJK_TEXT),
    "form-xobject.pdf": (realworld.form_xobject_pdf, realworld.FORM_TEXT),
    "hyphenated.pdf": (
        realworld.hyphenated_pdf,
        "The tracing compiler must record and\nthen compile the hot loops of the program.",
    ),
}


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("real-world")
    for name, (build, _text) in CLASSES.items():
        pdfs.write(folder / name, build())
    return folder


def _text(result: Any) -> str:
    assert result.is_error is False, result.structured_content
    return "".join(page["text"] for page in result.structured_content["pages"]).strip()


@pytest.mark.parametrize("engine", ["fast", "layout"])
async def test_each_class_reads_exactly_in_both_engines(corpus: Path, engine: str) -> None:
    async with connect(corpus) as client:
        for name, (_build, expected) in CLASSES.items():
            result = await client.call_tool("pdf_read", {"path": name, "engine": engine})
            assert _text(result) == expected, (name, engine)


async def test_search_finds_a_hyphenated_word_with_its_boxes(corpus: Path) -> None:
    async with connect(corpus) as client:
        result = await client.call_tool("pdf_search", {"path": "hyphenated.pdf", "query": "compile"})
    hits = result.structured_content["hits"]
    assert [hit["text"] for hit in hits] == ["compile", "compile"]
    # The second is split across two lines: two rectangles, one per line.
    assert len(hits[0]["rects"]) == 1 and len(hits[1]["rects"]) == 2


@pytest.mark.parametrize("engine", ["fast", "layout"])
async def test_text_layer_says_when_a_page_cannot_be_read(tmp_path: Path, engine: str) -> None:
    pdfs.write(tmp_path / "glyphs.pdf", realworld.glyph_codes_pdf())
    pdfs.write(tmp_path / "scan.pdf", realworld.image_only_pdf())
    pdfs.write(tmp_path / "blank.pdf", pdfs.text_pdf(["Some text.", ""]))
    async with connect(tmp_path) as client:
        glyphs = (
            await client.call_tool("pdf_read", {"path": "glyphs.pdf", "engine": engine, "ocr": "off"})
        ).structured_content
        scan = (
            await client.call_tool("pdf_read", {"path": "scan.pdf", "engine": engine, "ocr": "off"})
        ).structured_content
        blank = (
            await client.call_tool("pdf_read", {"path": "blank.pdf", "engine": engine})
        ).structured_content
    assert [page["text_layer"] for page in glyphs["pages"]] == ["ok", "unusable"]
    assert glyphs["warnings"][0] == (
        "page 2: its text layer is unusable (glyph codes without a Unicode map); "
        "read the page with pdf_render instead"
    )
    assert [page["text_layer"] for page in scan["pages"]] == ["none"]
    assert scan["warnings"] == ["page 1 has no text layer, only images (a scan?); read it with pdf_render"]
    # A page left blank on purpose has no text and no image: no warning.
    assert [page["text_layer"] for page in blank["pages"]] == ["ok", "none"]
    assert blank["warnings"] == []


async def test_form_labels_export_values_and_xfa_data(tmp_path: Path) -> None:
    pdfs.write(tmp_path / "forms.pdf", realworld.forms_pdf())
    async with connect(tmp_path) as client:
        result = await client.call_tool("pdf_forms", {"path": "forms.pdf"})
    forms = result.structured_content
    assert [(f["name"], f["label"], f["type"], f["export_values"], f["value"]) for f in forms["fields"]] == [
        ("name", "Full name", "text", [], "Ada Lovelace"),
        ("agree", "I agree to the terms", "button", ["Agree"], "Agree"),
    ]
    # The XFA data, read by a parser that expands no entity and reads past a stray '&'.
    assert forms["xfa"] is True
    assert forms["xfa_fields"] == [
        {"name": "form1.Applicant.Name", "value": "Ada Lovelace"},
        {"name": "form1.Applicant.Bomb", "value": ""},
        {"name": "form1.Terms", "value": "R  D"},
    ]
    assert "agree ('I agree to the terms') [button on=Agree]" in result.content[0].text


async def test_security_scan_survives_an_operator_inside_an_array(tmp_path: Path) -> None:
    pdfs.write(tmp_path / "odd.pdf", realworld.operator_in_array_pdf())
    async with connect(tmp_path) as client:
        result = await client.call_tool("pdf_security", {"path": "odd.pdf"})
    assert result.is_error is False, result.structured_content
    # Hidden text is judged from PDFium's page objects, which read the array as viewers do.
    assert result.structured_content["hidden_text"]["pages_scanned"] == 1
    assert result.structured_content["warnings"] == []


@pytest.mark.parametrize("engine", ["fast", "layout"])
async def test_layout_takes_from_pdfium_the_characters_pdfminer_cannot_decode(
    tmp_path: Path, engine: str
) -> None:
    """pdfminer ignores the ToUnicode ranges of ``realworld.short_range_to_unicode_pdf`` and writes
    ``(cid:N)``; the layout engine takes those characters from PDFium, on an upright page and on
    a turned one whose MediaBox origin is not (0, 0): both engines read the same lines."""
    pdfs.write(tmp_path / "short-range.pdf", realworld.short_range_to_unicode_pdf())
    async with connect(tmp_path) as client:
        result = await client.call_tool("pdf_read", {"path": "short-range.pdf", "engine": engine})
    assert result.is_error is False, result.structured_content
    pages = result.structured_content["pages"]
    assert [page["text"].strip() for page in pages] == list(realworld.SHORT_RANGE_LINES)
    assert [page["text_layer"] for page in pages] == ["ok", "ok"]
    assert result.structured_content["warnings"] == []
