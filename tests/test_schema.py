"""``server.schema.inline_refs``: the published output schemas carry no ``$ref`` and accept and
reject exactly what the schemas pydantic generates do."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from pydantic import BaseModel

import server.models as models
from server.schema import inline_refs

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
