"""Page selectors such as ``"1-3,7,10-"``, resolved against a document's page count.

The selector string comes from the supervisor, which checked its syntax; the page count comes
from the document, so every bound is checked here again.
"""

from __future__ import annotations

import re
from typing import Final

from worker.errors import WorkerError

__all__ = ["MAX_SELECTOR_PARTS", "select_pages"]

MAX_SELECTOR_PARTS: Final = 256
_PART = re.compile(r"^\s*(\d+)?\s*(-)?\s*(\d+)?\s*$")


def select_pages(selector: str | None, page_count: int) -> list[int]:
    """Return 0-based page indices in selector order, without duplicates."""
    if selector is None or selector.strip() in ("", "all"):
        return list(range(page_count))
    parts = selector.split(",")
    if len(parts) > MAX_SELECTOR_PARTS:
        raise WorkerError("invalid_arguments", f"page selector has more than {MAX_SELECTOR_PARTS} parts")
    chosen: list[int] = []
    seen: set[int] = set()
    for part in parts:
        match = _PART.match(part)
        if match is None or (match.group(1) is None and match.group(3) is None):
            raise WorkerError("invalid_arguments", "page selector must look like '1-3,7,10-'")
        first_text, dash, last_text = match.groups()
        first = int(first_text) if first_text else 1
        last = int(last_text) if last_text else (page_count if dash else first)
        if first < 1 or last < first:
            raise WorkerError("invalid_arguments", f"invalid page range {part.strip()!r}")
        if last > page_count:
            raise WorkerError(
                "page_out_of_range",
                f"page {last} requested but the document has {page_count} page(s)",
                {"page_count": page_count},
            )
        for index in range(first - 1, last):
            if index not in seen:
                seen.add(index)
                chosen.append(index)
    return chosen
