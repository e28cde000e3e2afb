"""``pdf_airlock.server.tools.schema``: the published schemas carry no ``$ref`` and no titles; input schemas
accept and reject what pydantic's do (but for the length caps and nulls ``call_schema`` leaves
out); output schemas are looser than the models, never stricter; and every real result of every
tool, success or failure, is valid against its tool's advertised outputSchema over real stdio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

import pdf_airlock.server.tools.models as models
from pdf_airlock.server.tools.read import PdfReadOutput
from pdf_airlock.server.tools.registry import TOOLS
from pdf_airlock.server.tools.schema import call_schema, compact, drop_titles, inline_refs

OUTPUT_MODELS = [spec.output_model for spec in TOOLS.values()]


def _agree(original: dict[str, Any], inlined: dict[str, Any], instances: list[Any]) -> list[bool]:
    """Each instance's verdict, asserting both schemas give the same one."""
    Draft202012Validator.check_schema(inlined)
    verdicts = []
    for instance in instances:
        before = Draft202012Validator(original).is_valid(instance)
        assert Draft202012Validator(inlined).is_valid(instance) == before, instance
        verdicts.append(before)
    return verdicts


@pytest.mark.parametrize("model", OUTPUT_MODELS, ids=lambda model: model.__name__)
def test_published_output_schemas_have_no_refs(model: type[BaseModel]) -> None:
    schema = models.output_schema(model)
    Draft202012Validator.check_schema(schema)
    assert "$ref" not in json.dumps(schema) and "$defs" not in schema


def _pydantic_schema(model: type[BaseModel]) -> dict[str, Any]:
    """What pydantic generates for ``model``, before ``pdf_airlock.server.tools.schema`` (``DocumentInput``
    publishes its own)."""
    if issubclass(model, models.DocumentInput):
        return super(models.DocumentInput, model).model_json_schema()
    return model.model_json_schema()


def _read_answer(**changes: Any) -> dict[str, Any]:
    page = {
        "page": 1,
        "text": "x",
        "offset": 0,
        "complete": True,
        "text_layer": "ok",
        "text_source": "text_layer",
        "ocr_confidence": None,
    }
    answer = {
        "source": "a.pdf",
        "sha256": "0" * 64,
        "size_bytes": 10,
        "engine": "fast",
        "page_count": 1,
        "selected_pages": 1,
        "pages": [page],
        "cursor": None,
        "warnings": [],
    }
    return answer | changes


def test_pdf_read_outline_is_looser_never_stricter() -> None:
    """Everything the model's own schema admits, the outline admits; the outline still rejects
    a wrong type, a wrong enum value or a missing key of a nested object."""
    original = {"type": "object", **_pydantic_schema(PdfReadOutput)}
    outline = models.output_schema(PdfReadOutput)
    page = _read_answer()["pages"][0]
    error = {"error": {"code": "malformed", "message": "m", "retryable": False, "details": {}}}
    admitted = [
        _read_answer(),
        _read_answer(cursor="c1", warnings=["w"], engine="layout"),
        _read_answer(pages=[page | {"text_layer": "none"}, page | {"page": 2, "complete": False}]),
    ]
    for instance in admitted:
        assert Draft202012Validator(original).is_valid(instance), instance
        assert Draft202012Validator(outline).is_valid(instance), instance
    assert Draft202012Validator(outline).is_valid(error)  # the TypeScript SDK checks errors too
    rejected = [
        _read_answer(engine="other"),
        _read_answer(cursor=3),
        _read_answer(pages={"page": 1}),
        _read_answer(pages=[page | {"text_layer": "garbled"}]),
        _read_answer(pages=[{key: value for key, value in page.items() if key != "text_layer"}]),
        _read_answer(page_count="1"),
        _read_answer(warnings="none"),
    ]
    for instance in rejected:
        assert not Draft202012Validator(original).is_valid(instance), instance
        assert not Draft202012Validator(outline).is_valid(instance), instance
    # looser: caps and extra keys are the model's to refuse, not the outline's
    assert not Draft202012Validator(original).is_valid(_read_answer(pages=[page | {"page": 0}]))
    assert Draft202012Validator(outline).is_valid(_read_answer(pages=[page | {"page": 0}]))


