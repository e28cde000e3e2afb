"""XFA forms: the field names and values of an XFA form's ``datasets`` packet.

Input: an untrusted AcroForm dictionary. The packet is XML from the document, parsed by lxml
with every network, DTD and entity feature off (no external or internal entity is expanded, no
DTD loaded, lxml's default tree-size limits kept), after qpdf decodes the stream under the job's
decode limits. Only the form data (``xfa:data``) is read; leaves become ``{name, value}`` with
dotted names (``form1.Page1.LastName``), in document order, at most ``MAX_FIELDS``.
"""

from __future__ import annotations

from typing import Any, Final

import pikepdf
from lxml import etree

from pdf_airlock.worker.pdf.opening import clean_string

__all__ = ["MAX_FIELDS", "xfa_fields"]

MAX_FIELDS: Final = 2000
MAX_PACKET_BYTES: Final = 16 << 20
MAX_DEPTH: Final = 64
_DATA_NS: Final = "http://www.xfa.org/schema/xfa-data/1.0/"


def _parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        recover=True,  # real forms carry stray '&'s; recovering reads past them
    )


def _datasets(xfa: object) -> bytes | None:
    """The ``datasets`` packet's bytes (an XFA array of name/stream pairs), or the whole XDP."""
    if isinstance(xfa, pikepdf.Stream):
        return bytes(xfa.read_bytes())
    if not isinstance(xfa, pikepdf.Array):
        return None
    items = list(xfa)
    for name, stream in zip(items[::2], items[1::2], strict=False):
        if str(name) == "datasets" and isinstance(stream, pikepdf.Stream):
            return bytes(stream.read_bytes())
    return None


def _local(tag: object) -> str:
    return etree.QName(tag).localname if isinstance(tag, str) else ""


def xfa_fields(form: pikepdf.Dictionary, warnings: list[str]) -> list[dict[str, Any]]:
    """The XFA form's data as ``[{name, value}]``; [] when it has none. Problems are warnings."""
    try:
        packet = _datasets(form.get("/XFA"))
    except pikepdf.PdfError:
        warnings.append("the XFA datasets packet could not be decoded")
        return []
    if packet is None:
        return []
    if len(packet) > MAX_PACKET_BYTES:
        warnings.append(
            f"the XFA datasets packet is over {MAX_PACKET_BYTES} bytes; its fields are not listed"
        )
        return []
    try:
        root = etree.fromstring(packet, _parser())
    except etree.XMLSyntaxError:
        root = None
    if root is None:
        warnings.append("the XFA datasets packet is not XML; its fields are not listed")
        return []
    data = root if _local(root.tag) == "data" else root.find(f".//{{{_DATA_NS}}}data")
    if data is None:
        return []
    fields: list[dict[str, Any]] = []
    stack: list[tuple[Any, str, int]] = [(child, "", 1) for child in reversed(list(data))]
    while stack:
        element, parent, depth = stack.pop()
        local = _local(element.tag)
        if not local:
            continue
        name = f"{parent}.{local}" if parent else local
        children = [child for child in element if _local(child.tag)]
        if children and depth < MAX_DEPTH:
            stack.extend((child, name, depth + 1) for child in reversed(children))
            continue
        if len(fields) == MAX_FIELDS:
            warnings.append(
                f"the XFA form has more than {MAX_FIELDS} fields; the first {MAX_FIELDS} are listed"
            )
            break
        fields.append(
            {"name": clean_string(name, 500), "value": clean_string((element.text or "").strip(), 4000)}
        )
    return fields
