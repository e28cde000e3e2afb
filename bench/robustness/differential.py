"""Differential test: every tool's job in the sandbox and in this process, on the same files.

``python -m bench.robustness.differential --corpus DIR [--corpus DIR2 ...] [--tools pdf_read,pdf_search]
[--jobs 2] [--limit N] [--out FILE.json] [--strict-loads] [--sandbox-only]``

Each ``*.pdf`` in ``--corpus`` (nothing is fetched: pdf.js's ``test/pdfs`` is one such folder;
never commit corpus files) goes through each tool's job, ``pdf_read`` twice (``engine`` fast and
layout), with the arguments the supervisor sends for the tool's defaults, twice:

- **sandbox**: a job child of ``pdf_airlock.server.pool.pool.Pool``, the supervisor's own path, with the
  server's
  default limits except a generous deadline and CPU budget (``SANDBOX_TIMEOUT_S``);
- **in-process**: the job child's own code in this process after ``pdf_airlock.worker.warmup.warm_up()`` (as
  the zygote does): ``pdf_airlock.worker.child._execute`` (its input fd pointed at the same memfd) and
  ``_encode``, so exceptions become typed errors exactly as in a child; no sandbox, no limits
  (a guard stops a runaway parse: ``IN_PROCESS_GUARD_S``, ``IN_PROCESS_GUARD_BYTES``).

``pdf_read/hidden`` is ``pdf_read`` (fast) with ``include_hidden``: both sides must agree on what
the visibility check leaves out too, and the report counts it (``withheld``): characters left out
per corpus, by reason, and the documents where it left out more than a few, to be read.

Both outcomes are judged by ``pdf_airlock.server.pool.verdict.classify`` (so both results are JSON
round-tripped and both errors are supervisor codes), then validated like
``pdf_airlock.server.app.calls.App.run_job`` does (a result its model refuses is ``crashed``). A document's
sandbox jobs run in parallel (``--jobs``), then its in-process jobs one after the other, so the two never
share the CPU. Classes of difference:

- ``ok vs error (CODE in sandbox|in-process)``; ``error code differs``;
- ``text differs`` (``pages[].text`` only; a hint counts ``(cid:N)``, U+FFFE and ligatures on
  each side, and the length ratio sandbox / in-process); ``field differs: KEY`` (top-level key);
- ``limit only in sandbox`` / ``limit only in-process`` (``timeout``, ``cpu_limit``,
  ``memory_limit`` on one side only), counted apart: the resource limits differ by design;
- ``in-process not run``: the sandbox child died of a signal, which would kill this process.

A differing job runs once more on each side, and its detail says whether each side's answer
changed ("run again: sandbox same, in-process differs"): a side that changes is the parser's
nondeterminism or state left by earlier documents in this process, not the sandbox.

``internal``, ``crashed`` and ``sandbox_violation`` are bugs wherever they appear, even on both
sides. ``--sandbox-only`` is a sweep for those: each job in the sandbox only (nothing compared),
in half the time; several ``--corpus`` folders are read as one (the table counts each job's
error codes and bugs). ``--strict-loads`` sets ``PDF_AIRLOCK_STRICT_LOADS=1`` for the zygote
(``pdf_airlock.worker.strict_loads``): a lazy load after sandboxing is then an ``internal`` error naming it.
Prints a markdown table (for docs/robustness.md) and the files of each class; ``--out`` writes
every job's outcome and raw differences as JSON. If worker/ changed or the zygote restarted
during the run, the header says so: the two sides may have run different code.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import logging
import math
import os
import re
import resource
import shlex
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from collections.abc import AsyncIterator, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, Final
from unittest import mock

import anyio
from pydantic import BaseModel, ValidationError

from pdf_airlock.server.app.calls import _clean_tree  # the supervisor's own sanitising, before validation
from pdf_airlock.server.config import DEFAULTS, Settings
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.log import configure_logging, report_logger
from pdf_airlock.server.pool.child_output import JobOutcome
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.server.tools.registry import TOOLS
from pdf_airlock.worker.contract import STRICT_LOADS_ENV

ROOT = Path(__file__).resolve().parents[2]

__all__ = [
    "JOBS",
    "Difference",
    "InProcess",
    "JobRecord",
    "Side",
    "bugs",
    "compare",
    "diff_document",
    "jobs_for",
    "sandbox_pool",
    "sandbox_settings",
    "text_hint",
]

SANDBOX_TIMEOUT_S: Final = 60.0
# In-process guards, far above the sandbox's limits: only a runaway parse meets them.
IN_PROCESS_GUARD_S: Final = 180.0
IN_PROCESS_GUARD_BYTES: Final = 8 << 30
RENDER_DPI: Final = 36
SEARCH_QUERY: Final = "the"
LIMIT_CODES: Final = frozenset({"timeout", "cpu_limit", "memory_limit"})
BUG_CODES: Final = frozenset({"internal", "crashed", "sandbox_violation"})
# Signals a sandbox child died of that would kill this process too if the parse ran here.
_FATAL_SIGNALS: Final = frozenset({"SIGSEGV", "SIGABRT", "SIGBUS", "SIGILL", "SIGFPE", "SIGTRAP"})
LIMIT_IN_SANDBOX: Final = "limit only in sandbox"
LIMIT_IN_PROCESS: Final = "limit only in-process"
NOT_RUN: Final = "in-process not run (sandbox child died of a signal)"
TEXT_DIFFERS: Final = "text differs"
_CID: Final = re.compile(r"\(cid:\d+\)")
_LIGATURES: Final = frozenset("\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06")
_EXCERPT_CHARS: Final = 300
_CONTEXT_CHARS: Final = 40
_TOP: Final = 10
_PROGRESS_EVERY: Final = 25
_P95: Final = 0.95
WITHHELD_SHOWN_CHARS: Final = 20  # a document the check leaves out this much of is listed, to be read


@dataclass(frozen=True, slots=True)
class Job:
    """One row of the table: a job kind with its arguments and the model that validates it."""

    name: str
    kind: str
    args: dict[str, Any]
    model: type[BaseModel]


def _untrusted(tool: str) -> type[BaseModel]:
    """The model a tool's job result must satisfy (``Pdf<Name>Untrusted`` in its tool module)."""
    module = sys.modules[TOOLS[tool].run.__module__]
    model: type[BaseModel] = getattr(module, f"Pdf{tool[4:].title()}Untrusted")
    return model


