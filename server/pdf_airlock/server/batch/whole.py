"""A whole result from a tool's paged answers: what ``batch`` writes for one document.

A paged tool answers one part at a time (``max_chars`` of text, ``max_items`` of a list) and
hands out a ``cursor`` for the next. A pipeline has nobody to call again, so ``batch`` follows
the cursors and joins the parts here: the paged list is concatenated (a ``pdf_read`` page cut at
a part's end is joined with its continuation into one page), per-part counts are summed, flags
are or-ed, warnings are kept once each in order, and every other field is the first part's (the
same document and arguments give the same values). The last part's ``cursor`` is kept: null
when the result is whole.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

__all__ = ["PAGED", "Paged", "join_part", "owned"]


@dataclass(frozen=True, slots=True)
class Paged:
    """How one tool's parts join: its paged list, the counts that cover one part only, the flags
    any part may raise."""

    items: str
    summed: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()


PAGED: Final[dict[str, Paged]] = {
    "pdf_info": Paged("pages", summed=("tokens_estimate", "scanned_pages")),
    "pdf_read": Paged("pages"),
    "pdf_outline": Paged("items", flags=("truncated",)),
    "pdf_attachments": Paged("attachments"),
    "pdf_annotations": Paged("annotations"),
    "pdf_forms": Paged("fields"),
    "pdf_search": Paged("hits", summed=("pages_searched",)),
    "pdf_images": Paged("images"),
}


def owned(first: dict[str, Any]) -> dict[str, Any]:
    """A first part that ``join_part`` may change: its dict and lists copied (a result may also
    sit in the result cache); the items themselves are replaced, never changed."""
    return {name: list(value) if isinstance(value, list) else value for name, value in first.items()}


def join_part(tool: str, whole: dict[str, Any], part: dict[str, Any]) -> None:
    """Add the next part's structured result to ``whole`` (from ``owned``, joined in place)."""
    paged = PAGED[tool]
    items: list[Any] = whole[paged.items]
    more: list[Any] = list(part[paged.items])
    if tool == "pdf_read" and items and more:
        last, first = items[-1], more[0]
        cut = not last["complete"] and first["page"] == last["page"]
        if cut and first["offset"] == last["offset"] + len(last["text"]):
            items[-1] = last | {"text": last["text"] + first["text"], "complete": first["complete"]}
            more = more[1:]
    if tool == "pdf_search" and items and more and items[-1]["page"] == more[0]["page"]:
        # The part before stopped inside this page (its next hit is this part's first), so both
        # parts searched it: count it once.
        whole["pages_searched"] -= 1
    items.extend(more)
    for name in paged.summed:
        whole[name] += part[name]
    for name in paged.flags:
        whole[name] = whole[name] or part[name]
    seen = set(whole["warnings"])
    whole["warnings"].extend(warning for warning in part["warnings"] if warning not in seen)
    whole["cursor"] = part["cursor"]