# Arguments each tool's schema is tried on: each is merged into a base call.
ARGUMENT_CASES: list[dict[str, Any]] = [
    {},
    {"pages": "1-3,7"},
    {"pages": 2},
    {"pages": True},
    {"pages": "1;2"},
    {"pages": None},
    {"path": None},
    {"path": 7},
    {"password": "pw"},
    {"password": None},
    {"cursor": "c" * 600},
    {"path": "p" * 5000},
    {"unknown": 1},
    {"engine": "layout"},
    {"engine": "other"},
    {"max_chars": 0},
    {"max_items": 1},
    {"max_items": 10**9},
    {"extract": {"page": 1, "name": "Im0"}},
    {"extract": {"page": 0, "name": "Im0"}},
    {"extract": {"page": 1}},
    {"extract": None},
    {"extract": "a.txt"},
    {"query": ""},
    {"regex": "yes"},
    {"page": "iv"},
    {"page": 3},
    {"page": 3.5},
    {"dpi": 17},
    {"max_pixels": 25_000_001},
]


def _calls(name: str) -> list[dict[str, Any]]:
    base: dict[str, Any] = {"path": "a.pdf"} | ({"query": "x"} if name == "pdf_search" else {})
    return [base | case for case in ARGUMENT_CASES]


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_compact_input_schema_has_pydantics_verdicts(name: str) -> None:
    original = _pydantic_schema(TOOLS[name].input_model)
    compacted = compact(inline_refs(original))
    verdicts = _agree(original, compacted, _calls(name))
    assert True in verdicts and False in verdicts
    assert "anyOf" not in json.dumps(compacted)  # every Optional[...] became a list of types


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_published_input_schema_differs_only_in_caps_and_nulls(name: str) -> None:
    """The published inputSchema gives pydantic's verdict on every call but one over a string
    length cap (the model refuses it: invalid_arguments) or an explicit null (the model takes it
    as the default)."""
    model = TOOLS[name].input_model
    original = _pydantic_schema(model)
    published = TOOLS[name].to_mcp().input_schema
    assert published == call_schema(inline_refs(original))
    Draft202012Validator.check_schema(published)
    for call in _calls(name):
        before = Draft202012Validator(original).is_valid(call)
        after = Draft202012Validator(published).is_valid(call)
        if before == after:
            continue
        if after:  # over a cap: the model, which validates every call, refuses it
            assert any(isinstance(value, str) and len(value) > 500 for value in call.values()), call
            with pytest.raises(ValidationError):
                model.model_validate(call)
        else:  # an explicit null: the model takes it as the argument left out
            assert None in call.values(), call
            left_out = {key: value for key, value in call.items() if value is not None}
            assert _outcome(model, call) == _outcome(model, left_out), call


def _outcome(model: type[BaseModel], call: dict[str, Any]) -> Any:
    """The validated arguments, or the kinds of error the model raises."""
    try:
        return model.model_validate(call).model_dump()
    except ValidationError as error:
        return [(item["type"], item["loc"]) for item in error.errors()]


def test_merging_keeps_branches_that_would_change_a_verdict() -> None:
    schema = {
        "type": "object",
        "properties": {
            "number": {"anyOf": [{"type": "integer", "maximum": 3}, {"type": "number"}]},
            "choice": {"anyOf": [{"enum": ["a", "b"]}, {"type": "null"}]},
            "shared": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "array", "minLength": 2}]},
            "plain": {"anyOf": [{"type": "string", "maxLength": 2}, {"type": "null"}], "default": None},
            "items": {"anyOf": [{"type": "array", "items": {"type": "integer"}}, {"type": "integer"}]},
        },
    }
    compacted = compact(schema)
    props = compacted["properties"]
    assert props["number"] == schema["properties"]["number"]  # 5 is an integer and a number
    assert props["choice"] == schema["properties"]["choice"]  # enum constrains every type
    assert props["shared"] == schema["properties"]["shared"]  # minLength says nothing of arrays
    assert props["plain"] == {"type": ["string", "null"], "maxLength": 2}
    assert props["items"] == {"type": ["array", "integer"], "items": {"type": "integer"}}
    instances = [
        {"number": 5}, {"number": 5.5}, {"choice": None}, {"choice": "c"}, {"shared": ["x"]},
        {"plain": "abc"}, {"plain": None}, {"items": 3}, {"items": ["x"]}, {"items": [1]},
    ]  # fmt: skip
    verdicts = _agree(schema, compacted, instances)
    assert verdicts == [True, True, True, False, True, False, True, True, False, True]


