"""Document-level facts for the info parser (``parsers.info``): XMP and its agreement with Info,
feature flags, repairs.

Input: an open pikepdf document of untrusted origin. XMP is parsed by pikepdf (lxml with entity
resolution off); every value is bounded. Nothing here decodes page content.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Final

import pikepdf
from pikepdf.models.metadata import DEFAULT_NAMESPACES, decode_pdf_date

from pdf_airlock.worker.pdf.opening import clean_string

__all__ = ["feature_flags", "reconcile", "repair_report", "xmp_metadata"]

MAX_XMP_KEYS: Final = 64
MAX_REPAIR_MESSAGES: Final = 20
_PREFIXES: Final = dict(DEFAULT_NAMESPACES)
_WARNING_SOURCE = re.compile(r"stream <[^>]*>[,:]?\s*")  # qpdf names the input by its repr: an address
# qpdf quotes PDF names it stumbled on (dictionary keys, filters): document text, so it is not
# passed on; offsets and object numbers stay.
_PDF_NAME = re.compile(r"/[^\s/,;:()<>\[\]{}]+")
_REBUILT = ("reconstruct cross-reference", "reconstructing cross-reference", "xref not found")

# Info key (as the info parser publishes it) -> the XMP property that carries the same fact.
_COUNTERPARTS: Final = {
    "title": "dc:title",
    "author": "dc:creator",
    "subject": "dc:description",
    "keywords": "pdf:Keywords",
    "creator": "xmp:CreatorTool",
    "producer": "pdf:Producer",
    "creation_date": "xmp:CreateDate",
    "mod_date": "xmp:ModifyDate",
}


def _qualified(key: str) -> str:
    if key.startswith("{"):
        uri, _, local = key[1:].partition("}")
        prefix = _PREFIXES.get(uri)
        return f"{prefix}:{local}" if prefix else clean_string(local, 120)
    return clean_string(key, 120)


def _value(value: object) -> str:
    if isinstance(value, (list, tuple, set, frozenset)):
        items = sorted(value) if isinstance(value, (set, frozenset)) else value
        return clean_string("; ".join(str(item) for item in items))
    return clean_string(value)


def xmp_metadata(pdf: pikepdf.Pdf, warnings: list[str]) -> dict[str, str] | None:
    """XMP properties as ``prefix:name`` -> text; None when the document has no XMP stream."""
    if "/Metadata" not in pdf.Root:
        return None
    try:
        meta = pdf.open_metadata(set_pikepdf_as_editor=False, update_docinfo=False)
        keys = list(meta)
        result: dict[str, str] = {}
        for key in keys[:MAX_XMP_KEYS]:
            result[_qualified(str(key))] = _value(meta[key])
    except Exception:
        warnings.append("the XMP metadata stream could not be parsed")
        return None
    if len(keys) > MAX_XMP_KEYS:
        warnings.append(f"XMP has {len(keys)} properties; the first {MAX_XMP_KEYS} are shown")
    return result


def _as_date(text: str) -> datetime | None:
    try:
        if text.startswith("D:") or "-" not in text[:8]:
            return decode_pdf_date(text)
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except (ValueError, TypeError, OverflowError):
        return None


def _same(field: str, info: str, xmp: str) -> bool:
    if field.endswith("_date"):
        left, right = _as_date(info), _as_date(xmp)
        if left is not None and right is not None:
            if (left.tzinfo is None) != (right.tzinfo is None):
                return left.replace(tzinfo=None) == right.replace(tzinfo=None)
            return left == right
    return " ".join(info.split()) == " ".join(xmp.split())


def reconcile(info: dict[str, str], xmp: dict[str, str] | None) -> list[dict[str, str]]:
    """Facts stated differently by the Info dictionary and XMP (a reader may show either)."""
    if not xmp:
        return []
    conflicts = []
    for field, prop in _COUNTERPARTS.items():
        if field in info and prop in xmp and not _same(field, info[field], xmp[prop]):
            conflicts.append({"field": field, "info": info[field], "xmp": xmp[prop]})
    return conflicts


def _has(obj: object, key: str) -> bool:
    return isinstance(obj, pikepdf.Dictionary) and key in obj


def _javascript(root: pikepdf.Object) -> bool:
    names = root.get("/Names")
    if _has(names, "/JavaScript"):
        return True
    action = root.get("/OpenAction")
    if isinstance(action, pikepdf.Dictionary) and action.get("/S") == pikepdf.Name.JavaScript:
        return True
    actions = root.get("/AA")
    return isinstance(actions, pikepdf.Dictionary) and any(
        isinstance(a, pikepdf.Dictionary) and a.get("/S") == pikepdf.Name.JavaScript for a in actions.values()
    )


def feature_flags(pdf: pikepdf.Pdf, warnings: list[str]) -> dict[str, bool]:
    """Cheap presence checks at the catalog level; the security parser does the full inventory."""
    root = pdf.Root
    flags = {
        "tagged": False,
        "linearized": False,
        "has_forms": False,
        "has_xfa": False,
        "has_attachments": False,
        "has_javascript": False,
        "has_outline": False,
        "has_page_labels": False,
    }
    try:
        mark_info = root.get("/MarkInfo")
        flags["tagged"] = isinstance(mark_info, pikepdf.Dictionary) and bool(mark_info.get("/Marked", False))
        flags["linearized"] = bool(pdf.is_linearized)
        acroform = root.get("/AcroForm")
        fields = acroform.get("/Fields") if isinstance(acroform, pikepdf.Dictionary) else None
        flags["has_forms"] = isinstance(fields, pikepdf.Array) and len(fields) > 0
        flags["has_xfa"] = _has(acroform, "/XFA")
        flags["has_attachments"] = len(pdf.attachments) > 0
        flags["has_javascript"] = _javascript(root)
        flags["has_outline"] = _has(root.get("/Outlines"), "/First")
        flags["has_page_labels"] = "/PageLabels" in root
    except (pikepdf.PdfError, ValueError, TypeError, KeyError, RecursionError):
        warnings.append("some catalog entries could not be read; feature flags may be incomplete")
    return flags


def repair_report(pdf: pikepdf.Pdf) -> dict[str, Any]:
    """What qpdf had to repair to read the document: its warnings, without the stream name and
    with PDF names elided."""
    messages = [_PDF_NAME.sub("/…", _WARNING_SOURCE.sub("", str(message))) for message in pdf.get_warnings()]
    return {
        "xref_rebuilt": any(marker in message.lower() for message in messages for marker in _REBUILT),
        "warning_count": len(messages),
        "warnings": [clean_string(message, 300) for message in messages[:MAX_REPAIR_MESSAGES]],
    }
