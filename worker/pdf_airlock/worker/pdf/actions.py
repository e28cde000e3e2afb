"""Every place a PDF reader would run an action, walked for the security triage (``parsers.security``).

Input: an untrusted document opened by pikepdf. An action (JavaScript, Launch, SubmitForm...)
can sit on the document (/OpenAction, /AA, the JavaScript name tree), on a page (/AA), on an
annotation (/A, /AA), on an outline item (/A), on a form field of the /AcroForm tree (/A, /AA:
keystroke, format, validate and calculate scripts live on the field itself, not on its widget),
and behind any of those in a chain of /Next actions. Each of these is walked here.

Every walk is iterative and remembers the indirect objects it has visited, so a cycle ends it;
all walks share one budget of objects examined (``MAX_INSPECTED``). A walk that stops at the
budget (or at a nesting bound) leaves the inventory ``incomplete``: the triage must then not
rate the document as if nothing were there (``pdf_airlock.worker.parsers.security``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Final

import pikepdf

from pdf_airlock.worker.pdf.opening import clean_string

__all__ = ["MAX_INSPECTED", "MAX_LOCATIONS", "Inventory", "walk_document"]

MAX_LOCATIONS: Final = 200  # actions listed with their place; all of them are counted
# Objects (pages, annotations, fields, outline items, name-tree entries, actions) examined in all:
# about 2 s of pikepdf lookups at the most, far under a job's CPU budget.
MAX_INSPECTED: Final = 200_000
MAX_FIELD_DEPTH: Final = 64  # /Kids levels of the form field tree (qpdf's own bound is 50)
_MAX_KIND_CHARS: Final = 64
_Where = str
_ObjGen = tuple[int, int]


class Inventory:
    """The actions found, their places (the first ``MAX_LOCATIONS``) and whether every place
    could be examined."""

    def __init__(self) -> None:
        self.actions: Counter[str] = Counter()
        self.locations: list[dict[str, str]] = []
        self.media_annotations = 0
        self.inspected = 0
        self.incomplete: list[str] = []  # why not every action could be inspected
        self._holders: set[_ObjGen] = set()  # annotations and fields seen (a widget is both)

    def spend(self, what: str) -> bool:
        """Count one object examined; False (and the inventory incomplete) past the budget."""
        self.inspected += 1
        if self.inspected <= MAX_INSPECTED:
            return True
        self.stop(f"more than {MAX_INSPECTED} objects to examine ({what})")
        return False

    def stop(self, reason: str) -> None:
        if reason not in self.incomplete:
            self.incomplete.append(reason)

    def first_visit(self, holder: pikepdf.Object) -> bool:
        """False for an annotation or field already examined (a merged field and widget is both)."""
        if not holder.is_indirect:
            return True
        if holder.objgen in self._holders:
            return False
        self._holders.add(holder.objgen)
        return True

    def action(self, action: object, where: _Where) -> None:
        """Record an action dictionary and every action of its /Next chain (a single action or
        an array, to any depth, once each: a chain that loops ends)."""
        seen: set[_ObjGen] = set()
        stack: list[object] = [action]
        while stack:
            item = stack.pop()
            if not isinstance(item, pikepdf.Dictionary):
                continue
            if item.is_indirect:
                if item.objgen in seen:
                    continue
                seen.add(item.objgen)
            if not self.spend(f"actions at {where}"):
                return
            self._record(item, where)
            following = item.get("/Next")
            if isinstance(following, pikepdf.Array):
                stack.extend(reversed(list(following)))
            elif following is not None:
                stack.append(following)

    def additional(self, holder: pikepdf.Object, where: _Where) -> None:
        """The additional actions (/AA) of a document, page, annotation or field."""
        if not isinstance(holder, pikepdf.Dictionary):
            return
        extra = holder.get("/AA")
        if isinstance(extra, pikepdf.Dictionary):
            for trigger, action in extra.items():
                self.action(action, f"{where} {trigger.lstrip('/')}")

    def _record(self, action: pikepdf.Dictionary, where: _Where) -> None:
        kind = str(action.get("/S", "/unknown")).lstrip("/").lower()[:_MAX_KIND_CHARS]
        self.actions[kind] += 1
        if len(self.locations) >= MAX_LOCATIONS:
            return
        detail = ""
        if kind == "uri":
            detail = clean_string(action.get("/URI", ""), 300)
        elif kind == "launch":
            detail = clean_string(action.get("/F", action.get("/Win", "")), 300)
        elif kind == "javascript":
            script = action.get("/JS", "")
            chars = len(script.read_bytes()) if isinstance(script, pikepdf.Stream) else len(str(script))
            detail = f"{chars} chars"
        self.locations.append({"where": where[:300], "action": kind, "detail": detail})


_MEDIA_SUBTYPES: Final = {"RichMedia", "Screen", "Movie", "Sound", "3D"}


def walk_document(pdf: pikepdf.Pdf, inventory: Inventory) -> None:
    """Every place of the document a reader runs actions from, into ``inventory``."""
    inventory.action(pdf.Root.get("/OpenAction"), "document open")
    inventory.additional(pdf.Root, "document")
    _javascript_names(pdf, inventory)
    _pages(pdf, inventory)
    _outline(pdf, inventory)
    _fields(pdf, inventory)


def _javascript_names(pdf: pikepdf.Pdf, inventory: Inventory) -> None:
    names = pdf.Root.get("/Names")
    if not isinstance(names, pikepdf.Dictionary) or "/JavaScript" not in names:
        return
    for key, action in pikepdf.NameTree(names.JavaScript).items():
        if not inventory.spend("the JavaScript name tree"):
            return
        inventory.action(action, f"JavaScript name tree {clean_string(key, 80)!r}")


def _pages(pdf: pikepdf.Pdf, inventory: Inventory) -> None:
    for number, page in enumerate(pdf.pages, start=1):
        if not inventory.spend("pages"):
            return
        inventory.additional(page.obj, f"page {number}")
        annots = page.obj.get("/Annots")
        for annot in annots if isinstance(annots, pikepdf.Array) else ():
            if not isinstance(annot, pikepdf.Dictionary) or not inventory.first_visit(annot):
                continue
            if not inventory.spend(f"annotations of page {number}"):
                return
            subtype = str(annot.get("/Subtype", "")).lstrip("/")
            inventory.media_annotations += subtype in _MEDIA_SUBTYPES
            inventory.action(annot.get("/A"), f"page {number} {subtype} annotation")
            inventory.additional(annot, f"page {number} {subtype} annotation")


def _linked(first: object, link: str) -> Iterator[pikepdf.Dictionary]:
    """The dictionaries of a /First ... /Next list, each once (a loop ends it)."""
    seen: set[_ObjGen] = set()
    item = first
    while isinstance(item, pikepdf.Dictionary):
        if item.is_indirect:
            if item.objgen in seen:
                return
            seen.add(item.objgen)
        yield item
        item = item.get(link)


def _outline(pdf: pikepdf.Pdf, inventory: Inventory) -> None:
    """Every outline item, at any depth, once each (a cycle between levels ends at the item
    seen before)."""
    outlines = pdf.Root.get("/Outlines")
    if not isinstance(outlines, pikepdf.Dictionary):
        return
    seen: set[_ObjGen] = set()
    levels: list[Iterator[pikepdf.Dictionary]] = [_linked(outlines.get("/First"), "/Next")]
    while levels:
        item = next(levels[-1], None)
        if item is None:
            levels.pop()
            continue
        if item.is_indirect:
            if item.objgen in seen:
                continue
            seen.add(item.objgen)
        if not inventory.spend("outline items"):
            return
        title = clean_string(item.get("/Title", ""), 80)
        inventory.action(item.get("/A"), f"outline item {title!r}")
        if "/First" in item:
            levels.append(_linked(item.get("/First"), "/Next"))


def _fields(pdf: pikepdf.Pdf, inventory: Inventory) -> None:
    """Every field of the /AcroForm tree and its widgets (/Kids, to ``MAX_FIELD_DEPTH``): a
    field's own /AA holds its keystroke, format, validate and calculate actions."""
    form = pdf.Root.get("/AcroForm")
    fields = form.get("/Fields") if isinstance(form, pikepdf.Dictionary) else None
    if not isinstance(fields, pikepdf.Array):
        return
    seen: set[_ObjGen] = set()
    stack: list[tuple[object, int, str]] = [(field, 1, "") for field in reversed(list(fields))]
    while stack:
        field, depth, parent = stack.pop()
        if not isinstance(field, pikepdf.Dictionary):
            continue
        if field.is_indirect:
            if field.objgen in seen:
                continue
            seen.add(field.objgen)
        if not inventory.spend("form fields"):
            return
        partial = clean_string(field.get("/T", ""), 80)
        name = f"{parent}.{partial}" if parent and partial else parent or partial
        if inventory.first_visit(field):
            inventory.action(field.get("/A"), f"form field {name!r}")
            inventory.additional(field, f"form field {name!r}")
        kids = field.get("/Kids")
        if not isinstance(kids, pikepdf.Array) or len(kids) == 0:
            continue
        if depth >= MAX_FIELD_DEPTH:
            inventory.stop(f"form fields nested deeper than {MAX_FIELD_DEPTH} levels")
            continue
        stack.extend((kid, depth + 1, name[:160]) for kid in reversed(list(kids)))
