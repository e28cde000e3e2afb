"""``server.schema``: the published schemas carry no ``$ref`` and no titles, and accept and
reject exactly what the schemas pydantic generates do."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

import server.models as models
from server.schema import drop_titles, inline_refs
from server.tools import TOOLS

OUTPUT_MODELS = [
    model
    for name in models.__all__
    if name.endswith("Output")
    and name != "ToolErrorOutput"
    and isinstance(model := getattr(models, name), type)
    and issubclass(model, BaseModel)
]


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


def test_pdf_read_schema_verdicts_unchanged() -> None:
    from pydantic import RootModel

    union = RootModel[models.PdfReadOutput | models.ToolErrorOutput]  # type: ignore[name-defined]
    original = {"type": "object", **union.model_json_schema()}
    page = {"page": 1, "text": "x", "offset": 0, "complete": True}
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
    error = {"error": {"code": "malformed", "message": "m", "retryable": False, "details": {}}}
    instances = [
        answer,
        error,
        answer | {"pages": [page | {"page": 0}]},  # minimum 1
        answer | {"pages": [page | {"extra": 1}]},  # PageText forbids extra keys
        answer | {"engine": "other"},
        {"error": {"code": "x"}},
        answer | {"cursor": 3},
    ]
    assert _agree(original, models.output_schema(models.PdfReadOutput), instances) == [
        True,
        True,
        False,
        False,
        False,
        False,
        False,
    ]


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
    assert _title_keywords(TOOLS[name].input_model.model_json_schema())


def test_a_property_named_title_stays() -> None:
    outline = TOOLS["pdf_outline"].to_mcp().output_schema
    assert outline is not None
    result = next(branch for branch in outline["anyOf"] if "items" in branch.get("properties", {}))
    item = result["properties"]["items"]["items"]
    assert item["properties"]["title"] == {"maxLength": 4096, "type": "string"}
    assert "title" in item["required"]


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
