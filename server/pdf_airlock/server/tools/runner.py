"""The interface tools need from the server: run a job kind on an open document.

Implemented by ``pdf_airlock.server.calls.App``; a Protocol so tool code and the parallel readers
(``pdf_airlock.server.tools.read_two_ended``) can be typed without
importing the application core.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from pdf_airlock.server.policy.paths import Document
from pdf_airlock.server.pool.child_output import LineFn, ProgressFn
from pdf_airlock.server.tools.page_counts import SelectionMemo

__all__ = ["JobRunner"]

ModelT = TypeVar("ModelT", bound=BaseModel)


class JobRunner(Protocol):
    workers: int
    max_result_bytes: int
    selections: (
        SelectionMemo  # what earlier reads' selections came to (``pdf_airlock.server.tools.page_counts``)
    )

    def progress(self) -> ProgressFn | None:
        """The current call's progress callback, if the client asked for progress."""

    def start_detached(self, fn: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """Run ``fn`` beside the current call, free to outlive its answer (a two-ended read's
        cancelled children unwind after the answer has gone out). ``fn`` must not raise."""

    def free_workers(self) -> int:
        """Worker slots a job started now would get at once, without queueing."""

    def idle_spares(self) -> int:
        """Pre-forked job children ready now (a job takes one; none left makes the zygote fork
        and warm up replacements at once, beside the running jobs)."""

    async def run_job(
        self,
        kind: str,
        args: dict[str, Any],
        document: Document,
        model: type[ModelT],
        *,
        report: bool = True,
        on_line: LineFn | None = None,
    ) -> tuple[ModelT, list[str]]:
        """Run ``kind`` in a sandboxed job child; returns the validated result and warnings.
        ``on_line`` receives the child's ``selection``/``page`` lines (untrusted bytes) as they
        arrive, before the envelope."""
