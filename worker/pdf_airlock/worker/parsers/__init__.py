"""Parsers run inside the job child: one module per tool.

``parsers/<name>.py`` serves the job kind ``pdf_<name>``, the tool of the same name on the
server side (``pdf_airlock.server.tools.<name>``; tests/unit/test_layout.py checks they match one to
one). Each declares ``KIND``, ``run(data, args)`` and ``warm_up(sample)``. ``run`` takes the
document's bytes (already read from the input fd) and the job's arguments, which the supervisor
validated; it assumes nothing about the bytes and returns a JSON-serialisable dict or raises
``WorkerError``. ``warm_up`` runs it on the trusted sample document in the zygote, so a job child
finds everything it needs already loaded.

The job table is derived from the module names, without importing them: the zygote imports
them during its warm-up, in the order it chooses.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from types import ModuleType
from typing import Any, Final

from pdf_airlock.worker.contract import TEST_KINDS

__all__ = ["TOOL_KINDS", "Parser", "get_parser", "parser_modules"]

Parser = Callable[[bytes, dict[str, Any]], dict[str, Any]]

# Job kind -> module, one per module of this package.
TOOL_KINDS: Final[dict[str, str]] = {
    f"pdf_{module.name}": f"{__name__}.{module.name}" for module in sorted(pkgutil.iter_modules(__path__))
}
# Test-only kinds: the zygote serves them only with the test hooks on (``contract.TEST_HOOKS_ENV``).
_TEST_MODULES: Final = {
    "escape": "pdf_airlock.worker.testing.escape",
    "fault": "pdf_airlock.worker.testing.faults",
}
assert set(_TEST_MODULES) == TEST_KINDS


def parser_modules() -> list[ModuleType]:
    """Every tool's parser module, imported, in job-kind order."""
    return [importlib.import_module(name) for name in TOOL_KINDS.values()]


def get_parser(kind: str) -> Parser:
    """The parser for a job kind. In a job child the module is always imported already (the zygote
    imported it; the child can open no file)."""
    module = importlib.import_module(TOOL_KINDS.get(kind) or _TEST_MODULES[kind])
    parser: Parser = module.run
    return parser
