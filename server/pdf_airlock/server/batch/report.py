"""What a ``batch`` run tells its operator on stderr, as it goes and at the end.

``--progress`` (env ``PDF_AIRLOCK_BATCH_PROGRESS``):

- ``bar``: a tqdm bar with the count of each outcome so far; log lines are written above it;
- ``json``: a ``batch_progress`` event every ``--progress-seconds`` (10);
- ``none``: neither;
- ``auto`` (the default): ``bar`` when stderr is a terminal, else ``json``, so that a pipeline's
  stderr stays one JSON object a line.

Every mode ends with one ``batch_done`` event: how many documents, the count of each outcome
(``ok``, ``skipped``, ``incomplete`` or an error code), how many failed, the seconds taken,
whether the run finished and, if it stopped early, why (``interrupted``: the signal;
``output_error``: a line could not be written; ``refused``, only then: a layer of
``--require-sandbox`` is not active, and no document was read).
Events are JSON lines like the logs and are written whatever ``--log-level`` is.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections import Counter
from types import TracebackType
from typing import Final

import anyio
from tqdm import tqdm

from pdf_airlock.server.config import BATCH_PROGRESS_MODES, DEFAULTS
from pdf_airlock.server.log import lines_to, report_logger

__all__ = ["Report"]

_SETTLED: Final = frozenset({"ok", "skipped"})


class Report:
    def __init__(self, mode: str, total: int, *, every_s: float = DEFAULTS.batch_progress_s) -> None:
        if mode not in BATCH_PROGRESS_MODES:
            raise ValueError(f"progress mode must be one of {', '.join(BATCH_PROGRESS_MODES)}")
        if mode == "auto":
            mode = "bar" if sys.stderr.isatty() else "json"
        self.mode = mode
        self.total = total
        self.every_s = every_s
        self.outcomes: Counter[str] = Counter()
        self.interrupted: str | None = None  # the signal's name: the run stopped early
        self.output_error: str | None = None  # why a line could not be written: the run stopped
        self.refused: str | None = None  # why no document may be read (a required layer is off)
        self.started = time.monotonic()
        self._events = report_logger()
        self._bar: tqdm[None] | None = None
        self._lines = contextlib.ExitStack()

    def __enter__(self) -> Report:
        if self.mode == "bar":
            self._bar = tqdm(total=self.total, unit="doc", file=sys.stderr, dynamic_ncols=True)
            self._lines.enter_context(lines_to(lambda line: tqdm.write(line, file=sys.stderr)))
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._lines.close()
        if isinstance(error, KeyboardInterrupt) and self.interrupted is None:
            self.interrupted = "SIGINT"  # before the run's own signal handling was up
        if self._bar is not None:
            self._bar.close()
        self._events.info(
            "batch_done",
            documents=self.total,
            outcomes=dict(sorted(self.outcomes.items())),
            failed=self.failed,
            seconds=round(time.monotonic() - self.started, 3),
            finished=error is None and not self.stopped,
            interrupted=self.interrupted,
            output_error=self.output_error,
            **({"refused": self.refused} if self.refused is not None else {}),
        )

    @property
    def stopped(self) -> bool:
        """A signal came, a line could not be written or the sandbox is short of a required
        layer: start no more documents."""
        return self.interrupted is not None or self.output_error is not None or self.refused is not None

    @property
    def failed(self) -> int:
        """Documents that ended in an error or incomplete."""
        return sum(count for outcome, count in self.outcomes.items() if outcome not in _SETTLED)

    def add(self, outcome: str) -> None:
        self.outcomes[outcome] += 1
        if self._bar is not None:
            shown = " ".join(f"{name}={count}" for name, count in sorted(self.outcomes.items()))
            self._bar.set_postfix_str(shown, refresh=False)
            self._bar.update(1)

    async def tick(self) -> None:
        """In ``json`` mode, a ``batch_progress`` event every ``every_s`` until cancelled."""
        if self.mode != "json":
            return
        while True:
            await anyio.sleep(self.every_s)
            done = sum(self.outcomes.values())
            elapsed = time.monotonic() - self.started
            self._events.info(
                "batch_progress",
                done=done,
                total=self.total,
                outcomes=dict(sorted(self.outcomes.items())),
                per_second=round(done / elapsed, 2),
            )
