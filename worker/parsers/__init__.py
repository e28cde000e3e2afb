"""Parsers run inside the job child, one per job kind.

Each parser takes the document's bytes (already read from the input fd) and the job's
arguments, which the supervisor validated; it assumes nothing about the bytes. It returns a
JSON-serialisable dict or raises ``WorkerError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Parser", "get_parser"]

Parser = Callable[[bytes, dict[str, Any]], dict[str, Any]]


def get_parser(kind: str) -> Parser:
    """Return the parser for a job kind; imported lazily so the zygote controls warm-up order."""
    if kind == "pdf_info":
        from worker.parsers.info import run as run_info

        return run_info
    if kind == "pdf_read":
        from worker.parsers.read import run as run_read

        return run_read
    if kind == "page_count":
        from worker.parsers.count import run as run_count

        return run_count
    if kind == "fault":
        from worker.faults import run as run_fault

        return run_fault
    if kind == "escape":
        from worker.escape import run as run_escape

        return run_escape
    raise KeyError(kind)