def _jobs(password: str | None) -> list[Job]:
    """The job arguments the supervisor sends for each tool's defaults: built in
    each tool module (``pdf_airlock.server.tools.<name>``) from the defaults of its
    argument model. ``pdf_render`` asks for page 1 at a
    low dpi; ``pdf_images`` only lists."""
    # The tools that may OCR get the server's default, "auto": a page without a usable text layer
    # is read by Tesseract on both sides.
    read: dict[str, Any] = {"pages": None, "password": password, "max_chars": 100_000, "start_index": 0}
    read |= {"start_offset": 0, "ocr": "auto", "ocr_languages": ["eng"]}
    search = {"query": SEARCH_QUERY, "regex": False, "case_sensitive": False, "whole_word": False}
    return [
        Job(
            "pdf_info",
            "pdf_info",
            {"pages": None, "password": password, "start": 0},
            _untrusted("pdf_info"),
        ),
        Job("pdf_read/fast", "pdf_read", read | {"engine": "fast"}, _untrusted("pdf_read")),
        Job("pdf_read/layout", "pdf_read", read | {"engine": "layout"}, _untrusted("pdf_read")),
        # What the visibility check leaves out, listed (``withheld`` reports it by document).
        Job(
            "pdf_read/hidden",
            "pdf_read",
            read | {"engine": "fast", "include_hidden": True},
            _untrusted("pdf_read"),
        ),
        Job(
            "pdf_markdown",
            "pdf_markdown",
            {"pages": None, "password": password, "max_chars": 100_000, "start_index": 0, "start_offset": 0}
            | {"h1": 0, "h2": 0, "h3": 0, "h4": 0, "ocr": "auto", "ocr_languages": ["eng"]},
            _untrusted("pdf_markdown"),
        ),
        Job(
            "pdf_tables",
            "pdf_tables",
            {"pages": None, "password": password, "max_tables": 50, "start_index": 0, "start_table": 0},
            _untrusted("pdf_tables"),
        ),
        Job(
            "pdf_outline",
            "pdf_outline",
            {"password": password, "max_depth": 16, "max_items": 1000, "start": 0},
            _untrusted("pdf_outline"),
        ),
        Job(
            "pdf_attachments",
            "pdf_attachments",
            {"password": password, "extract": None, "max_bytes": 10 << 20, "max_items": 1000, "start": 0},
            _untrusted("pdf_attachments"),
        ),
        Job(
            "pdf_annotations",
            "pdf_annotations",
            {"password": password, "pages": None, "max_items": 2000, "start": 0},
            _untrusted("pdf_annotations"),
        ),
        Job(
            "pdf_forms",
            "pdf_forms",
            {"password": password, "max_items": 2000, "start": 0},
            _untrusted("pdf_forms"),
        ),
        Job("pdf_security", "pdf_security", {"password": password}, _untrusted("pdf_security")),
        Job(
            "pdf_search",
            "pdf_search",
            search
            | {"pages": None, "password": password, "context_chars": 80, "max_results": 100}
            | {"time_budget_ms": 2000, "start_index": 0, "skip": 0, "ocr": "auto", "ocr_languages": ["eng"]},
            _untrusted("pdf_search"),
        ),
        Job(
            "pdf_render",
            "pdf_render",
            {"password": password, "page": "1", "dpi": RENDER_DPI, "max_pixels": 4_000_000},
            _untrusted("pdf_render"),
        ),
        Job(
            "pdf_images",
            "pdf_images",
            {"password": password, "pages": None, "max_items": 500, "max_pixels": 4_000_000}
            | {"extract": None, "start": 0},
            _untrusted("pdf_images"),
        ),
    ]


