"""Published JSON Schemas: written out in place and compact; the models stay the validators.

``tools/list`` is what every conversation with the server pays for first: a client parses it,
and a model may read all of it, before any document is opened (``tests/protocol/test_tools_list_size.py``
holds it to a byte budget). What is published is made from the pydantic models here:

- ``inline_refs``: local ``$ref``s replaced by the definitions they name. A jsonschema-based
  client (the Python SDK checks every ``structuredContent`` against the tool's ``outputSchema``)
  resolves a ``$ref`` each time it meets one: once per page of a text answer, for
  example; written out in place the schema is faster to check (a study, since retired, measured
  it: CHANGELOG). A definition that refers to itself stays a ``$ref`` into ``$defs``.
- ``drop_titles``: the ``title`` keywords pydantic writes on every model and field ("Max Chars"
  for ``max_chars``) repeat the names beside them and change no verdict.
- ``compact``: the same verdict on every instance in fewer bytes: no titles, ``examples``,
  ``writeOnly`` or ``"default": null`` (annotations no validator reads), and an ``anyOf`` of
  plainly typed branches (``str | None``) written as one schema with a list of types.
- ``call_schema``: an ``inputSchema``: ``compact``, plus what a caller never needs to be told
  left out (string length caps, ``format``, null for an argument it may leave out).
- ``result_outline``: an ``outputSchema``: a result's top-level properties with their types
  (and the descriptions the model gives them); nested objects as their type and the keys they
  always have (``required``), enums kept; no per-field prose and none of the caps the job
  child's output is held to (``pdf_airlock.server.tools.untrusted``). Looser than the model, never stricter:
  every result the model admits is valid against it, and so is a failed call's
  ``{"error": {...}}`` (the TypeScript SDK checks ``structuredContent`` even when ``isError``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

__all__ = ["call_schema", "compact", "drop_titles", "inline_refs", "result_outline"]

_PREFIX: Final = "#/$defs/"
# Keywords whose value is a schema, a list of schemas, or a map of names to schemas (JSON
# Schema 2020-12 and the older ``definitions``/``items`` forms); every other keyword's value is
# data (``enum``, ``const``, ``default``, ``examples``...) or a list of names, and is left as is.
_SCHEMA_KEYWORDS: Final = frozenset(
    {
        "items", "additionalItems", "additionalProperties", "not", "if", "then", "else",
        "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties",
    }
)  # fmt: skip
_SCHEMA_LISTS: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_SCHEMA_MAPS: Final = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)


class _Inliner:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs
        self.kept: set[str] = set()  # recursive definitions, still referred to

    def walk(self, node: Any, resolving: frozenset[str]) -> Any:
        if isinstance(node, list):
            return [self.walk(item, resolving) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(_PREFIX) and ref[len(_PREFIX) :] in self.defs:
            siblings = {key: self.walk(value, resolving) for key, value in node.items() if key != "$ref"}
            return self.resolve(ref, siblings, resolving)
        return {key: self.walk(value, resolving) for key, value in node.items() if key != "$defs"}

    def resolve(self, ref: str, siblings: dict[str, Any], resolving: frozenset[str]) -> Any:
        """The definition in place of the reference; keywords beside a ``$ref`` apply together
        with it: merged into the definition when none clashes, else beside it over ``allOf``."""
        name = ref[len(_PREFIX) :]
        if name in resolving:
            self.kept.add(name)
            return {"$ref": ref, **siblings}
        target = self.walk(self.defs[name], resolving | {name})
        if not siblings:
            return target
        if isinstance(target, dict) and not siblings.keys() & target.keys():
            return {**target, **siblings}
        return {"allOf": [target], **siblings}


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each ``{"$ref": "#/$defs/Name"}`` replaced by that definition, inlined
    recursively; ``$defs`` keeps only the recursive definitions, if any."""
    inliner = _Inliner(dict(schema.get("$defs", {})))
    inlined: dict[str, Any] = inliner.walk(schema, frozenset())
    kept: dict[str, Any] = {}
    while pending := inliner.kept - kept.keys():
        for name in pending:
            kept[name] = inliner.walk(inliner.defs[name], frozenset({name}))
    if kept:
        inlined["$defs"] = kept
    return inlined