def test_recursive_definition_stays_a_reference() -> None:
    schema = {
        "$ref": "#/$defs/Node",
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}},
                "additionalProperties": False,
            }
        },
    }
    inlined = inline_refs(schema)
    assert inlined["$defs"] == {"Node": schema["$defs"]["Node"]}
    assert inlined["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    instances = [{"children": [{"children": []}]}, {"children": [{"other": 1}]}, {"children": 1}]
    assert _agree(schema, inlined, instances) == [True, False, False]


def test_keywords_beside_a_ref_still_apply() -> None:
    schema = {
        "type": "object",
        "properties": {
            "merged": {"$ref": "#/$defs/Count", "description": "no clash: merged in"},
            "wrapped": {"$ref": "#/$defs/Count", "maximum": 5},  # clashes with Count's maximum
        },
        "$defs": {"Count": {"type": "integer", "minimum": 0, "maximum": 10}},
    }
    inlined = inline_refs(schema)
    assert inlined["properties"]["merged"] == {
        "type": "integer",
        "minimum": 0,
        "maximum": 10,
        "description": "no clash: merged in",
    }
    assert inlined["properties"]["wrapped"] == {"allOf": [schema["$defs"]["Count"]], "maximum": 5}
    instances = [{"merged": 10, "wrapped": 5}, {"wrapped": 6}, {"wrapped": -1}, {"merged": 11}]
    assert _agree(schema, inlined, instances) == [True, False, False, False]


def _title_keywords(node: Any, path: str = "") -> list[str]:
    """Where a ``title`` keyword sits in a schema (a property named "title" is not one)."""
    found = []
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "title":
                found.append(path)
            elif key in ("properties", "$defs"):
                for name, item in value.items():
                    found += _title_keywords(item, f"{path}/{key}/{name}")
            elif key not in ("enum", "const", "default", "examples", "required"):
                found += _title_keywords(value, f"{path}/{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            found += _title_keywords(item, f"{path}/{index}")
    return found


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_published_schemas_have_no_titles(name: str) -> None:
    tool = TOOLS[name].to_mcp()
    assert tool.input_schema and tool.output_schema
    assert _title_keywords(tool.input_schema) == []
    assert _title_keywords(tool.output_schema) == []
    Draft202012Validator.check_schema(tool.input_schema)
    # what pydantic generates has them: the check above can fail
    assert _title_keywords(_pydantic_schema(TOOLS[name].input_model))


def test_a_property_named_title_stays() -> None:
    outline = TOOLS["pdf_outline"].to_mcp().output_schema
    assert outline is not None
    assert "title" in outline["properties"]["items"]["items"]["required"]


def test_drop_titles_leaves_data_and_names() -> None:
    schema = {
        "title": "Top",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string", "default": "t"},
            "kind": {"enum": [{"title": "data"}], "const": {"title": "data"}, "examples": [{"title": 1}]},
            "list": {"type": "array", "items": {"title": "Item", "type": "integer"}},
            "pair": {"prefixItems": [{"title": "A"}, {"title": "B"}]},
            "either": {"anyOf": [{"title": "X", "type": "null"}, {"$ref": "#/$defs/title"}]},
        },
        "required": ["title"],
        "additionalProperties": {"title": "Extra"},
        "$defs": {"title": {"title": "Def", "type": "string"}},
    }
    assert drop_titles(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "default": "t"},
            "kind": {"enum": [{"title": "data"}], "const": {"title": "data"}, "examples": [{"title": 1}]},
            "list": {"type": "array", "items": {"type": "integer"}},
            "pair": {"prefixItems": [{}, {}]},
            "either": {"anyOf": [{"type": "null"}, {"$ref": "#/$defs/title"}]},
        },
        "required": ["title"],
        "additionalProperties": {},
        "$defs": {"title": {"type": "string"}},
    }
    instances = [{"title": "x"}, {"title": 1}, {}, {"title": "x", "list": ["a"]}, {"title": "x", "other": 2}]
    assert _agree(schema, drop_titles(schema), instances) == [True, False, False, False, True]


# -- real results over real stdio ---------------------------------------------------------

