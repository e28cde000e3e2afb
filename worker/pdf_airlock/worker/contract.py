"""The contract between the two halves: the only worker module the supervisor may import.

It names what crosses the trust boundary and nothing else: the module the zygote runs, the
environment switches the supervisor may pass it, the job kinds reserved for the test suite, the
error codes a job child may report, the names of the sandbox layers, the kinds of line a job
child writes before its result envelope, and the names and ranges of OCR's limits. It imports
nothing but the standard library, so loading it loads no PDF engine (tests/unit/test_boundaries.py).

Messages of a ``WorkerError`` must never contain document bytes or passwords: the supervisor
sanitises them and maps any code it does not know to ``internal``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

__all__ = [
    "LINE_KINDS",
    "MARKDOWN_MAX_LEVEL",
    "MARKDOWN_PAGE_SEPARATOR",
    "OCR_LIMITS",
    "OCR_LIMITS_ARG",
    "PROBE_KIND",
    "SANDBOX_LAYERS",
    "STRICT_LOADS_ENV",
    "TEST_HOOKS_ENV",
    "TEST_KINDS",
    "WORKER_CODES",
    "ZYGOTE_MODULE",
    "Limits",
    "WorkerError",
]

# The supervisor starts the zygote as ``python -I -m ZYGOTE_MODULE``.
ZYGOTE_MODULE: Final = "pdf_airlock.worker.zygote"

# Switches the supervisor may pass to the zygote; only the server's own environment sets them.
# TEST_HOOKS_ENV=1 adds the TEST_KINDS to the job table and lets a job skip sandbox layers.
TEST_HOOKS_ENV: Final = "PDF_AIRLOCK_TEST_HOOKS"
# STRICT_LOADS_ENV=1 makes a lazy import or file open inside the sandbox fail loudly.
STRICT_LOADS_ENV: Final = "PDF_AIRLOCK_STRICT_LOADS"

# The sandbox self-test's job kind (``pdf-airlock self-test``): the child reports its layers.
PROBE_KIND: Final = "probe"

# Job kinds that exist only for the test suite: escape probes and fault injection
# (``pdf_airlock.worker.testing``). Every other job kind is a tool's name.
TEST_KINDS: Final[frozenset[str]] = frozenset({"escape", "fault"})

# The codes a job child may report in its error envelope.
WORKER_CODES: Final[frozenset[str]] = frozenset(
    {
        "not_a_pdf",
        "encrypted",
        "wrong_password",
        "malformed",
        "page_out_of_range",
        "memory_limit",
        "output_limit",
        "decompression_limit",
        "complexity_limit",
        "invalid_arguments",
        "timeout",
        "internal",
    }
)

# Sandbox layers in the order a job child applies them (``pdf_airlock.worker.sandbox``); the
# zygote reports each as available or not, and ``pdf-airlock self-test`` shows them.
SANDBOX_LAYERS: Final = (
    "process_group",
    "closed_fds",
    "env_allowlist",
    "unprivileged_uid",
    "namespaces",
    "rlimits",
    "no_new_privs",
    "landlock",
    "seccomp",
)

# Lines a job child may write on its result pipe before the envelope, each one JSON object
# ``{kind: value}`` on one line: ``progress`` (pages done, with ``total``) when the caller asked
# for progress; ``selection`` and ``page`` from a streamed ``pdf_read`` (a two-ended read).
LINE_KINDS: Final = ("progress", "selection", "page")

# ``pdf_markdown``: the deepest heading level (``####``), and what joins two pages' Markdown in an
# answer (the job child counts it against ``max_chars``; the supervisor puts it there).
MARKDOWN_MAX_LEVEL: Final = 4
MARKDOWN_PAGE_SEPARATOR: Final = "\n\n"

# OCR's limits (``pdf_airlock.worker.pdf.ocr``): name -> (default, lowest, highest). The
# supervisor sets them (``--ocr-*`` flags) and sends them with the arguments of every job that
# may OCR, as the object ``OCR_LIMITS_ARG``; the job child refuses a value out of its range.
OCR_LIMITS_ARG: Final = "ocr_limits"
OCR_LIMITS: Final[Mapping[str, tuple[int, int, int]]] = MappingProxyType(
    {
        "dpi": (300, 72, 1200),  # the resolution a page is rendered at for Tesseract
        "min_dpi": (100, 36, 1200),  # below it a page is refused (``memory_limit``), not read
        "max_pixels": (16_000_000, 10_000, 200_000_000),  # pixel budget of one rendered page
        "page_timeout_ms": (20_000, 1, 600_000),  # Tesseract's deadline per page (``timeout``)
        "low_confidence": (60, 0, 100),  # mean word confidence under which a page gets a warning
    }
)


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-job resource budget, chosen by the supervisor (``Settings.job_limits``) and applied by
    the child to itself (``pdf_airlock.worker.sandbox``). ``nice``: the child's scheduling
    niceness (0-19): untrusted parsing yields the CPU to the supervisor and its client.
    ``documents``: how many jobs one child may serve (``pdf_airlock.worker.child``); 1, a fresh
    child per document, unless the supervisor's ``--documents-per-child`` allows more."""

    memory_bytes: int
    cpu_seconds: int
    max_input_bytes: int
    max_result_bytes: int
    nice: int = 0
    documents: int = 1


class WorkerError(Exception):
    """A failure the job child reports as a typed error instead of a result."""

    def __init__(self, code: str, message: str, details: dict[str, object] | None = None) -> None:
        if code not in WORKER_CODES:
            raise ValueError(f"unknown worker error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
