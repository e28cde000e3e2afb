"""``pdf_forms``: AcroForm fields with their full names, user-facing labels (``/TU``), types,
values, options, a button's on-state export values, flags, page and rectangle; whether the form
carries XFA, and an XFA form's field values from its datasets (``pdf_airlock.worker.pdf.xfa``).

Input: untrusted bytes. The field tree (Fields/Kids) is walked with a visited set and a depth
cap; inheritable attributes (FT, V, Ff, Opt) are inherited as the spec says. Values are shown,
never acted upon.
"""

from __future__ import annotations

from typing import Any, Final

import pikepdf

from pdf_airlock.worker.pdf.opening import clean_string, open_pikepdf
from pdf_airlock.worker.pdf.xfa import xfa_fields

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_forms"

_MAX_DEPTH = 32
_TYPES = {"/Tx": "text", "/Btn": "button", "/Ch": "choice", "/Sig": "signature"}


def _value(value: object) -> str | list[str] | None:
    if value is None:
        return None
    if isinstance(value, pikepdf.Array):
        return [clean_string(item, 1000) for item in list(value)[:100]]
    if isinstance(value, pikepdf.Stream):
        return "(stream)"
    if isinstance(value, pikepdf.Dictionary):  # a signature's value: its bytes are not text
        return "(signature)" if value.get("/Type") == pikepdf.Name.Sig else "(dictionary)"
    return clean_string(str(value).lstrip("/") if isinstance(value, pikepdf.Name) else value, 4000)


def _options(value: object) -> list[str]:
    if not isinstance(value, pikepdf.Array):
        return []
    options = []
    for item in list(value)[:500]:
        shown = item[1] if isinstance(item, pikepdf.Array) and len(item) == 2 else item
        options.append(clean_string(shown, 500))
    return options


def _export_values(widgets: list[pikepdf.Dictionary]) -> list[str]:
    """A check box's or radio button's on-state names (its appearance states other than Off),
    what the field's value is when it is on: ``Yes``, ``Agree``, ``Option2``..."""
    values: list[str] = []
    for widget in widgets[:100]:
        appearances = widget.get("/AP")
        normal = appearances.get("/N") if isinstance(appearances, pikepdf.Dictionary) else None
        if not isinstance(normal, pikepdf.Dictionary):
            continue
        for state in normal.keys():  # noqa: SIM118 - a pikepdf Dictionary iterates its keys this way
            value = clean_string(state.lstrip("/"), 200)
            if state != "/Off" and value not in values:
                values.append(value)
    return values


def _widgets_by_page(pdf: pikepdf.Pdf) -> dict[tuple[int, int], int]:
    owner: dict[tuple[int, int], int] = {}
    for number, page in enumerate(pdf.pages):
        annots = page.obj.get("/Annots")
        if isinstance(annots, pikepdf.Array):
            for annot in annots:
                if isinstance(annot, pikepdf.Dictionary):
                    owner[annot.objgen] = number
    return owner


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    max_items = int(args["max_items"])
    start = int(args.get("start", 0))
    position = 0
    next_start = None
    fields: list[dict[str, Any]] = []
    warnings: list[str] = []
    with open_pikepdf(data, args.get("password"), warnings) as pdf:
        form = pdf.Root.get("/AcroForm")
        if not isinstance(form, pikepdf.Dictionary):
            return {"fields": [], "xfa": False, "xfa_fields": [], "next_start": None, "warnings": warnings}
        owner = _widgets_by_page(pdf)
        seen: set[tuple[int, int]] = set()
        roots = form.get("/Fields")
        stack: list[tuple[Any, str, dict[str, Any], int]] = (
            [(field, "", {}, 0) for field in reversed(list(roots))]
            if isinstance(roots, pikepdf.Array)
            else []
        )
        while stack:
            node, parent_name, inherited, depth = stack.pop()
            if not isinstance(node, pikepdf.Dictionary) or (node.is_indirect and node.objgen in seen):
                continue
            if node.is_indirect:
                seen.add(node.objgen)
            if depth > _MAX_DEPTH:
                warnings.append(f"the field tree is deeper than {_MAX_DEPTH}; deeper fields are skipped")
                continue
            partial = clean_string(node.get("/T"), 200) if "/T" in node else None
            name = ".".join(part for part in (parent_name, partial) if part)
            attrs = inherited | {key: node[key] for key in ("/FT", "/V", "/Ff", "/Opt") if key in node}
            kids = node.get("/Kids")
            kid_list = list(kids) if isinstance(kids, pikepdf.Array) else []
            if any(isinstance(kid, pikepdf.Dictionary) and "/T" in kid for kid in kid_list):
                stack.extend((kid, name, attrs, depth + 1) for kid in reversed(kid_list))
                continue
            if position >= start + max_items:
                next_start = position
                break
            position += 1
            if position <= start:
                continue
            candidates = [node] if "/Rect" in node else kid_list
            widgets = [k for k in candidates if isinstance(k, pikepdf.Dictionary)]
            widget = widgets[0] if widgets else None
            page = owner.get(widget.objgen) if widget is not None and widget.is_indirect else None
            rect = widget.get("/Rect") if widget is not None else None
            kind = _TYPES.get(str(attrs.get("/FT", "")), "unknown")
            fields.append(
                {
                    "name": name or "(unnamed)",
                    "label": clean_string(node.get("/TU"), 500) if "/TU" in node else None,
                    "type": kind,
                    "export_values": _export_values(widgets) if kind == "button" else [],
                    "value": _value(attrs.get("/V")),
                    "options": _options(attrs.get("/Opt")),
                    "flags": int(attrs["/Ff"]) if isinstance(attrs.get("/Ff"), int) else 0,
                    "page": page + 1 if page is not None else None,
                    "rect": [round(float(v), 2) for v in rect]
                    if isinstance(rect, pikepdf.Array) and len(rect) == 4
                    else None,
                }
            )
        xfa = "/XFA" in form
        xfa_data = xfa_fields(form, warnings) if xfa and start == 0 else []
    return {
        "fields": fields,
        "xfa": xfa,
        "xfa_fields": xfa_data,
        "next_start": next_start,
        "warnings": warnings[:20],
    }


def warm_up(sample: bytes) -> None:
    """The AcroForm walk, and an XFA packet through the same hardened lxml parser."""
    run(sample, {"max_items": 10})
    _warm_xfa()


def _warm_xfa() -> None:
    """An XFA datasets packet through the same hardened lxml parser a job uses."""
    pdf = pikepdf.new()
    packet = pdf.make_stream(
        b'<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data>'
        b"<form1><name>warm-up &amp; more</name></form1></xfa:data></xfa:datasets>"
    )
    form = pikepdf.Dictionary(XFA=pikepdf.Array([pikepdf.String("datasets"), packet]))
    if xfa_fields(form, []) != [{"name": "form1.name", "value": "warm-up & more"}]:
        raise RuntimeError("XFA parsing failed its warm-up")