JOBS: Final = _jobs(None)


def jobs_for(password: str | None = None, tools: set[str] | None = None) -> list[Job]:
    """The jobs of ``tools`` (tool names, or job names like ``pdf_read/layout``; all if None)."""
    return [job for job in _jobs(password) if tools is None or {job.name, job.kind} & tools]


# -- one job on each side -------------------------------------------------------------------


@dataclass(slots=True)
class Side:
    """One side's outcome: a result (JSON round-tripped) or an error code."""

    result: dict[str, Any] | None = None
    code: str | None = None
    message: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    wall_ms: float | None = None
    skipped: bool = False

    def summary(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "details": self.details, "wall_ms": self.wall_ms}


def _judged(job: Job, outcome: JobOutcome, settings: Settings) -> Side:
    """``classify`` then the tool's model, as the supervisor judges a job."""
    try:
        result = classify(outcome, settings.memory_bytes, settings.timeout_s)
        cleaned, _removed = _clean_tree(result)
        job.model.model_validate(cleaned)
    except ToolError as error:
        return Side(code=error.code, message=error.message, details=error.details, wall_ms=outcome.wall_ms)
    except ValidationError as exc:
        message = f"the result failed validation ({exc.error_count()} errors)"
        return Side(code="crashed", message=message, wall_ms=outcome.wall_ms)
    return Side(result=result, wall_ms=outcome.wall_ms)


def sandbox_settings(jobs: int) -> Settings:
    """The server's defaults (memory, input and result caps, niceness) with a generous deadline."""
    return Settings(timeout_s=SANDBOX_TIMEOUT_S, cpu_seconds=int(SANDBOX_TIMEOUT_S), workers=jobs)


@contextlib.asynccontextmanager
async def sandbox_pool(settings: Settings) -> AsyncIterator[Pool]:
    """A pool as the server builds it: ``settings.workers`` jobs at once."""
    async with Pool(
        settings.workers, DEFAULTS.queue_depth, DEFAULTS.zygote_start_timeout_s, DEFAULTS.kill_grace_s
    ) as pool:
        yield pool


async def run_sandboxed(pool: Pool, settings: Settings, job: Job, fd: int) -> Side:
    try:
        outcome = await pool.run(
            job.kind,
            job.args,
            fd,
            limits=settings.job_limits(),
            deadline_s=settings.timeout_s,
            sandbox=settings.sandbox_spec(),
        )
    except ToolError as error:  # overloaded, worker_unavailable, an unresponsive zygote
        return Side(code=error.code, message=error.message, details=error.details)
    return _judged(job, outcome, settings)


class _Overdue(BaseException):
    """The in-process guard's alarm: a BaseException, so ``_execute`` does not make it an error."""


def _overdue(_signum: int, _frame: FrameType | None) -> None:
    raise _Overdue


