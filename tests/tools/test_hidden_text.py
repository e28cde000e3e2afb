"""What the agent reads is what a person sees, over real stdio with the real ``mcp`` client.

Each generated page (``tests/hidden_pdfs.py``) carries a visible paragraph plus an instruction
hidden from view in one way (invisible render mode, white on white, the colour of the box
beneath, too small, off the page, outside the crop box, painted over, clipped away, zero
opacity, optional content off, behind an image, a form scaled to nothing, a cell of a table, and
tricks the stage has no rule for: a soft mask, an annotation over it, a form's bounding box, a
white outline, a white image), or unusual text a person does see (a searchable scan, light
grey, light on dark, small print, colour on colour, highlighted and underlined, annotation and
form text). Every text tool is asked once per page in one server session: ``pdf_read`` (both
engines), ``pdf_markdown``, ``pdf_search``, ``pdf_tables``, each with and without
``include_hidden``, and ``pdf_security``; each test then checks the exact text returned, the
warnings, the hidden runs listed apart, and the triage.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import hidden_pdfs
import pytest
from conftest import connect
from hidden_pdfs import HIDDEN, KEPT, UNFORESEEN, VISIBLE, Case

pytestmark = pytest.mark.anyio

CASES: dict[str, Case] = {**HIDDEN, **KEPT}
WORDS = {
    "invisible_mode": "invisible render mode",
    "same_colour_as_background": "same colour as the background",
    "transparent": "transparent",
    "too_small": "too small to read",
    "clipped": "clipped away",
    "outside_crop_box": "outside the crop box",
    "covered": "covered",
    "optional_content_off": "optional content switched off",
    "no_visible_pixels": "no visible pixels",
}
HIDDEN_WORD = "APPROVED"
TABLE_HIDDEN_WORD = "previous"


def _calls(name: str) -> dict[str, tuple[str, dict[str, Any]]]:
    path = f"{name}.pdf"
    hidden_word = TABLE_HIDDEN_WORD if HIDDEN.get(name) and HIDDEN[name].table else HIDDEN_WORD
    return {
        "fast": ("pdf_read", {"path": path, "ocr": "off"}),
        "fast+hidden": ("pdf_read", {"path": path, "ocr": "off", "include_hidden": True}),
        "layout": ("pdf_read", {"path": path, "ocr": "off", "engine": "layout"}),
        "layout+hidden": (
            "pdf_read",
            {"path": path, "ocr": "off", "engine": "layout", "include_hidden": True},
        ),
        "markdown": ("pdf_markdown", {"path": path, "ocr": "off"}),
        "markdown+hidden": ("pdf_markdown", {"path": path, "ocr": "off", "include_hidden": True}),
        "search": ("pdf_search", {"path": path, "ocr": "off", "query": hidden_word}),
        "search+hidden": (
            "pdf_search",
            {"path": path, "ocr": "off", "query": hidden_word, "include_hidden": True},
        ),
        "search visible": ("pdf_search", {"path": path, "ocr": "off", "query": "steady growth"}),
        "tables": ("pdf_tables", {"path": path}),
        "tables+hidden": ("pdf_tables", {"path": path, "include_hidden": True}),
        "security": ("pdf_security", {"path": path}),
    }


@pytest.fixture(scope="module")
async def answers(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[dict[tuple[str, str], Any]]:
    """Every call's result, by (page, call)."""
    folder = tmp_path_factory.mktemp("hidden")
    hidden_pdfs.write_all(folder)
    found: dict[tuple[str, str], Any] = {}
    async with connect(folder) as client:
        for name in CASES:
            for label, (tool, arguments) in _calls(name).items():
                result = await client.call_tool(tool, arguments)
                assert result.is_error is False, (name, label, result.content)
                found[(name, label)] = result
        note = await client.call_tool("pdf_annotations", {"path": "annotation_and_field.pdf"})
        field = await client.call_tool("pdf_forms", {"path": "annotation_and_field.pdf"})
        found[("annotation_and_field", "annotations")], found[("annotation_and_field", "forms")] = note, field
    yield found


def warning(case: Case, *, listed: bool = False) -> str:
    tail = (
        "they are returned apart, each marked with its reason"
        if listed
        else "pass include_hidden to see them"
    )
    assert case.reason is not None
    return f"page 1: 1 text run a person would not see was left out: 1 {WORDS[case.reason]}; {tail}"


def hidden_warnings(result: Any) -> list[str]:
    return [w for w in result.structured_content["warnings"] if "a person would not see" in w]


