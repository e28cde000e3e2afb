"""The models a job child's result must satisfy (each tool module's, on ``UntrustedModel``), in process:
strict types, no extra keys at any depth, and a cap on every string, list and mapping.

The models are declarative, so mutation testing (scripts/mutation.sh) has nothing to mutate in
them: these tests pin the contract instead, field by field where a cap guards the supervisor,
and by walking every model's schema so that a new field without a cap fails here.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from pdf_airlock.server.tools.attachments import Attachment
from pdf_airlock.server.tools.forms import FormField
from pdf_airlock.server.tools.info import PdfInfoUntrusted
from pdf_airlock.server.tools.read import PdfReadUntrusted
from pdf_airlock.server.tools.read_two_ended import StreamLine
from pdf_airlock.server.tools.registry import TOOLS
from pdf_airlock.server.tools.render import PdfRenderUntrusted
from pdf_airlock.server.tools.search import SearchHit
from pdf_airlock.server.tools.untrusted import UntrustedModel

MAX_TEXT = 4096
MAX_WARNINGS = 100
SHA256 = "0123456789abcdef" * 4


def _subclasses(model: type[BaseModel]) -> list[type[BaseModel]]:
    return [model, *(sub for direct in model.__subclasses__() for sub in _subclasses(direct))]


# Every model of every tool module (the registry imports them all) and of the streamed read.
MODELS = _subclasses(UntrustedModel)[1:]
assert TOOLS and StreamLine in MODELS

# Fields with no cap of their own: a page's text and an extracted file have no fixed size, and are bounded by
# the job's whole result cap (--max-result-mb) instead (a page's Markdown too). A form field's list value is
# the one list without a cap.
UNCAPPED = {
    ("ExtractedFile", "data_base64", "string"),
    ("PageText", "text", "string"),
    ("MarkdownPage", "text", "string"),
    ("StreamedPage", "text", "string"),
    # Published as a plain string; the Literal of nine reasons validates it.
    ("HiddenRun", "reason", "string"),
}

READ: dict[str, Any] = {
    "engine": "fast",
    "page_count": 2,
    "selected_pages": 1,
    "pages": [
        {
            "page": 1,
            "text": "hello",
            "offset": 0,
            "complete": True,
            "text_layer": "ok",
            "text_source": "text_layer",
            "ocr_confidence": None,
        }
    ],
    "next": {"index": 1, "offset": 0},
    "warnings": ["one warning"],
}

INFO: dict[str, Any] = {
    "page_count": 1,
    "pdf_version": "1.7",
    "encrypted": False,
    "encryption": None,
    "producer": "a producer",
    "metadata": {"Title": "a title"},
    "xmp": None,
    "metadata_conflicts": [],
    "features": None,
    "repair": None,
    "tokens_estimate": 3,
    "scanned_pages": 0,
    "pages": [
        {
            "page": 1,
            "label": "i",
            "width_pt": 612,
            "height_pt": 792.5,
            "rotation": 0,
            "has_text": True,
            "chars": 12,
            "tokens_estimate": 3,
            "scanned": False,
        }
    ],
    "next_start": None,
    "warnings": [],
}

ATTACHMENT: dict[str, Any] = {
    "name": "../../etc/passwd",
    "safe_name": "passwd",
    "path_traversal": True,
    "size": 10,
    "mime_type": None,
    "sha256": SHA256,
    "created": None,
    "modified": None,
    "description": None,
}


def with_value(document: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``document`` with the value at ``path`` replaced (or added)."""
    changed = copy.deepcopy(document)
    target: Any = changed
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return changed


def accepts(model: type[BaseModel], document: dict[str, Any]) -> bool:
    try:
        model.model_validate(document)
    except ValidationError:
        return False
    return True


def test_the_samples_are_valid() -> None:
    for model, document in ((PdfReadUntrusted, READ), (PdfInfoUntrusted, INFO), (Attachment, ATTACHMENT)):
        assert accepts(model, document), model.__name__


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_every_model_is_strict_and_closed(model: type[BaseModel]) -> None:
    assert model.model_config.get("extra") == "forbid"
    assert model.model_config.get("strict") is True