@contextlib.contextmanager
def _alarm(seconds: float | None) -> Iterator[None]:
    if seconds is None:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _overdue)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class InProcess:
    """The job child's code path in this process, without the sandbox: ``_execute`` reads its
    input from ``CHILD_INPUT_FD``, which points at the document's memfd for the call."""

    def __init__(self, settings: Settings, guard_s: float | None = IN_PROCESS_GUARD_S) -> None:
        from pdf_airlock.worker.warmup import warm_up

        warm_up()  # the zygote's warm-up, so both sides run the same (patched, preloaded) code
        self.settings = settings
        self.limits = settings.job_limits()
        self.guard_s = guard_s

    def run(self, job: Job, fd: int) -> Side:
        from pdf_airlock.worker import child
        from pdf_airlock.worker.contract import Job as JobMessage
        from pdf_airlock.worker.sandbox.layers import SandboxReport

        started = time.perf_counter()
        try:
            with mock.patch.object(child, "CHILD_INPUT_FD", fd), _alarm(self.guard_s):
                message = JobMessage(0, job.kind, job.args, self.limits, {}, 0.0, 0.0)
                reply = child._execute(message, self.limits, SandboxReport())
                output = child._encode(reply, self.limits.max_result_bytes)
        except _Overdue:
            wall_ms = (time.perf_counter() - started) * 1000
            return Side(code="timeout", message=f"in-process guard ({self.guard_s:g} s)", wall_ms=wall_ms)
        wall_ms = round((time.perf_counter() - started) * 1000, 3)
        outcome = JobOutcome(output, False, 0, False, False, wall_ms, {})
        return _judged(job, outcome, self.settings)


# -- comparing ------------------------------------------------------------------------------


@dataclass(slots=True)
class Difference:
    cls: str
    detail: str = ""
    score: float = 0.0  # orders the files of a class: the largest differences first


