"""Published JSON Schemas with their local ``$ref``s replaced by the definitions they name.

A jsonschema-based client (the Python SDK checks every ``structuredContent`` against the tool's
``outputSchema``) resolves a ``$ref`` each time it meets one: once per page of a ``pdf_read``
answer, for example. The same schema written out in place validates the same documents and is
faster to check (``python bench/schema_refs.py FILE`` times the SDK client on both). A
definition that refers to itself, directly or through others, stays a ``$ref`` into ``$defs``.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["inline_refs"]

_PREFIX: Final = "#/$defs/"


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