TEST_PASSWORD = "s3cret-pass"
# (tool, arguments, whether the call succeeds): every tool, nested objects present and absent,
# paged answers with and without a cursor, extracted files and images, and failures.
REAL_CALLS: list[tuple[str, dict[str, Any], bool]] = [
    ("pdf_info", {"path": "hello.pdf"}, True),
    ("pdf_info", {"path": "xmp.pdf"}, True),
    ("pdf_info", {"path": "damaged.pdf"}, True),
    ("pdf_info", {"path": "encrypted.pdf", "password": TEST_PASSWORD}, True),
    ("pdf_info", {"path": "structured.pdf", "pages": "ii-2"}, True),
    ("pdf_read", {"path": "hello.pdf"}, True),
    ("pdf_read", {"path": "hello.pdf", "engine": "layout", "pages": 2}, True),
    ("pdf_read", {"path": "hello.pdf", "max_chars": 5}, True),
    ("pdf_read", {"path": "images.pdf"}, True),
    ("pdf_outline", {"path": "structured.pdf"}, True),
    ("pdf_outline", {"path": "structured.pdf", "max_items": 1}, True),
    ("pdf_attachments", {"path": "structured.pdf", "extract": "notes.txt"}, True),
    ("pdf_attachments", {"path": "hello.pdf"}, True),
    ("pdf_annotations", {"path": "interactive.pdf"}, True),
    ("pdf_forms", {"path": "interactive.pdf"}, True),
    ("pdf_forms", {"path": "forms.pdf"}, True),
    ("pdf_security", {"path": "active.pdf"}, True),
    ("pdf_security", {"path": "hidden.pdf"}, True),
    ("pdf_security", {"path": "encrypted.pdf", "password": TEST_PASSWORD}, True),
    ("pdf_search", {"path": "hello.pdf", "query": "page", "max_results": 1}, True),
    ("pdf_search", {"path": "hello.pdf", "query": "nowhere"}, True),
    ("pdf_render", {"path": "hello.pdf", "page": 2, "dpi": 36}, True),
    ("pdf_images", {"path": "images.pdf", "extract": {"page": 2, "name": "Fm0/Inner"}}, True),
    ("pdf_images", {"path": "images.pdf", "max_items": 1}, True),
    ("pdf_markdown", {"path": "report-structured.pdf", "max_chars": 300}, True),
    ("pdf_markdown", {"path": "hello.pdf"}, True),
    ("pdf_tables", {"path": "report-structured.pdf"}, True),
    ("pdf_tables", {"path": "report-structured.pdf", "max_tables": 1}, True),
    ("pdf_read", {"path": "hidden.pdf", "include_hidden": True}, True),
    ("pdf_markdown", {"path": "hidden.pdf", "include_hidden": True}, True),
    ("pdf_tables", {"path": "hidden.pdf", "include_hidden": True}, True),
    ("pdf_search", {"path": "hidden.pdf", "query": "instructions", "include_hidden": True}, True),
    ("pdf_read", {"path": "/etc/passwd"}, False),
    ("pdf_info", {"path": "missing.pdf"}, False),
    ("pdf_search", {"path": "hello.pdf"}, False),
    ("pdf_images", {"path": "images.pdf", "extract": {"page": 1, "name": "Photo"}}, False),
    ("pdf_security", {"path": "encrypted.pdf", "password": "wrong"}, False),
]


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import markdown_docs
    import pdfs
    import realworld

    from tests.hostile.generate import active_content

    folder = tmp_path_factory.mktemp("schema")
    pdfs.write(folder / "hello.pdf", pdfs.text_pdf(["Page one.", "Page two.", "Page three."]))
    pdfs.write(folder / "encrypted.pdf", pdfs.encrypted_pdf(TEST_PASSWORD, "Encrypted body text"))
    pdfs.write(folder / "structured.pdf", pdfs.structured_pdf())
    pdfs.write(folder / "interactive.pdf", pdfs.interactive_pdf())
    pdfs.write(folder / "forms.pdf", realworld.forms_pdf())
    pdfs.write(folder / "images.pdf", pdfs.images_pdf())
    pdfs.write(folder / "xmp.pdf", pdfs.xmp_pdf())
    pdfs.write(folder / "damaged.pdf", pdfs.damaged_xref_pdf())
    pdfs.write(folder / "hidden.pdf", pdfs.hidden_text_pdf())
    pdfs.write(folder / "active.pdf", active_content())
    markdown_docs.build(folder)
    return folder


@pytest.mark.anyio
async def test_every_real_result_is_valid_against_the_advertised_output_schema(documents: Path) -> None:
    """Results of every tool (the SDK client checks successes itself; failures too, here, as the
    TypeScript SDK does), and each nested object of an outline met non-null at least once."""
    from conftest import connect

    async with connect(documents) as client:
        schemas = {tool.name: tool.output_schema for tool in (await client.list_tools()).tools}
        results = [(name, args, ok, await client.call_tool(name, args)) for name, args, ok in REAL_CALLS]
    assert {name for name, _, ok, _ in results if ok} == set(TOOLS)
    met: set[tuple[str, str]] = set()
    for name, args, ok, result in results:
        assert result.is_error is not ok, (name, args, result.content)
        content = result.structured_content
        errors = sorted(Draft202012Validator(schemas[name]).iter_errors(content), key=str)
        assert errors == [], (name, args, [error.message for error in errors])
        met |= {(name, key) for key, value in content.items() if value not in (None, [], {})}
    for name, schema in schemas.items():
        nested = {
            key for key, value in schema["properties"].items() if "required" in value or "items" in value
        }
        assert nested <= {key for tool, key in met if tool == name}, name