@pytest.mark.parametrize(
    "path",
    [("surprise",), ("pages", 0, "surprise"), ("next", "surprise")],
    ids=["top", "in-a-list", "nested"],
)
def test_an_extra_key_at_any_depth_is_refused(path: tuple[str | int, ...]) -> None:
    assert not accepts(PdfReadUntrusted, with_value(READ, path, 1))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("page_count",), "2"),  # no coercion from strings
        (("page_count",), True),  # nor from booleans
        (("page_count",), 2.0),
        (("pages", 0, "complete"), 1),
        (("pages", 0, "text"), 5),
        (("engine",), "ocr"),
        (("pages", 0, "page"), 0),  # pages count from 1
        (("pages", 0, "offset"), -1),
        (("next", "index"), -1),
        (("page_count",), -1),
        (("pages",), None),
    ],
)
def test_a_wrong_type_or_range_is_refused(path: tuple[str | int, ...], value: Any) -> None:
    assert not accepts(PdfReadUntrusted, with_value(READ, path, value))


def test_a_whole_number_is_a_float_but_a_boolean_is_not() -> None:
    """JSON writes 612.0 as 612: a float field takes an int, never a bool."""
    assert accepts(PdfInfoUntrusted, with_value(INFO, ("pages", 0, "width_pt"), 612))
    assert not accepts(PdfInfoUntrusted, with_value(INFO, ("pages", 0, "width_pt"), True))
    assert not accepts(PdfInfoUntrusted, with_value(INFO, ("pages", 0, "width_pt"), -1.0))


@pytest.mark.parametrize(
    ("model", "document", "path", "cap"),
    [
        (PdfReadUntrusted, READ, ("warnings", 0), MAX_TEXT),
        (PdfInfoUntrusted, INFO, ("producer",), MAX_TEXT),
        (PdfInfoUntrusted, INFO, ("metadata", "Title"), MAX_TEXT),
        (PdfInfoUntrusted, INFO, ("pdf_version",), 16),
        (PdfInfoUntrusted, INFO, ("pages", 0, "label"), 64),
        (Attachment, ATTACHMENT, ("name",), 1000),
        (Attachment, ATTACHMENT, ("safe_name",), 255),
    ],
)
def test_string_caps_are_exact(
    model: type[BaseModel], document: dict[str, Any], path: tuple[str | int, ...], cap: int
) -> None:
    assert accepts(model, with_value(document, path, "x" * cap))
    assert not accepts(model, with_value(document, path, "x" * (cap + 1)))


@pytest.mark.parametrize(
    ("model", "document", "path", "item", "cap"),
    [
        (PdfReadUntrusted, READ, ("warnings",), "w", MAX_WARNINGS),
        (PdfInfoUntrusted, INFO, ("warnings",), "w", MAX_WARNINGS),
        (PdfInfoUntrusted, INFO, ("pages",), INFO["pages"][0], 1000),
        (PdfInfoUntrusted, INFO, ("metadata_conflicts",), {"field": "Title", "info": "a", "xmp": "b"}, 16),
    ],
)
def test_list_caps_are_exact(
    model: type[BaseModel], document: dict[str, Any], path: tuple[str | int, ...], item: Any, cap: int
) -> None:
    assert accepts(model, with_value(document, path, [item] * cap))
    assert not accepts(model, with_value(document, path, [item] * (cap + 1)))


def test_mapping_caps_are_exact() -> None:
    """At most 64 metadata entries, with keys of at most 128 characters."""
    many = {f"Key{n}": "v" for n in range(64)}
    assert accepts(PdfInfoUntrusted, with_value(INFO, ("metadata",), many))
    assert not accepts(PdfInfoUntrusted, with_value(INFO, ("metadata",), many | {"Key64": "v"}))
    assert accepts(PdfInfoUntrusted, with_value(INFO, ("metadata",), {"k" * 128: "v"}))
    assert not accepts(PdfInfoUntrusted, with_value(INFO, ("metadata",), {"k" * 129: "v"}))


