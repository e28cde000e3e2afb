"""Published JSON Schemas: local ``$ref``s replaced by the definitions they name, and no titles.

A jsonschema-based client (the Python SDK checks every ``structuredContent`` against the tool's
``outputSchema``) resolves a ``$ref`` each time it meets one: once per page of a ``pdf_read``
answer, for example. The same schema written out in place validates the same documents and is
faster to check (``python bench/schema_refs.py FILE`` times the SDK client on both). A
definition that refers to itself, directly or through others, stays a ``$ref`` into ``$defs``.

The ``title`` keywords pydantic writes on every model and field ("Max Chars" for ``max_chars``)
are dropped (``drop_titles``): they repeat the names beside them, change no verdict, and make up
about a sixth of ``tools/list``, which a client parses (and a model may read) in full.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["drop_titles", "inline_refs"]

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
    dropped: dict[str, Any] = _drop(schema)
    return dropped


def _drop(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key in _SCHEMA_KEYWORDS:
            out[key] = [_drop(item) for item in value] if isinstance(value, list) else _drop(value)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_drop(item) for item in value]
        elif key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _drop(item) for name, item in value.items()}
        else:
            out[key] = value
    return out
