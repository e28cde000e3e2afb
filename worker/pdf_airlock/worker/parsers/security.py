"""``pdf_security``: an inventory of active content and hiding places, for triage.

Input: untrusted bytes. Reports (never runs) JavaScript and actions wherever a reader would
trigger them (``pdf_airlock.worker.pdf.actions``: document open, document/page/annotation/field
additional actions, the JavaScript name tree, links, outline items, the form field tree, every
/Next chain), rich media and XFA, embedded files, encryption, incremental updates, signatures and
how much of the file their ByteRange covers, and hidden-text signals (invisible render mode,
white fill, text placed outside the page) for prompt-injection triage. Every walk is bounded;
the risk summary lists its reasons, and a walk stopped by its bound rates the document high
("not every action could be inspected"), never as if nothing were there.
"""

from __future__ import annotations

import re
from typing import Any, Final

import pikepdf

from pdf_airlock.worker.pdf.actions import MAX_LOCATIONS, Inventory, walk_document
from pdf_airlock.worker.pdf.decrypt import encryption_facts
from pdf_airlock.worker.pdf.opening import clean_string, open_pikepdf

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_security"

MAX_SCANNED_PAGES: Final = 500
MAX_SCANNED_CONTENT: Final = 4 << 20  # decoded bytes of one page's content scanned for hidden text
_RISKY_ACTIONS: Final = {"javascript", "launch", "importdata", "submitform", "richmediaexecute", "gotoe"}
_NOTABLE_ACTIONS: Final = {"uri", "gotor", "sound", "movie", "rendition"}
_MAX_ACTION_KINDS: Final = 100  # distinct /S names counted in the answer (the model's bound)
_EOF = re.compile(rb"%%EOF")


def _signatures(pdf: pikepdf.Pdf, size: int) -> list[dict[str, Any]]:
    form = pdf.Root.get("/AcroForm")
    fields = form.get("/Fields") if isinstance(form, pikepdf.Dictionary) else None
    found: list[dict[str, Any]] = []
    stack = list(fields) if isinstance(fields, pikepdf.Array) else []
    seen: set[tuple[int, int]] = set()
    while stack and len(found) < MAX_LOCATIONS:
        field = stack.pop()
        if not isinstance(field, pikepdf.Dictionary) or (field.is_indirect and field.objgen in seen):
            continue
        if field.is_indirect:
            seen.add(field.objgen)
        kids = field.get("/Kids")
        stack.extend(list(kids) if isinstance(kids, pikepdf.Array) else [])
        value = field.get("/V")
        if field.get("/FT") != pikepdf.Name.Sig or not isinstance(value, pikepdf.Dictionary):
            continue
        ranges = value.get("/ByteRange")
        covered = None
        if isinstance(ranges, pikepdf.Array) and len(ranges) == 4:
            start, _first, second, length = (int(x) for x in ranges)
            covered = start == 0 and second + length == size
        found.append(
            {
                "field": clean_string(field.get("/T", ""), 200),
                "filter": clean_string(
                    str(value.get("/SubFilter", value.get("/Filter", ""))).lstrip("/"), 64
                ),
                "covers_whole_file": covered,
            }
        )
    return found


def _scan(
    instruction: pikepdf.ContentStreamInstruction,
    state: dict[str, bool],
    signals: dict[str, int],
    box: list[float],
) -> None:
    operands, op = instruction.operands, str(instruction.operator)
    if op == "Tr" and operands:
        state["invisible"] = int(operands[0]) == 3
    elif op in ("rg", "g", "k") and operands:
        values = [float(v) for v in operands]
        state["white"] = all(v >= 0.99 for v in values) if op != "k" else all(v <= 0.01 for v in values)
    elif op in ("Tj", "TJ", "'", '"'):
        signals["invisible_render_mode"] += state["invisible"]
        signals["white_fill"] += state["white"] and not state["invisible"]
    elif op == "Tm" and len(operands) >= 2:
        x, y = float(operands[-2]), float(operands[-1])
        if not (box[0] - 1 <= x <= box[2] + 1 and box[1] - 1 <= y <= box[3] + 1):
            signals["off_page"] += 1