@pytest.mark.parametrize(
    ("digest", "valid"),
    [
        (SHA256, True),
        (SHA256.upper(), False),
        (SHA256[:-1], False),
        (SHA256 + "0", False),
        (SHA256 + "\n", False),
        (SHA256[:-1] + "g", False),
    ],
)
def test_an_attachment_digest_is_exactly_64_lowercase_hex(digest: str, valid: bool) -> None:
    assert accepts(Attachment, with_value(ATTACHMENT, ("sha256",), digest)) is valid


@pytest.mark.parametrize(("count", "valid"), [(3, False), (4, True), (5, False)])
def test_a_search_hit_box_has_four_numbers(count: int, valid: bool) -> None:
    hit = {
        "page": 1,
        "label": "1",
        "text": "t",
        "offset": 0,
        "before": "",
        "after": "",
        "rects": [[0.0] * count],
    }
    assert accepts(SearchHit, hit) is valid


def test_a_render_needs_a_positive_size_and_dpi() -> None:
    render = {
        "page": 1,
        "label": "1",
        "page_count": 1,
        "width_px": 1,
        "height_px": 1,
        "dpi": 72.0,
        "png_base64": "iVBORw0KGgo=",
        "warnings": [],
    }
    assert accepts(PdfRenderUntrusted, render)
    for field, value in (("width_px", 0), ("height_px", 0), ("dpi", 0.0), ("page_count", 0)):
        assert not accepts(PdfRenderUntrusted, with_value(render, (field,), value)), field


def test_a_form_value_is_text_a_list_of_text_or_nothing() -> None:
    field: dict[str, Any] = {
        "name": "a",
        "label": None,
        "type": "text",
        "export_values": [],
        "value": None,
        "options": [],
        "flags": 0,
        "page": None,
        "rect": None,
    }
    good: list[Any] = ["x" * MAX_TEXT, ["x" * 1000], ["x"] * 500, None]
    bad: list[Any] = ["x" * (MAX_TEXT + 1), ["x" * 1001], ["x"] * 501, 5, {"a": "b"}]
    assert [accepts(FormField, with_value(field, ("value",), value)) for value in good + bad] == [True] * len(
        good
    ) + [False] * len(bad)


def test_a_stream_line_is_a_selection_or_a_page_and_nothing_else() -> None:
    page = {
        "position": 0,
        "page": 1,
        "text": "t",
        "offset": 0,
        "complete": True,
        "text_layer": "none",
        "text_source": "ocr",
        "ocr_confidence": 40,
        "warnings": [],
    }
    assert accepts(StreamLine, {"selection": {"page_count": 1, "selected_pages": 1}})
    assert accepts(StreamLine, {"page": page})
    assert not accepts(StreamLine, {"progress": 1})
    assert not accepts(StreamLine, {"selection": {"page_count": 10_000_001, "selected_pages": 1}})
    assert not accepts(StreamLine, {"page": page | {"offset": (1 << 40) + 1}})
    assert not accepts(StreamLine, {"page": page | {"text_layer": "maybe"}})
    assert not accepts(StreamLine, {"page": page | {"ocr_confidence": 101}})
    assert not accepts(StreamLine, {"page": page | {"text_source": "guess"}})


def _uncapped(schema: dict[str, Any], model: str, field: str, found: set[tuple[str, str, str]]) -> None:
    """Add (model, field, kind) for each string, array or mapping in ``schema`` without a cap."""
    kind = schema.get("type")
    if kind == "string" and not {"maxLength", "pattern", "enum", "const"} & schema.keys():
        found.add((model, field, "string"))
    if kind == "array":
        if "maxItems" not in schema:
            found.add((model, field, "array"))
        _uncapped(schema.get("items", {}), model, field, found)
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        if "maxProperties" not in schema:
            found.add((model, field, "object"))
        _uncapped(schema["additionalProperties"], model, field, found)
        _uncapped(schema.get("propertyNames", {}), model, field, found)
    for option in schema.get("anyOf", []):
        _uncapped(option, model, field, found)


def test_every_string_list_and_mapping_has_a_cap() -> None:
    """Nested models are checked as models of their own (each is in ``__all__``)."""
    found: set[tuple[str, str, str]] = set()
    for model in MODELS:
        for field, schema in model.model_json_schema()["properties"].items():
            _uncapped(schema, model.__name__, field, found)
    assert found == UNCAPPED