def _excerpt(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= _EXCERPT_CHARS else text[:_EXCERPT_CHARS] + "..."


def text_hint(sandbox: str, local: str) -> str:
    """What kind of text difference: (cid:N), U+FFFE and ligature counts (sandbox/in-process), and
    the length ratio sandbox / in-process."""
    ratio = len(sandbox) / len(local) if local else math.inf
    return (
        f"(cid:N) {len(_CID.findall(sandbox))}/{len(_CID.findall(local))}, "
        f"U+FFFE {sandbox.count(chr(0xFFFE))}/{local.count(chr(0xFFFE))}, "
        f"ligatures {sum(c in _LIGATURES for c in sandbox)}/{sum(c in _LIGATURES for c in local)}, "
        f"length ratio {ratio:.3f}"
    )


def _first_change(sandbox: str, local: str) -> str:
    at = next(
        (i for i, (a, b) in enumerate(zip(sandbox, local, strict=False)) if a != b),
        min(len(sandbox), len(local)),
    )
    lo, hi = max(0, at - _CONTEXT_CHARS), at + _CONTEXT_CHARS
    return f"at char {at}: sandbox {sandbox[lo:hi]!r} vs in-process {local[lo:hi]!r}"


def _text_only(sandbox: object, local: object) -> bool:
    """Two page lists that differ in their ``text`` fields alone."""
    if not (isinstance(sandbox, list) and isinstance(local, list) and len(sandbox) == len(local)):
        return False
    for a, b in zip(sandbox, local, strict=True):
        if not (isinstance(a, dict) and isinstance(b, dict) and "text" in a and "text" in b):
            return False
        if {k: v for k, v in a.items() if k != "text"} != {k: v for k, v in b.items() if k != "text"}:
            return False
    return True


def _text_difference(sandbox: list[dict[str, Any]], local: list[dict[str, Any]]) -> Difference:
    changed = [(a, b) for a, b in zip(sandbox, local, strict=True) if a["text"] != b["text"]]
    a, b = changed[0]
    whole_a, whole_b = "".join(p["text"] for p in sandbox), "".join(p["text"] for p in local)
    ratio = len(whole_a) / len(whole_b) if whole_b else math.inf
    detail = (
        f"{len(changed)} page(s), first page {a['page']}; {text_hint(whole_a, whole_b)}; "
        f"{_first_change(a['text'], b['text'])}"
    )
    return Difference(TEXT_DIFFERS, detail, abs(math.log(ratio)) if 0 < ratio < math.inf else math.inf)


def _result_differences(sandbox: dict[str, Any], local: dict[str, Any]) -> list[Difference]:
    differences = []
    missing = object()
    for key in sorted(sandbox.keys() | local.keys()):
        a, b = sandbox.get(key, missing), local.get(key, missing)
        if a == b:
            continue
        if _text_only(a, b):
            differences.append(_text_difference(a, b))
        else:
            shown = [_excerpt(v) if v is not missing else "(missing)" for v in (a, b)]
            differences.append(
                Difference(f"field differs: {key}", f"sandbox {shown[0]} vs in-process {shown[1]}")
            )
    return differences


def compare(sandbox: Side, local: Side) -> list[Difference]:
    """The differences between the sandbox's and the in-process outcome of one job."""
    if local.skipped:
        return [Difference(NOT_RUN, f"sandbox: {sandbox.code} {sandbox.details}")]
    if sandbox.code is None and local.code is None:
        assert sandbox.result is not None and local.result is not None
        return _result_differences(sandbox.result, local.result)
    if sandbox.code == local.code:
        return []
    detail = (
        f"sandbox {sandbox.code or 'ok'} ({sandbox.message}) "
        f"vs in-process {local.code or 'ok'} ({local.message})"
    )
    if sandbox.code in LIMIT_CODES and local.code not in LIMIT_CODES:
        return [Difference(LIMIT_IN_SANDBOX, detail)]
    if local.code in LIMIT_CODES and sandbox.code not in LIMIT_CODES:
        return [Difference(LIMIT_IN_PROCESS, detail)]
    if sandbox.code is None or local.code is None:
        where = "in sandbox" if sandbox.code is not None else "in-process"
        return [Difference(f"ok vs error ({sandbox.code or local.code} {where})", detail)]
    return [Difference("error code differs", detail)]


def bugs(sandbox: Side, local: Side) -> list[Difference]:
    """``internal``, ``crashed`` and ``sandbox_violation`` on either side: bugs by definition."""
    found = []
    for where, side in (("in sandbox", sandbox), ("in-process", local)):
        if side.code in BUG_CODES:
            found.append(Difference(f"bug: {side.code} {where}", f"{side.message} {side.details}"))
    return found


@dataclass(slots=True)
class JobRecord:
    job: str
    sandbox: Side
    in_process: Side
    differences: list[Difference]
    bugs: list[Difference]


def _died_of_signal(side: Side) -> bool:
    return side.code in {"crashed", "memory_limit"} and side.details.get("signal") in _FATAL_SIGNALS


async def diff_document(
    pool: Pool, in_process: InProcess | None, settings: Settings, data: bytes, jobs: list[Job]
) -> list[JobRecord]:
    """Every job on ``data`` in the sandbox (in parallel, up to the pool's workers), then in this
    process (one by one), compared; with no ``in_process``, the sandbox's outcomes alone."""
    fd = os.memfd_create("differential", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        sandboxed: list[Side] = [Side() for _ in jobs]

        async def one(index: int) -> None:
            sandboxed[index] = await run_sandboxed(pool, settings, jobs[index], fd)

        async with anyio.create_task_group() as group:
            for index in range(len(jobs)):
                group.start_soon(one, index)
        records = []
        for job, sandbox in zip(jobs, sandboxed, strict=True):
            if in_process is None:
                records.append(JobRecord(job.name, sandbox, Side(skipped=True), [], bugs(sandbox, Side())))
                continue
            local = Side(skipped=True) if _died_of_signal(sandbox) else in_process.run(job, fd)
            differences = compare(sandbox, local)
            if differences and not local.skipped:
                note = await _repeat_note(pool, in_process, settings, job, fd, (sandbox, local))
                for difference in differences:
                    difference.detail = f"{note}; {difference.detail}"
            records.append(JobRecord(job.name, sandbox, local, differences, bugs(sandbox, local)))
        return records
    finally:
        os.close(fd)


async def _repeat_note(
    pool: Pool, in_process: InProcess, settings: Settings, job: Job, fd: int, first: tuple[Side, Side]
) -> str:
    """Each side runs a differing job once more: an answer that changes between runs of the same
    side is the parser's nondeterminism or state, not the sandbox."""
    again = (await run_sandboxed(pool, settings, job, fd), in_process.run(job, fd))
    verdicts = ["same" if not compare(a, b) else "differs" for a, b in zip(first, again, strict=True)]
    return f"run again: sandbox {verdicts[0]}, in-process {verdicts[1]}"


# -- the report -----------------------------------------------------------------------------


@dataclass(slots=True)
class _Row:
    files: int = 0
    same: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    errors: tuple[Counter[str], Counter[str]] = field(default_factory=lambda: (Counter(), Counter()))
    bugs: int = 0
    ms: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))


