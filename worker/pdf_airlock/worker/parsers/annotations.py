"""``pdf_annotations``: annotations and links of the selected pages.

Input: untrusted bytes. Each page's /Annots is read through qpdf; every string is bounded; link
targets are resolved to a page of this document, a URI, or the action's kind (Launch,
JavaScript, ...), which is reported and never followed. At most ``max_items`` per answer from
``start``; the position to continue from is returned for the cursor.
"""

from __future__ import annotations

from typing import Any, Final

import pikepdf

from pdf_airlock.worker.pdf.destinations import action_target, page_index
from pdf_airlock.worker.pdf.opening import clean_string, open_pikepdf
from pdf_airlock.worker.pdf.pages import pikepdf_labels, select_pages

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_annotations"

_HIDDEN_FLAGS = 0b10 | 0b100000  # Hidden, NoView


def _rect(annot: pikepdf.Dictionary) -> list[float] | None:
    rect = annot.get("/Rect")
    if isinstance(rect, pikepdf.Array) and len(rect) == 4:
        try:
            return [round(float(value), 2) for value in rect]
        except (TypeError, ValueError):
            return None
    return None


def _annotation(
    pdf: pikepdf.Pdf, annot: pikepdf.Dictionary, page: int, pages: dict[tuple[int, int], int]
) -> dict[str, Any]:
    target, action, action_dict = action_target(pdf, annot, pages)
    uri = None
    if action_dict is not None and action == "uri":
        uri = clean_string(action_dict.get("/URI", ""), 2000)
    flags = int(annot.get("/F", 0)) if isinstance(annot.get("/F", 0), int) else 0
    return {
        "page": page + 1,
        "subtype": clean_string(str(annot.get("/Subtype", "/Unknown")).lstrip("/"), 64),
        "rect": _rect(annot),
        "contents": clean_string(annot.get("/Contents"), 2000) if "/Contents" in annot else None,
        "action": action,
        "uri": uri,
        "target_page": target + 1 if target is not None else None,
        "hidden": bool(flags & _HIDDEN_FLAGS),
    }


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    max_items = int(args["max_items"])
    start = int(args.get("start", 0))
    position = 0
    next_start = None
    items: list[dict[str, Any]] = []
    warnings: list[str] = []
    with open_pikepdf(data, args.get("password"), warnings) as pdf:
        pages = page_index(pdf)
        for index in select_pages(args.get("pages"), len(pdf.pages), pikepdf_labels(pdf)):
            annots = pdf.pages[index].obj.get("/Annots")
            if not isinstance(annots, pikepdf.Array):
                continue
            for annot in annots:
                if not isinstance(annot, pikepdf.Dictionary):
                    continue
                if position >= start + max_items:
                    next_start = position
                    break
                if position >= start:
                    items.append(_annotation(pdf, annot, index, pages))
                position += 1
            if next_start is not None:
                break
    return {"annotations": items, "next_start": next_start, "warnings": warnings}


def warm_up(sample: bytes) -> None:
    run(sample, {"max_items": 10})
