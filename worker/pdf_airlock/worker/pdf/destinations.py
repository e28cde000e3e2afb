"""Resolving where an outline item, link or action points: page index and action kind.

Input: untrusted object graphs (pikepdf objects). Named destinations are looked up in the
/Names /Dests name tree or the old /Dests dictionary; anything that does not resolve to a page
of this document gives ``None``.
"""

from __future__ import annotations

from typing import Any

import pikepdf

__all__ = ["action_target", "page_index"]


def page_index(pdf: pikepdf.Pdf) -> dict[tuple[int, int], int]:
    """objgen of each page object -> 0-based page number."""
    return {page.obj.objgen: number for number, page in enumerate(pdf.pages)}


def _named_destinations(pdf: pikepdf.Pdf) -> Any:
    names = pdf.Root.get("/Names")
    if isinstance(names, pikepdf.Dictionary) and "/Dests" in names:
        return pikepdf.NameTree(names.Dests)
    return pdf.Root.get("/Dests")


def _page_of(pdf: pikepdf.Pdf, destination: Any, pages: dict[tuple[int, int], int]) -> int | None:
    if isinstance(destination, (pikepdf.String, pikepdf.Name)):
        table = _named_destinations(pdf)
        key = str(destination)
        destination = table.get(key) if table is not None and key in table else None
        if isinstance(destination, pikepdf.Dictionary):
            destination = destination.get("/D")
    if isinstance(destination, pikepdf.Array) and len(destination) > 0:
        target = destination[0]
        if isinstance(target, pikepdf.Dictionary):
            return pages.get(target.objgen)
        if isinstance(target, int) and 0 <= int(target) < len(pages):
            return int(target)
    return None


def action_target(
    pdf: pikepdf.Pdf, holder: pikepdf.Dictionary, pages: dict[tuple[int, int], int]
) -> tuple[int | None, str, pikepdf.Dictionary | None]:
    """(0-based page or None, action kind, the action dictionary) for an item with /Dest or /A."""
    if "/Dest" in holder:
        return _page_of(pdf, holder.Dest, pages), "goto", None
    action = holder.get("/A")
    if not isinstance(action, pikepdf.Dictionary):
        return None, "none", None
    kind = str(action.get("/S", "")).lstrip("/").lower() or "unknown"
    page = _page_of(pdf, action.get("/D"), pages) if kind == "goto" else None
    return page, kind, action