def _percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, math.ceil(_P95 * len(ordered)) - 1)]
    return f"{statistics.median(ordered):.0f} / {p95:.0f}"


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{name} {count}" for name, count in sorted(counter.items())) or "-"


def table(results: dict[str, list[JobRecord]]) -> str:
    rows: dict[str, _Row] = defaultdict(_Row)
    for records in results.values():
        for record in records:
            row = rows[record.job]
            row.files += 1
            row.same += not record.differences
            row.classes.update({d.cls for d in record.differences})
            row.bugs += bool(record.bugs)
            for index, side in enumerate((record.sandbox, record.in_process)):
                if side.code is not None:
                    row.errors[index][side.code] += 1
                if side.wall_ms is not None:
                    row.ms[index].append(side.wall_ms)
    lines = [
        "| job | files | same | differences by class | limit only in sandbox | errors, sandbox | "
        "errors, in-process | bugs | ms p50 / p95, sandbox | ms p50 / p95, in-process |",
        "|---|---:|---:|---|---:|---|---|---:|---:|---:|",
    ]
    for name in [job.name for job in JOBS if job.name in rows]:
        row = rows[name]
        limited = row.classes.pop(LIMIT_IN_SANDBOX, 0)
        lines.append(
            f"| {name} | {row.files} | {row.same} | {_counts(row.classes)} | {limited} | "
            f"{_counts(row.errors[0])} | {_counts(row.errors[1])} | {row.bugs} | "
            f"{_percentiles(row.ms[0])} | {_percentiles(row.ms[1])} |"
        )
    return "\n".join(lines)


def withheld(results: dict[str, list[JobRecord]], at_least: int = WITHHELD_SHOWN_CHARS) -> str:
    """What the visibility check leaves out of ``pdf_read`` (the ``pdf_read/hidden`` job, which
    lists the hidden runs; in-process, or the sandbox's where in-process failed): characters left
    out against those kept, documents with any, runs by reason, and each document where it left
    out ``at_least`` characters or more (the ones to look at)."""
    kept = removed = documents = 0
    reasons: Counter[str] = Counter()
    listed: list[tuple[int, str, str]] = []
    for name, records in results.items():
        for record in records:
            result = record.in_process.result or record.sandbox.result
            if record.job != "pdf_read/hidden" or result is None:
                continue
            pages = result["pages"]
            runs = [run for page in pages for run in page.get("hidden", [])]
            chars = sum(len(run["text"]) for run in runs)
            kept += sum(len(page["text"]) for page in pages)
            removed += chars
            documents += bool(runs)
            mine = Counter(run["reason"] for run in runs)
            reasons.update(mine)
            if chars >= at_least:
                first = " ".join(runs[0]["text"].split())[:60]
                listed.append((chars, name, f"{_counts(mine)}; first: {first!r} (page {runs[0]['page']})"))
    if not kept and not removed:
        return ""
    share = removed / (kept + removed) if kept + removed else 0.0
    lines = [
        "",
        f"**withheld by the visibility check** (pdf_read/hidden): {removed:,} characters of "
        f"{kept + removed:,} ({share:.3%}) in {documents} document(s); runs by reason: {_counts(reasons)}",
        "",
        f"Documents with {at_least} or more characters left out:",
        "",
    ]
    lines += [f"- {name}: {chars:,} chars; {detail}" for chars, name, detail in sorted(listed, reverse=True)]
    return "\n".join(lines)


def by_class(results: dict[str, list[JobRecord]]) -> str:
    """The files of each class of difference and bug, the largest differences first."""
    found: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
    for name, records in results.items():
        for record in records:
            for item in [*record.differences, *record.bugs]:
                found[item.cls].append((-item.score, f"{name} ({record.job})", item.detail))
    lines = []
    for cls in sorted(found):
        entries = sorted(found[cls])
        lines.append(f"\n**{cls}** ({len(entries)} jobs)\n")
        lines += [f"- {where}: {detail[:_EXCERPT_CHARS]}" for _score, where, detail in entries[:_TOP]]
    return "\n".join(lines)


