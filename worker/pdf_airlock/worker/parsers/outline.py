"""``pdf_outline``: the bookmarks, flattened in reading order, with resolved pages and labels.

Input: untrusted bytes. The /Outlines tree is walked by hand (First/Next links) with a visited
set, so cycles and absurd depths end the walk instead of the process; both the depth and the
number of items are capped and a cap that bites is reported, never silent.
"""

from __future__ import annotations

from typing import Any, Final

import pikepdf

from pdf_airlock.worker.pdf.destinations import action_target, page_index
from pdf_airlock.worker.pdf.opening import clean_string, open_pikepdf
from pdf_airlock.worker.pdf.pages import pikepdf_label

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_outline"

_TITLE_CHARS = 500


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    max_depth = int(args["max_depth"])
    max_items = int(args["max_items"])
    start = int(args.get("start", 0))
    position = 0  # items walked so far, including those before ``start``
    next_start = None
    warnings: list[str] = []
    items: list[dict[str, Any]] = []
    with open_pikepdf(data, args.get("password"), warnings) as pdf:
        pages = page_index(pdf)
        labels = {}
        outlines = pdf.Root.get("/Outlines")
        stack: list[tuple[Any, int]] = []
        if isinstance(outlines, pikepdf.Dictionary) and "/First" in outlines:
            stack.append((outlines.First, 1))
        seen: set[tuple[int, int]] = set()
        truncated = False
        while stack:
            node, level = stack.pop()
            if not isinstance(node, pikepdf.Dictionary) or node.objgen in seen:
                if isinstance(node, pikepdf.Dictionary):
                    warnings.append(
                        "the outline links back to an earlier item (a cycle); the walk stops there"
                    )
                continue
            seen.add(node.objgen)
            if position >= start + max_items:
                next_start = position
                break
            position += 1
            if position <= start:
                _push_children(stack, node, level, max_depth)
                continue
            page, action, _ = action_target(pdf, node, pages)
            if page is not None and page not in labels:
                labels[page] = pikepdf_label(pdf, page) if 0 <= page < len(pdf.pages) else None
            items.append(
                {
                    "title": clean_string(node.get("/Title", ""), _TITLE_CHARS),
                    "level": level,
                    "page": page + 1 if page is not None and 0 <= page < len(pdf.pages) else None,
                    "label": labels.get(page) if page is not None else None,
                    "action": action,
                }
            )
            truncated = _push_children(stack, node, level, max_depth) or truncated
        if truncated:
            warnings.append(f"items deeper than max_depth ({max_depth}) are left out")
    return {"items": items, "truncated": truncated, "next_start": next_start, "warnings": warnings[:20]}


def _push_children(stack: list[tuple[Any, int]], node: Any, level: int, max_depth: int) -> bool:
    """Queue the next sibling and the first child; True if the child is too deep to follow."""
    if "/Next" in node:
        stack.append((node.Next, level))
    if "/First" in node:
        if level < max_depth:
            stack.append((node.First, level + 1))
        else:
            return True
    return False


def warm_up(sample: bytes) -> None:
    outline = run(sample, {"max_depth": 4, "max_items": 10})
    if outline["items"][0]["page"] != 1:
        raise RuntimeError("pdf_outline failed its warm-up")
