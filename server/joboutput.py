"""What a job child hands back, seen from the supervisor: the outcome record, the envelope
check, exit summaries, and the progress lines that may precede the envelope.

Everything parsed here is untrusted child output: bounded, type-checked, never executed.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["JobOutcome", "ProgressFn", "ProgressLines", "complete_envelope", "exit_summary"]

_PROGRESS_PREFIX: Final = b'{"progress":'
_MAX_PROGRESS_LINE: Final = 128
_MAX_PROGRESS_TOTAL: Final = 10_000_000
ProgressFn = Callable[[int, int], Awaitable[None]]


@dataclass(slots=True)
class JobOutcome:
    """What a finished job left behind; ``untrusted_output`` is unvalidated child output.

    ``status`` is None when the job was answered on a complete envelope before its exit was
    reaped (``untrusted_envelope`` is then that envelope, parsed once, still unvalidated); its
    ``rusage`` is then empty and ``wall_ms`` is the supervisor's own measure (hand-over to EOF).
    """

    untrusted_output: bytes
    output_overflow: bool
    status: int | None
    deadline_hit: bool
    killed: bool
    wall_ms: float
    rusage: dict[str, float]
    untrusted_envelope: dict[str, Any] | None = None
    job: int = 0  # the zygote's job id: the key of a late ``job_exit`` event in the audit log


def complete_envelope(untrusted_output: bytes) -> dict[str, Any] | None:
    """The parsed envelope if the output is one whole JSON object with a boolean ``ok``; else None.
    A truncated object never parses, so a child that died mid-write is never taken for done."""
    if not untrusted_output.endswith(b"}"):
        return None
    try:
        untrusted = json.loads(untrusted_output)
    except (ValueError, UnicodeDecodeError):
        return None
    if isinstance(untrusted, dict) and isinstance(untrusted.get("ok"), bool):
        return untrusted
    return None


def exit_summary(status: int) -> str:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        return signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
    return f"exit {os.WEXITSTATUS(status) if os.WIFEXITED(status) else status}"


class ProgressLines:
    """Parses the child's leading ``{"progress": n, "total": t}`` lines (untrusted: bounded ints,
    monotonic, at most total) and forwards them; stops at the first other byte."""

    def __init__(self, callback: ProgressFn | None) -> None:
        self.callback = callback
        self.active = True
        self.last = -1

    async def consume(self, buffer: bytearray) -> None:
        while self.active and buffer.startswith(_PROGRESS_PREFIX):
            end = buffer.find(b"\n", 0, _MAX_PROGRESS_LINE)
            if end < 0:
                self.active = len(buffer) < _MAX_PROGRESS_LINE
                return
            untrusted_line = bytes(buffer[:end])
            del buffer[: end + 1]
            await self._forward(untrusted_line)
        if buffer:
            self.active = False

    async def _forward(self, untrusted_line: bytes) -> None:
        try:
            untrusted = json.loads(untrusted_line)
            done, total = int(untrusted["progress"]), int(untrusted["total"])
        except (ValueError, KeyError, TypeError):
            return
        if self.callback is not None and self.last < done <= total <= _MAX_PROGRESS_TOTAL:
            self.last = done
            await self.callback(done, total)