def _raw(results: dict[str, list[JobRecord]], command: str, seconds: float) -> dict[str, Any]:
    return {
        "command": command,
        "seconds": round(seconds, 1),
        "files": {
            name: {
                record.job: {
                    "sandbox": record.sandbox.summary(),
                    "in_process": record.in_process.summary(),
                    "differences": [asdict(d) for d in record.differences],
                    "bugs": [asdict(d) for d in record.bugs],
                }
                for record in records
            }
            for name, records in results.items()
        },
    }


def _commit() -> str:
    describe = ["git", "describe", "--always", "--dirty"]
    done = subprocess.run(describe, cwd=ROOT, capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


async def _run(ns: argparse.Namespace, files: list[Path]) -> tuple[dict[str, list[JobRecord]], int]:
    """The results by file name, and how many times the zygote was restarted (each restart
    imports the worker's code afresh)."""
    tools = set(ns.tools.split(",")) if ns.tools else None
    jobs = jobs_for(None, tools)
    settings = sandbox_settings(ns.jobs)
    log = report_logger()
    results: dict[str, list[JobRecord]] = {}
    started = time.monotonic()
    async with sandbox_pool(settings) as pool:
        in_process = None if ns.sandbox_only else InProcess(settings)
        for count, path in enumerate(files, start=1):
            data = path.read_bytes()
            results[_name(path, ns.corpus)] = await diff_document(pool, in_process, settings, data, jobs)
            if count % _PROGRESS_EVERY == 0 or count == len(files):
                differing = sum(any(r.differences for r in records) for records in results.values())
                elapsed = round(time.monotonic() - started, 1)
                log.info(
                    "differential_progress", files=count, of=len(files), differing=differing, seconds=elapsed
                )
        return results, pool.restarts


def _name(path: Path, corpora: list[Path]) -> str:
    """A file's name, prefixed with its folder's when several corpora are read."""
    return path.name if len(corpora) == 1 else f"{path.parent.name}/{path.name}"


def _worker_digest() -> str:
    """The worker's sources: if they change during a run, the zygote (or a restarted one) and this
    process may have run different code."""
    digest = hashlib.sha256()
    for path in sorted((ROOT / "worker").rglob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus",
        type=Path,
        required=True,
        action="append",
        help="folder of *.pdf files (nothing is fetched); repeat for several",
    )
    parser.add_argument("--tools", help="comma-separated tools or jobs (pdf_read/layout); default: all")
    parser.add_argument("--jobs", type=int, default=2, help="sandbox jobs at once (the pool's workers)")
    parser.add_argument("--limit", type=int, help="only the first N files (by name)")
    parser.add_argument("--out", type=Path, help="write every job's outcome and differences here (JSON)")
    parser.add_argument(
        "--strict-loads", action="store_true", help="a lazy load after sandboxing fails the job"
    )
    parser.add_argument(
        "--sandbox-only", action="store_true", help="a sweep for bugs: no in-process side, nothing compared"
    )
    ns = parser.parse_args()
    if ns.strict_loads:
        os.environ[STRICT_LOADS_ENV] = "1"  # the pool passes it to the zygote
    configure_logging("warning")
    logging.getLogger("pdfminer").setLevel(logging.ERROR)  # its warnings about each odd font, in-process
    files = sorted(
        p for corpus in ns.corpus for p in corpus.iterdir() if p.suffix.lower() == ".pdf" and p.is_file()
    )[: ns.limit]
    # The in-process guard's memory cap (the zygote inherits it as its own; each child lowers it).
    resource.setrlimit(
        resource.RLIMIT_AS, (IN_PROCESS_GUARD_BYTES, resource.getrlimit(resource.RLIMIT_AS)[1])
    )
    started, code = time.monotonic(), _worker_digest()
    results, restarts = anyio.run(_run, ns, files)
    seconds = time.monotonic() - started
    command = shlex.join(["python", "-m", "bench.robustness.differential", *sys.argv[1:]])
    if ns.out is not None:
        ns.out.write_text(json.dumps(_raw(results, command, seconds), ensure_ascii=False, indent=1))
    header = f"`{command}` on {_commit()}: {len(files)} files in {seconds:.0f} s"
    if restarts or _worker_digest() != code:
        header += f" (**worker/ changed or the zygote restarted ({restarts}) during the run: run it again**)"
    sys.stdout.write(f"{header}\n\n{table(results)}\n{withheld(results)}\n{by_class(results)}\n")


if __name__ == "__main__":
    main()
