"""``pdf_security``: an inventory of active content and hiding places, for triage.

Input: untrusted bytes. Reports (never runs) JavaScript and actions wherever a reader would
trigger them (``pdf_airlock.worker.pdf.actions``: document open, document/page/annotation/field
additional actions, the JavaScript name tree, links, outline items, the form field tree, every
/Next chain), rich media and XFA, embedded files, encryption, incremental updates, signatures and
how much of the file their ByteRange covers, and every text run a person would not see
(``pdf.visibility``: the runs every text tool leaves out), each with its page, box, reason and a
short preview, and whether it reads as instructions to a model (``pdf.promptlike``). Hidden text
makes a document at least ``medium`` risk; hidden instructions to a model make it ``high``.
Every walk is bounded; the risk summary lists its reasons, and a walk stopped by its bound rates
the document high ("not every action could be inspected"), never as if nothing were there.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Final

import pikepdf
import pypdfium2 as pdfium

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.actions import MAX_LOCATIONS, Inventory, walk_document
from pdf_airlock.worker.pdf.decrypt import encryption_facts
from pdf_airlock.worker.pdf.opening import clean_string, open_document, open_pikepdf
from pdf_airlock.worker.pdf.promptlike import reads_as_instructions
from pdf_airlock.worker.pdf.visibility import document_facts, page_visibility

__all__ = ["DECRYPT_WARM_ARGS", "KIND", "run", "warm_up"]

KIND: Final = "pdf_security"
# The job arguments of this parser's warm-up on encrypted samples (``pdf_airlock.worker.warmup``).
DECRYPT_WARM_ARGS: Final[dict[str, Any]] = {}

MAX_SCANNED_PAGES: Final = 500
PREVIEW_CHARS: Final = 80
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


def _hidden_text(data: bytes, password: str | None, warnings: list[str]) -> dict[str, Any]:
    """Every text run a person would not see (``pdf.visibility``, the stage every text tool
    leaves out), on the first ``MAX_SCANNED_PAGES`` pages: where, why, a short preview, and
    whether it reads as instructions to a model (``pdf.promptlike``)."""
    found: dict[str, Any] = {"pages_scanned": 0, "runs": 0, "by_reason": {}, "instructions": 0, "items": []}
    try:
        document = open_document(data, password).document
    except WorkerError:
        warnings.append("PDFium could not open the document: hidden text was not looked for")
        return found
    counts: Counter[str] = Counter()
    facts = document_facts(data)
    try:
        for index in range(len(document)):
            if index >= MAX_SCANNED_PAGES:
                warnings.append(f"hidden text was looked for on the first {MAX_SCANNED_PAGES} pages only")
                break
            try:
                page = document[index]
            except pdfium.PdfiumError:
                warnings.append(f"page {index + 1} could not be loaded by PDFium; hidden text not looked for")
                continue
            try:
                textpage = page.get_textpage()
                try:
                    visibility = page_visibility(page, textpage, facts)
                finally:
                    textpage.close()
            except pdfium.PdfiumError:
                warnings.append(
                    f"page {index + 1}: PDFium could not read its text; hidden text not looked for"
                )
                continue
            finally:
                page.close()
            found["pages_scanned"] += 1
            for run in visibility.runs:
                counts[run.reason] += 1
                instruction = reads_as_instructions(run.text)
                found["instructions"] += instruction
                if len(found["items"]) < MAX_LOCATIONS:
                    found["items"].append(
                        {
                            "page": index + 1,
                            "box": list(run.box),
                            "reason": run.reason,
                            "preview": _preview(run.text),
                            "instruction": instruction,
                        }
                    )
    finally:
        document.close()
    found["runs"] = sum(counts.values())
    found["by_reason"] = dict(counts.most_common())
    return found


def _preview(text: str) -> str:
    """The first ``PREVIEW_CHARS`` characters of a hidden run, on one line, without control
    characters (the supervisor cleans every string again)."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in text[: PREVIEW_CHARS * 2]).split())
    return flat if len(flat) <= PREVIEW_CHARS else flat[: PREVIEW_CHARS - 1] + "…"


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
    if facts["hidden_text"]["instructions"]:
        reasons.append(
            f"{facts['hidden_text']['instructions']} hidden text run(s) that read as instructions to a model"
        )
    if reasons:
        return "high", reasons
    reasons = [
        f"{count} {kind} action(s)" for kind, count in sorted(actions.items()) if kind in _NOTABLE_ACTIONS
    ]
    if facts["embedded_files"]:
        reasons.append(f"{facts['embedded_files']} embedded file(s)")
    hidden = facts["hidden_text"]
    if hidden["runs"]:
        by_reason = ", ".join(f"{count} {reason}" for reason, count in hidden["by_reason"].items())
        reasons.append(f"{hidden['runs']} text run(s) a person would not see ({by_reason})")
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
            "hidden_text": _hidden_text(data, args.get("password"), warnings),
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