def runs(listed: list[dict[str, Any]]) -> list[tuple[int, str, str]]:
    for run in listed:
        assert len(run["box"]) == 4 and run["box"][0] <= run["box"][2] and run["box"][1] <= run["box"][3]
    return [(run["page"], run["reason"], run["text"]) for run in listed]


def expected_runs(case: Case) -> list[tuple[int, str, str]]:
    return [(1, case.reason, case.hidden_text)] if case.reason else []


@pytest.mark.parametrize("name", list(CASES))
async def test_pdf_read_returns_what_a_person_sees(answers: dict[tuple[str, str], Any], name: str) -> None:
    case = CASES[name]
    for label, text in (("fast", case.expected_fast), ("layout", case.expected_layout)):
        result = answers[(name, label)]
        page = result.structured_content["pages"][0]
        assert page["text"] == text, label
        assert page["hidden"] == [], label
        assert hidden_warnings(result) == ([warning(case)] if case.reason else []), label
        assert case.hidden_text not in result.content[0].text, label


@pytest.mark.parametrize("name", list(CASES))
async def test_pdf_read_include_hidden_lists_them_apart(
    answers: dict[tuple[str, str], Any], name: str
) -> None:
    case = CASES[name]
    for label, text in (("fast+hidden", case.expected_fast), ("layout+hidden", case.expected_layout)):
        result = answers[(name, label)]
        page = result.structured_content["pages"][0]
        assert page["text"] == text, label  # never mixed into the page's text
        assert runs(page["hidden"]) == expected_runs(case), label
        assert hidden_warnings(result) == ([warning(case, listed=True)] if case.reason else []), label
        if case.reason:
            block = (
                "--- hidden text on page 1: a person would not see it (include_hidden) ---\n"
                f"[{case.reason}] {case.hidden_text}\n"
                "--- end of hidden text on page 1 ---"
            )
            assert f"--- page 1 ---\n{text}\n{block}" in result.content[0].text, label


@pytest.mark.parametrize("name", list(CASES))
async def test_pdf_markdown_returns_what_a_person_sees(
    answers: dict[tuple[str, str], Any], name: str
) -> None:
    case = CASES[name]
    result = answers[(name, "markdown")].structured_content
    assert result["markdown"] == case.expected_markdown
    assert all(case.hidden_text not in chunk["text"] for chunk in result["chunks"])
    assert [w for w in result["warnings"] if "a person would not see" in w] == (
        [warning(case)] if case.reason else []
    )
    listed = answers[(name, "markdown+hidden")].structured_content
    assert runs(listed["pages"][0]["hidden"]) == expected_runs(case)
    if case.reason:  # a delimited block after the page's body, never in it
        block = (
            "<!-- hidden text on page 1: not shown on the rendered page (include_hidden) -->\n"
            f"~~~text\n[{case.reason}] {case.hidden_text}\n~~~"
        )
        assert listed["markdown"] == f"{case.expected_markdown}\n\n{block}"
    else:
        assert listed["markdown"] == case.expected_markdown


@pytest.mark.parametrize("name", list(CASES))
async def test_pdf_search_finds_no_hidden_text(answers: dict[tuple[str, str], Any], name: str) -> None:
    case = CASES[name]
    hits = answers[(name, "search")].structured_content["hits"]
    assert hits == []
    visible = answers[(name, "search visible")].structured_content["hits"]
    assert [(hit["text"], hit["hidden"]) for hit in visible] == [("steady growth", None)]
    listed = answers[(name, "search+hidden")].structured_content["hits"]
    if case.reason:
        assert [(hit["page"], hit["hidden"]) for hit in listed] == [(1, case.reason)]
        assert f"[hidden: {case.reason}]" in answers[(name, "search+hidden")].content[0].text
    else:
        assert listed == []


@pytest.mark.parametrize("name", list(CASES))
async def test_pdf_tables_hold_no_hidden_text(answers: dict[tuple[str, str], Any], name: str) -> None:
    case = CASES[name]
    tables = answers[(name, "tables")].structured_content["tables"]
    assert [table["rows"] for table in tables] == ([[list(row) for row in case.table]] if case.table else [])
    assert answers[(name, "tables")].structured_content["hidden"] == []
    assert runs(answers[(name, "tables+hidden")].structured_content["hidden"]) == expected_runs(case)