def _hidden_text(pdf: pikepdf.Pdf, warnings: list[str]) -> dict[str, int]:
    """Counts of text shown invisibly (Tr 3), in white, or placed outside the page."""
    signals = {"invisible_render_mode": 0, "white_fill": 0, "off_page": 0, "pages_scanned": 0}
    for number, page in enumerate(pdf.pages):
        if number >= MAX_SCANNED_PAGES:
            warnings.append(f"hidden-text signals cover the first {MAX_SCANNED_PAGES} pages only")
            break
        try:
            box = [float(v) for v in page.mediabox]
        except (ValueError, TypeError, pikepdf.PdfError):
            box = [0.0, 0.0, 612.0, 792.0]  # US Letter when the page box is unreadable
        try:
            contents = page.obj.get("/Contents")
            parts = list(contents) if isinstance(contents, pikepdf.Array) else [contents]
            size = sum(len(part.read_bytes()) for part in parts if isinstance(part, pikepdf.Stream))
            if size > MAX_SCANNED_CONTENT:
                warnings.append(
                    f"page {number + 1}: content stream over {MAX_SCANNED_CONTENT} bytes not scanned"
                )
                continue
            instructions = pikepdf.parse_content_stream(page)
        except (pikepdf.PdfError, ValueError, TypeError):  # TypeError: an operator inside an array
            warnings.append(f"page {number + 1}: content stream could not be parsed for hidden-text signals")
            continue
        signals["pages_scanned"] += 1
        state = {"invisible": False, "white": False}
        for instruction in instructions:
            if not isinstance(instruction, pikepdf.ContentStreamInstruction):
                continue  # inline images carry no text
            try:
                _scan(instruction, state, signals, box)
            except (ValueError, TypeError, UnicodeDecodeError, IndexError):
                continue  # a malformed operator or operand says nothing about hidden text
    return signals


def _risk(inventory: Inventory, facts: dict[str, Any]) -> tuple[str, list[str]]:
    actions = inventory.actions
    reasons = [
        f"{count} {kind} action(s)" for kind, count in sorted(actions.items()) if kind in _RISKY_ACTIONS
    ]
    if inventory.incomplete:  # what was not examined may be anything: never rated as if absent
        reasons.append(f"not every action could be inspected ({'; '.join(inventory.incomplete)})")
    if facts["xfa"]:
        reasons.append("XFA form")
    if facts["rich_media"]:
        reasons.append(f"{facts['rich_media']} rich-media annotation(s)")
    if reasons:
        return "high", reasons
    reasons = [
        f"{count} {kind} action(s)" for kind, count in sorted(actions.items()) if kind in _NOTABLE_ACTIONS
    ]
    if facts["embedded_files"]:
        reasons.append(f"{facts['embedded_files']} embedded file(s)")
    hidden = facts["hidden_text"]
    if hidden["invisible_render_mode"] or hidden["white_fill"] or hidden["off_page"]:
        reasons.append("text a reader would not see (invisible, white or off-page)")
    if any(sig["covers_whole_file"] is False for sig in facts["signatures"]):
        reasons.append("a signature does not cover the whole file (changed after signing?)")
    return ("medium" if reasons else "low"), reasons


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    warnings: list[str] = []
    inventory = Inventory()
    with open_pikepdf(data, args.get("password"), warnings) as pdf:
        walk_document(pdf, inventory)
        form = pdf.Root.get("/AcroForm")
        encryption = encryption_facts(pdf)
        if encryption is not None:
            del encryption["version"]
        facts: dict[str, Any] = {
            "xfa": isinstance(form, pikepdf.Dictionary) and "/XFA" in form,
            "rich_media": inventory.media_annotations,
            "embedded_files": len(pdf.attachments),
            "encryption": encryption,
            "incremental_updates": max(0, len(_EOF.findall(data)) - 1),
            "signatures": _signatures(pdf, len(data)),
            "hidden_text": _hidden_text(pdf, warnings),
        }
    level, reasons = _risk(inventory, facts)
    return {
        "risk": level,
        "reasons": reasons,
        "actions": dict(sorted(inventory.actions.most_common(_MAX_ACTION_KINDS))),
        "locations": inventory.locations,
        **facts,
        "warnings": warnings[:20],
    }


def warm_up(sample: bytes) -> None:
    run(sample, {})
