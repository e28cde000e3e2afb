"""Parsers run inside the job child, one per job kind.

Each parser takes the document's bytes (already read from the input fd) and the job's
arguments, which the supervisor validated; it assumes nothing about the bytes. It returns a
JSON-serialisable dict or raises ``WorkerError``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Final

__all__ = ["Parser", "get_parser"]

Parser = Callable[[bytes, dict[str, Any]], dict[str, Any]]


_MODULES: Final = {
    "pdf_info": "pdf_airlock.worker.parsers.info",
    "pdf_read": "pdf_airlock.worker.parsers.read",
    "pdf_outline": "pdf_airlock.worker.parsers.outline",
    "pdf_attachments": "pdf_airlock.worker.parsers.attachments",
    "pdf_annotations": "pdf_airlock.worker.parsers.annotations",
    "pdf_forms": "pdf_airlock.worker.parsers.forms",
    "pdf_security": "pdf_airlock.worker.parsers.security",
    "pdf_search": "pdf_airlock.worker.parsers.search",
    "pdf_render": "pdf_airlock.worker.parsers.render",
    "pdf_images": "pdf_airlock.worker.parsers.images",
    "page_count": "pdf_airlock.worker.parsers.count",
    "escape": "pdf_airlock.worker.testing.escape",
    "fault": "pdf_airlock.worker.testing.faults",
}


def get_parser(kind: str) -> Parser:
    """The parser for a job kind. Imported lazily so the zygote controls warm-up order; in a job
    child the module is always imported already (the child can open no file)."""
    module = importlib.import_module(_MODULES[kind])
    parser: Parser = module.run
    return parser