def drop_titles(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` without its ``title`` keywords; a property or definition named "title" stays."""
    dropped: dict[str, Any] = _drop(schema, frozenset({"title"}))
    return dropped


def _drop(node: Any, keywords: frozenset[str]) -> Any:
    """``node`` without ``keywords``, in it and in every schema below it."""
    if not isinstance(node, dict):
        return node
    return _each_subschema(
        {k: v for k, v in node.items() if k not in keywords}, lambda sub: _drop(sub, keywords)
    )


def _each_subschema(node: dict[str, Any], apply: Callable[[Any], Any]) -> dict[str, Any]:
    """``node`` with ``apply`` applied to each schema it holds (not to data: ``enum``...)."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SCHEMA_KEYWORDS:
            out[key] = [apply(item) for item in value] if isinstance(value, list) else apply(value)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [apply(item) for item in value]
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: apply(item) for name, item in value.items()}
        else:
            out[key] = value
    return out


# -- compact: the same verdicts in fewer bytes ----------------------------------------------

# Annotations no validator reads, left out of published schemas (``description`` stays).
_UNREAD: Final = frozenset({"title", "examples", "writeOnly", "readOnly"})
_NUMBERS: Final = frozenset({"integer", "number"})
# The instance types each validation keyword constrains; it passes any other instance. A keyword
# not listed here (enum, const, $ref, not, anyOf...) constrains every type.
_APPLIES_TO: Final[dict[str, frozenset[str]]] = {
    **dict.fromkeys(("maxLength", "minLength", "pattern", "format"), frozenset({"string"})),
    **dict.fromkeys(
        ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"), _NUMBERS
    ),
    **dict.fromkeys(
        ("items", "prefixItems", "maxItems", "minItems", "uniqueItems", "contains"), frozenset({"array"})
    ),
    **dict.fromkeys(
        (
            "properties", "required", "additionalProperties", "patternProperties", "propertyNames",
            "maxProperties", "minProperties",
        ),
        frozenset({"object"}),
    ),
}  # fmt: skip
_ANNOTATIONS: Final = frozenset({"description", "default"})


# String length caps and ``format`` (a hint to a form UI, as "password"; 2020-12 validators
# assert no ``format`` by default) are left out of input schemas (``call_schema``).
_CALLER_UNNEEDED: Final = frozenset({"maxLength", "format"})


def call_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """A published ``inputSchema``: ``compact``, without string length caps (``maxLength``), and
    with each optional argument whose default is null advertised as its own type only. A length
    cap bounds abuse (a 4 KB path, a 1 MB query): no well-formed call comes near one. Leaving an
    argument out is how a caller asks for its default: an explicit null means the same and is
    still accepted, but no caller needs to be told. Every other keyword a client needs to build
    a valid call stays: types, ``required``, ``minLength``, ``minimum``, ``maximum``, ``enum``,
    ``pattern``, ``default``, ``additionalProperties: false``. The model stays the validator: a
    call over a cap fails with ``invalid_arguments`` naming the field."""
    compacted = compact(_drop(schema, _CALLER_UNNEEDED))
    required = set(compacted.get("required", ()))
    properties = compacted.get("properties", {})
    for name, value in properties.items():
        if name not in required and "default" not in value:
            properties[name] = _without_null(value)
    return compacted


def _without_null(node: dict[str, Any]) -> dict[str, Any]:
    kind = node.get("type")
    if not isinstance(kind, list) or "null" not in kind or len(kind) < 2:
        return node
    rest = [item for item in kind if item != "null"]
    return {**node, "type": rest[0] if len(rest) == 1 else rest}


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the same verdict on every instance, in fewer bytes: no titles, examples,
    ``writeOnly``/``readOnly`` or ``"default": null``; an ``anyOf`` of plainly typed branches
    (``{"anyOf": [{"type": "string", "maxLength": 9}, {"type": "null"}]}``) becomes one schema
    (``{"type": ["string", "null"], "maxLength": 9}``)."""
    compacted: dict[str, Any] = _compact(schema)
    return compacted


def _compact(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out = _each_subschema(
        {k: v for k, v in node.items() if k not in _UNREAD and not (k == "default" and v is None)}, _compact
    )
    branches = out.get("anyOf")
    merged = _merged(branches) if isinstance(branches, list) else None
    if merged is None or merged.keys() & out.keys():
        return out
    return {**merged, **{k: v for k, v in out.items() if k != "anyOf"}}


def _types(branch: Any) -> list[str] | None:
    kind = branch.get("type") if isinstance(branch, dict) else None
    if isinstance(kind, str):
        return [kind]
    if isinstance(kind, list) and all(isinstance(item, str) for item in kind):
        return list(kind)
    return None


def _merged(branches: list[Any]) -> dict[str, Any] | None:
    """One schema that accepts exactly what ``anyOf: branches`` accepts, or None. Possible when
    each branch has its own instance types and every other keyword of a branch either
    constrains only that branch's types or is an annotation: each instance then meets exactly
    the keywords of the one branch its type selects."""
    typed = [(own, branch) for branch in branches if (own := _types(branch)) is not None]
    types = [kind for own, _ in typed for kind in own]
    if len(typed) != len(branches) or len(set(types)) != len(types) or set(types) >= _NUMBERS:
        return None  # untyped, overlapping, or integer beside number (every integer is a number)
    keywords: dict[str, Any] = {}
    for own, branch in typed:
        for key, value in branch.items():
            if key == "type":
                continue
            if key in keywords or not _confined(key, set(own), set(types)):
                return None
            keywords[key] = value
    return {"type": types, **keywords}


def _confined(key: str, own: set[str], types: set[str]) -> bool:
    """``key`` is an annotation, or constrains no instance of ``types`` outside ``own``."""
    return key in _ANNOTATIONS or (key in _APPLIES_TO and _APPLIES_TO[key] & types <= own)


# -- result_outline: the shape of a result, for outputSchema --------------------------------


_VALUES: Final[tuple[str, ...]] = ("enum", "const")


def result_outline(schema: dict[str, Any], leave_out: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The published ``outputSchema`` of a result model's JSON Schema (see the module docstring):
    ``{"type": "object", "properties": {...}}`` without the properties in ``leave_out`` and
    without a top-level ``required``."""
    compacted = compact(inline_refs(schema))
    properties = compacted.get("properties", {})
    return {
        "type": "object",
        "properties": {
            name: _outline(value, described=True)
            for name, value in properties.items()
            if name not in leave_out
        },
    }


def _outline(node: dict[str, Any], *, described: bool = False) -> dict[str, Any]:
    """A property's type (or enum) and, top level only, description; an object's keys as its
    ``required``, with only the enums among its properties; an array's items when they are
    objects or enums (``warnings`` is just an array: of strings, as its name says)."""
    if "anyOf" in node:
        return {"anyOf": [_outline(branch) for branch in node["anyOf"]]}
    out: dict[str, Any] = {key: node[key] for key in _VALUES if key in node}
    if not out and "type" in node:
        out["type"] = node["type"]  # an enum says the type already
    if described and "description" in node:
        out["description"] = node["description"]
    items = node.get("items")
    if isinstance(items, dict) and {*_VALUES, "required", "anyOf"} & items.keys():
        # The keys say the items are objects: "type" is left to the array itself.
        out["items"] = {key: value for key, value in _outline(items).items() if key != "type"}
    if node.get("required"):
        out["required"] = list(node["required"])
    enums = {
        name: _outline(value)
        for name, value in node.get("properties", {}).items()
        if any(key in value for key in _VALUES)
    }
    if enums:
        out["properties"] = enums
    return out
