"""Reading one long document with several job children at once.

A ``pdf_read`` of many pages is cut into contiguous page ranges that run in parallel (each in
its own sandboxed child, up to ``--workers`` at a time). Results are taken in page order until
``max_chars`` is spent; chunks that are no longer needed are cancelled, so at most a few chunks
of work are wasted when the budget runs out early. The answer, including its cursor position,
is exactly what a single child would have produced.

Only plain selections are split (all pages, or one range ``a-b`` / ``a-``); anything else, a short document,
or fewer than ``MIN_SPLIT_WORKERS`` workers takes the two-ended read
(``pdf_airlock.server.tools.read_two_ended``) or the single-child path. With two workers the two-ended read is
as good or better: a split read pays for a ``page_count`` job first, which on 2 cores made reads at the
default ``max_chars`` slower than one child and whole 100-page reads slower than two ends.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Final

import anyio

from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.policy.paths import Document
from pdf_airlock.server.pool.child_output import ProgressFn
from pdf_airlock.server.tools.runner import JobRunner
from pdf_airlock.server.tools.untrusted import PageCountUntrusted, PdfReadUntrusted

__all__ = ["MIN_SPLIT_BYTES", "MIN_SPLIT_WORKERS", "split_read"]

MIN_SPLIT_BYTES: Final = 64 * 1024
MIN_SPLIT_WORKERS: Final = 3
MIN_CHUNK_PAGES: Final = 16
CHUNKS_PER_WORKER: Final = 2
_RANGE = re.compile(r"^\s*(\d*)\s*-\s*(\d*)\s*$|^\s*(all)?\s*$")


def _plain(selector: str | None) -> bool:
    """All pages or one range, spanning enough pages to be worth splitting if it is bounded."""
    match = _RANGE.match(selector or "")
    if match is None:
        return False
    if match.group(1) and match.group(2):
        return int(match.group(2)) - int(match.group(1)) + 1 >= 2 * MIN_CHUNK_PAGES
    return True


def _range(selector: str | None, page_count: int) -> tuple[int, int] | None:
    """0-based [first, end) for a plain selector, or None if it is not a plain range."""
    match = _RANGE.match(selector or "")
    if match is None:
        return None
    first = int(match.group(1)) - 1 if match.group(1) else 0
    end = int(match.group(2)) if match.group(2) else page_count
    if first < 0 or end > page_count or first >= end:
        return None  # let the single-child path report the precise error
    return first, end


async def split_read(
    runner: JobRunner, job_args: dict[str, Any], document: Document
) -> tuple[PdfReadUntrusted, list[str]] | None:
    """The merged result, or None when this read is not worth splitting."""
    if (
        runner.workers < MIN_SPLIT_WORKERS
        or document.size < MIN_SPLIT_BYTES
        or not _plain(job_args.get("pages"))
    ):
        return None  # decided before the page-count job, which would otherwise cost a fork
    count_args = {"password": job_args.get("password")}
    counted, _ = await runner.run_job("page_count", count_args, document, PageCountUntrusted, report=False)
    span = _range(job_args.get("pages"), counted.page_count)
    if span is None:
        return None
    first, end = span
    selection_size = end - first
    start_index = int(job_args.get("start_index", 0))
    todo = selection_size - start_index
    if todo < 2 * MIN_CHUNK_PAGES:
        return None
    chunk = max(MIN_CHUNK_PAGES, math.ceil(todo / (runner.workers * CHUNKS_PER_WORKER)))
    bounds = [
        (index, min(index + chunk, selection_size)) for index in range(start_index, selection_size, chunk)
    ]
    chunks = _Chunks(bounds)
    results, ready, failures = chunks.results, chunks.ready, chunks.failures

    async def run_chunk(number: int, lo: int, hi: int) -> None:
        args = job_args | {"pages": f"{first + lo + 1}-{first + hi}", "start_index": 0}
        args["start_offset"] = job_args.get("start_offset", 0) if number == 0 else 0
        try:
            results[number], _ = await runner.run_job(
                "pdf_read", args, document, PdfReadUntrusted, report=False
            )
        except ToolError as error:
            failures.append(error)
        finally:
            ready[number].set()

    async with anyio.create_task_group() as tg:
        for number, (lo, hi) in enumerate(bounds):
            tg.start_soon(run_chunk, number, lo, hi)
        merged = await _merge(chunks, int(job_args["max_chars"]), runner.progress())
        tg.cancel_scope.cancel()
    engine = str(job_args.get("engine", "fast"))
    result = PdfReadUntrusted.model_validate(
        {"engine": engine, "page_count": counted.page_count, "selected_pages": selection_size, **merged}
    )
    return result, []


@dataclass(slots=True)
class _Chunks:
    """Page ranges [lo, hi) of the selection and, as they finish, their results."""

    bounds: list[tuple[int, int]]
    results: list[PdfReadUntrusted | None] = field(init=False)
    ready: list[anyio.Event] = field(init=False)
    failures: list[ToolError] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.results = [None] * len(self.bounds)
        self.ready = [anyio.Event() for _ in self.bounds]


async def _merge(chunks: _Chunks, max_chars: int, progress: ProgressFn | None) -> dict[str, Any]:
    bounds, results, ready, failures = chunks.bounds, chunks.results, chunks.ready, chunks.failures
    pages: list[dict[str, Any]] = []
    remaining = max_chars
    warnings: list[str] = []
    for number, (lo, hi) in enumerate(bounds):
        await ready[number].wait()
        part = results[number]
        if part is None:
            raise failures[0]
        warnings += part.warnings
        for position, page in enumerate(part.pages):
            index = lo + position
            if len(page.text) > remaining or (not page.complete and len(page.text) == remaining):
                pages.append(page.model_dump() | {"text": page.text[:remaining], "complete": False})
                return _answer(pages, {"index": index, "offset": page.offset + remaining}, warnings)
            pages.append(page.model_dump())
            remaining -= len(page.text)
            if not page.complete:
                return _answer(pages, {"index": index, "offset": page.offset + len(page.text)}, warnings)
            if remaining == 0 and index + 1 < bounds[-1][1]:
                return _answer(pages, {"index": index + 1, "offset": 0}, warnings)
        if len(part.pages) < hi - lo:
            raise ToolError("crashed", "a page-range job returned fewer pages than it was given")
        if progress is not None:
            await progress(hi - bounds[0][0], bounds[-1][1] - bounds[0][0])
    return _answer(pages, None, warnings)


def _answer(
    pages: list[dict[str, Any]], position: dict[str, int] | None, warnings: list[str]
) -> dict[str, Any]:
    return {"pages": pages, "next": position, "warnings": warnings}
