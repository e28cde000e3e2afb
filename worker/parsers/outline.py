"""``pdf_outline``: the bookmarks, flattened in reading order, with resolved pages and labels.

Input: untrusted bytes. The /Outlines tree is walked by hand (First/Next links) with a visited
set, so cycles and absurd depths end the walk instead of the process; both the depth and the
number of items are capped and a cap that bites is reported, never silent.
"""

from __future__ import annotations

from typing import Any

import pikepdf

from worker.parsers.common import clean_string, open_pikepdf

__all__ = ["run"]

_TITLE_CHARS = 500


def _page_index(pdf: pikepdf.Pdf) -> dict[tuple[int, int], int]:
    return {page.obj.objgen: number for number, page in enumerate(pdf.pages)}


def _named_destinations(pdf: pikepdf.Pdf) -> Any:
    names = pdf.Root.get("/Names")
    if isinstance(names, pikepdf.Dictionary) and "/Dests" in names:
        return pikepdf.NameTree(names.Dests)
    return pdf.Root.get("/Dests")


def _resolve(
    pdf: pikepdf.Pdf, item: pikepdf.Dictionary, pages: dict[tuple[int, int], int]
) -> tuple[int | None, str]:
    """(0-based page or None, action kind) of an outline item."""
    destination = item.get("/Dest")
    action = "goto"
    if destination is None and isinstance(item.get("/A"), pikepdf.Dictionary):
        kind = str(item.A.get("/S", "")).lstrip("/")
        action = kind.lower() or "unknown"
        destination = item.A.get("/D") if kind == "GoTo" else None
    if isinstance(destination, (pikepdf.String, pikepdf.Name)):
        table = _named_destinations(pdf)
        key = str(destination)
        destination = table.get(key) if table is not None and key in table else None
        if isinstance(destination, pikepdf.Dictionary):
            destination = destination.get("/D")
    if isinstance(destination, pikepdf.Array) and len(destination) > 0:
        target = destination[0]
        if isinstance(target, pikepdf.Dictionary):
            return pages.get(target.objgen), action
        if isinstance(target, int):
            return int(target), action
    return None, action


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    max_depth = int(args["max_depth"])
    max_items = int(args["max_items"])
    warnings: list[str] = []
    items: list[dict[str, Any]] = []
    with open_pikepdf(data, args.get("password")) as pdf:
        pages = _page_index(pdf)
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
            if len(items) >= max_items:
                truncated = True
                break
            page, action = _resolve(pdf, node, pages)
            if page is not None and page not in labels:
                labels[page] = clean_string(pdf.pages[page].label, 64) if 0 <= page < len(pdf.pages) else None
            items.append(
                {
                    "title": clean_string(node.get("/Title", ""), _TITLE_CHARS),
                    "level": level,
                    "page": page + 1 if page is not None and 0 <= page < len(pdf.pages) else None,
                    "label": labels.get(page) if page is not None else None,
                    "action": action,
                }
            )
            if "/Next" in node:
                stack.append((node.Next, level))
            if "/First" in node:
                if level < max_depth:
                    stack.append((node.First, level + 1))
                else:
                    truncated = True
        if truncated:
            warnings.append(
                f"the outline was cut at {max_items} items or depth {max_depth} (max_items, max_depth)"
            )
    return {"items": items, "truncated": truncated, "warnings": warnings[:20]}
