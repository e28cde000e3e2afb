"""Page selectors such as ``"1-3,7,10-"`` or ``"iv,A-1"``, resolved against a document.

The selector string comes from the supervisor, which checked its character set; the page count
and the page labels come from the document, so every bound is checked here again.

A part made of digits and one dash is a range of physical page numbers (1-based). Any other
part names page labels (what a viewer displays, e.g. ``iv`` or ``A-1``): first the whole part
as one label, then ``first-last`` as a range between two labels. Labels are only read from the
document when a selector uses them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, Final

import pikepdf

from pdf_airlock.worker.contract import WorkerError

__all__ = [
    "MAX_SELECTOR_PARTS",
    "RENDER_TOOL",
    "pdfium_label",
    "pdfium_labels",
    "pikepdf_label",
    "pikepdf_labels",
    "select_pages",
]

MAX_SELECTOR_PARTS: Final = 256
# The tool that shows a page as a picture (``parsers.render``): warnings about a page whose text
# cannot be trusted or read name it, so the agent knows where to look instead.
RENDER_TOOL: Final = "pdf_render"
MAX_LABEL_CHARS: Final = 64
_PART = re.compile(r"^\s*(\d+)?\s*(-)?\s*(\d+)?\s*$")

Labels = Callable[[], list[str]]


def pdfium_label(document: Any, index: int) -> str:
    """One page's label as PDFium reports it; an unlabelled page is its 1-based number."""
    label = document.get_page_label(index) or ""
    return str(label[:MAX_LABEL_CHARS]) or str(index + 1)


def pikepdf_label(pdf: Any, index: int) -> str | None:
    """One page's label as qpdf computes it (its number when unlabelled); None if qpdf cannot
    tell (a damaged page tree or label tree)."""
    try:
        return str(pdf.pages[index].label)[:MAX_LABEL_CHARS]
    except (pikepdf.PdfError, ValueError, TypeError, RuntimeError):
        return None


def pdfium_labels(document: Any) -> Labels:
    """Every page's label, computed once and only if asked for (label selectors)."""
    return functools.cache(lambda: [pdfium_label(document, index) for index in range(len(document))])


def pikepdf_labels(pdf: Any) -> Labels:
    return functools.cache(
        lambda: [pikepdf_label(pdf, index) or str(index + 1) for index in range(len(pdf.pages))]
    )


def _label_range(part: str, labels: Labels | None, cache: dict[str, int]) -> tuple[int, int]:
    if labels is None:
        raise WorkerError("invalid_arguments", "page selector must look like '1-3,7,10-'")
    if not cache:
        for index, label in enumerate(labels()):
            cache.setdefault(label, index)
        cache.setdefault("", -1)  # marks the cache as filled even for an empty document
    name = part.strip()
    if name in cache and name:
        return cache[name], cache[name]
    # A range between two labels; a label may itself contain a dash, so try every split.
    for position, char in enumerate(name):
        first, last = name[:position].strip(), name[position + 1 :].strip()
        if char == "-" and first and last and first in cache and last in cache:
            return cache[first], cache[last]
    shown = name[:MAX_LABEL_CHARS]
    raise WorkerError("invalid_arguments", f"no page has the label {shown!r}")


def select_pages(selector: str | None, page_count: int, labels: Labels | None = None) -> list[int]:
    """Return 0-based page indices in selector order, without duplicates."""
    if selector is None or selector.strip() in ("", "all"):
        return list(range(page_count))
    parts = selector.split(",")
    if len(parts) > MAX_SELECTOR_PARTS:
        raise WorkerError("invalid_arguments", f"page selector has more than {MAX_SELECTOR_PARTS} parts")
    chosen: list[int] = []
    seen: set[int] = set()
    label_cache: dict[str, int] = {}
    for part in parts:
        match = _PART.match(part)
        if match is None or (match.group(1) is None and match.group(3) is None):
            first_index, last_index = _label_range(part, labels, label_cache)
            if last_index < first_index:
                raise WorkerError("invalid_arguments", f"label range {part.strip()[:130]!r} runs backwards")
            indices = range(first_index, last_index + 1)
        else:
            first_text, dash, last_text = match.groups()
            first = int(first_text) if first_text else 1
            last = int(last_text) if last_text else (page_count if dash else first)
            if first < 1:
                raise WorkerError("invalid_arguments", f"page {part.strip()!r}: pages start at 1")
            if last < first:
                raise WorkerError("invalid_arguments", f"page range {part.strip()!r} runs backwards")
            if last > page_count:
                raise WorkerError(
                    "page_out_of_range",
                    f"page {last} requested but the document has {page_count} page(s)",
                    {"page_count": page_count},
                )
            indices = range(first - 1, last)
        for index in indices:
            if index not in seen:
                seen.add(index)
                chosen.append(index)
    return chosen
