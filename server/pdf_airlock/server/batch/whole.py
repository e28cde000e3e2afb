"""A whole result from a tool's paged answers: what ``batch`` writes for one document.

A paged tool answers one part at a time (``max_chars`` of text, ``max_items`` of a list) and
hands out a ``cursor`` for the next. A pipeline has nobody to call again, so ``batch`` follows
the cursors and joins the parts here: the paged list is concatenated (a read's page cut at
a part's end is joined with its continuation into one page), per-part counts are summed, flags
are or-ed, other lists a part adds to (``Paged.appended``) are concatenated, warnings are kept
once each in order, and every other field is the first part's (the
same document and arguments give the same values). The last part's ``cursor`` is kept: null
when the result is whole.
"""

from __future__ import annotations

from typing import Any

from pdf_airlock.server.tools.base import Paged
from pdf_airlock.server.tools.registry import TOOLS

__all__ = ["join_part", "owned", "paged"]


def paged(tool: str) -> Paged | None:
    """How the tool's parts join; None for a tool that always answers whole."""
    return TOOLS[tool].paged


def owned(first: dict[str, Any]) -> dict[str, Any]:
    """A first part that ``join_part`` may change: its dict and lists copied (a result may also
    sit in the result cache); the items themselves are replaced, never changed."""
    return {name: list(value) if isinstance(value, list) else value for name, value in first.items()}


def join_part(tool: str, whole: dict[str, Any], part: dict[str, Any]) -> None:
    """Add the next part's structured result to ``whole`` (from ``owned``, joined in place)."""
    how = paged(tool)
    assert how is not None, tool
    items: list[Any] = whole[how.items]
    more: list[Any] = list(part[how.items])
    if how.join_edge is not None:
        more = how.join_edge(whole, part, items, more)
    items.extend(more)
    for name in how.summed:
        whole[name] += part[name]
    for name in how.flags:
        whole[name] = whole[name] or part[name]
    for name in how.appended:
        whole[name] = [*whole[name], *part[name]]
    seen = set(whole["warnings"])
    whole["warnings"].extend(warning for warning in part["warnings"] if warning not in seen)
    whole["cursor"] = part["cursor"]