@pytest.mark.parametrize("name", list(CASES))
async def test_pdf_security_names_every_hidden_run_and_no_control(
    answers: dict[tuple[str, str], Any], name: str
) -> None:
    case = CASES[name]
    result = answers[(name, "security")].structured_content
    found = result["hidden_text"]
    if case.reason is None:
        assert (found["runs"], found["items"], result["risk"]) == (0, [], "low")
        return
    assert found["runs"] == 1 and found["by_reason"] == {case.reason: 1}
    assert [(run["page"], run["reason"], run["preview"], run["instruction"]) for run in found["items"]] == [
        (1, case.reason, case.hidden_text, True)
    ]
    assert found["instructions"] == 1
    assert result["risk"] == "high"
    assert "1 hidden text run(s) that read as instructions to a model" in result["reasons"]


def test_every_hidden_class_and_kept_case_is_generated() -> None:
    """The issue's classes, two or more tricks nobody wrote a rule for, every kept case."""
    assert set(HIDDEN) >= {
        "invisible_mode",
        "white_on_white",
        "box_colour",
        "tiny",
        "off_page",
        "outside_crop_box",
        "painted_over",
        "clipped_away",
        "zero_opacity",
        "optional_content_off",
        "behind_image",
        "form_scaled_to_nothing",
    }
    assert len(UNFORESEEN) >= 2 and set(HIDDEN) >= UNFORESEEN
    assert set(KEPT) == {
        "scan_with_text_layer",
        "light_grey",
        "white_on_dark",
        "small_print",
        "coloured_box",
        "annotation_and_field",
        "highlighted",
        "cjk_on_a_box",
    }


async def test_annotation_and_field_text_stays_with_their_tools(answers: dict[tuple[str, str], Any]) -> None:
    notes = answers[("annotation_and_field", "annotations")].structured_content["annotations"]
    assert hidden_pdfs.ANNOTATION_TEXT in [note["contents"] for note in notes]
    fields = answers[("annotation_and_field", "forms")].structured_content["fields"]
    assert [field["value"] for field in fields] == [hidden_pdfs.FIELD_VALUE]
    assert answers[("annotation_and_field", "fast")].structured_content["pages"][0]["text"] == VISIBLE


async def test_the_cache_keys_on_include_hidden(tmp_path: Path) -> None:
    """A call with include_hidden after the same call without it is not the cached answer."""
    hidden_pdfs.write_all(tmp_path)
    async with connect(tmp_path) as client:
        plain = await client.call_tool("pdf_read", {"path": "white_on_white.pdf"})
        listed = await client.call_tool("pdf_read", {"path": "white_on_white.pdf", "include_hidden": True})
        again = await client.call_tool("pdf_read", {"path": "white_on_white.pdf"})
    assert plain.structured_content["pages"][0]["hidden"] == []
    assert [run["text"] for run in listed.structured_content["pages"][0]["hidden"]] == [
        hidden_pdfs.INSTRUCTION
    ]
    assert again.structured_content == plain.structured_content


async def test_a_delivered_answer_keeps_hidden_text_apart(tmp_path: Path) -> None:
    """``deliver: "resource"``: the resource holds what the inline answer would, the hidden runs
    (with include_hidden) in their own block after the page's text, none without it."""
    hidden_pdfs.write_all(tmp_path)
    marker = "--- hidden text on page 1: a person would not see it (include_hidden) ---"
    table_instruction = hidden_pdfs.TABLE_INSTRUCTION
    block = f"{marker}\n[same_colour_as_background] {table_instruction}\n--- end of hidden text on page 1 ---"
    texts: dict[tuple[str, bool], str] = {}
    async with connect(tmp_path) as client:
        for tool in ("pdf_read", "pdf_tables"):
            for include in (False, True):
                arguments = {"path": "hidden_table_cell.pdf", "include_hidden": include}
                result = await client.call_tool(tool, arguments | {"deliver": "resource"})
                assert not result.is_error, result.content
                uri = result.structured_content["resource"]["uri"]
                texts[tool, include] = (await client.read_resource(uri)).contents[0].text
    assert texts["pdf_read", False] == f"--- page 1 ---\n{HIDDEN['hidden_table_cell'].expected_fast}"
    assert texts["pdf_read", True] == texts["pdf_read", False] + "\n" + block
    assert table_instruction not in texts["pdf_tables", False] and marker not in texts["pdf_tables", False]
    assert texts["pdf_tables", True].startswith(texts["pdf_tables", False] + "\n\n" + marker)
    assert table_instruction in texts["pdf_tables", True]
