"""What a job child hands back, seen from the supervisor: the outcome record, the envelope
check, exit summaries, and the progress and page lines that may precede the envelope.

Everything parsed here is untrusted child output: bounded, type-checked, never executed.
"""

from __future__ import annotations

import json
import os
import signal
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Final

from pdf_airlock.worker.contract import LINE_KINDS

__all__ = [
    "JobOutcome",
    "LineFn",
    "ProgressFn",
    "ProgressLines",
    "complete_envelope",
    "exit_summary",
]

_PROGRESS_PREFIX: Final = b'{"%s":' % LINE_KINDS[0].encode()
_MAX_PROGRESS_LINE: Final = 128
_MAX_PROGRESS_TOTAL: Final = 10_000_000
_STREAM_PREFIXES: Final = tuple(b'{"%s":' % kind.encode() for kind in LINE_KINDS[1:])
_LONGEST_PREFIX: Final = max(len(prefix) for prefix in (_PROGRESS_PREFIX, *_STREAM_PREFIXES))
ProgressFn = Callable[[int, int], Awaitable[None]]
LineFn = Callable[[bytes], None]


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


def complete_envelope(untrusted_output: bytes) -> dict[str, Any] | None:
    """The parsed envelope if the output is one whole JSON object with a boolean ``ok``; else None.
    A truncated object never parses, so a child that died mid-write is never taken for done."""
    if not untrusted_output.endswith(b"}"):
        return None
    try:
        untrusted = json.loads(untrusted_output)
    except (ValueError, UnicodeDecodeError, RecursionError):  # nested past the parser's depth
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
    """Parses the lines a child writes before its envelope and stops at the first other byte.

    ``{"progress": n, "total": t}`` lines (untrusted: bounded ints, monotonic, at most total) go to
    ``callback``. With ``on_line``, ``{"selection": ...}`` and ``{"page": ...}`` lines (a streamed
    read, see ``pdf_airlock.server.tools.read_two_ended``) go to it as untrusted bytes without the
    newline: they are not bounded here (a page's text has no fixed size) but the pool caps the job's whole
    output at ``max_result_bytes`` and kills
    the child past it, so the buffer never holds more than that."""

    def __init__(self, callback: ProgressFn | None, on_line: LineFn | None = None) -> None:
        self.callback = callback
        self.on_line = on_line
        self.active = True
        self.last = -1
        self.pending: deque[tuple[int, int]] = deque()  # taken, not yet passed to ``callback``
        self._scanned = 0  # bytes of an unfinished stream line already searched for its newline

    async def consume(self, buffer: bytearray) -> None:
        self.take(buffer)
        await self.flush()

    async def flush(self) -> None:
        """Pass the progress taken so far to ``callback``, in order."""
        while self.pending:
            done, total = self.pending.popleft()
            if self.callback is not None:
                await self.callback(done, total)

    def take(self, buffer: bytearray) -> None:
        """Remove the complete leading lines from ``buffer``: stream lines go to ``on_line`` at
        once, progress is kept in ``pending`` for ``flush``. Synchronous (an fd callback's)."""
        while self.active and buffer:
            if buffer.startswith(_PROGRESS_PREFIX):
                end = buffer.find(b"\n", 0, _MAX_PROGRESS_LINE)
                if end < 0:
                    self.active = len(buffer) < _MAX_PROGRESS_LINE
                    return
                untrusted_line = bytes(buffer[:end])
                del buffer[: end + 1]
                self._take_progress(untrusted_line)
            elif self.on_line is not None and buffer.startswith(_STREAM_PREFIXES):
                end = buffer.find(b"\n", self._scanned)
                if end < 0:
                    self._scanned = len(buffer)
                    return
                untrusted_line = bytes(buffer[:end])
                del buffer[: end + 1]
                self._scanned = 0
                self.on_line(untrusted_line)
            else:
                # A chunk may end inside a line's opening bytes: wait for more before judging.
                self.active = len(buffer) < _LONGEST_PREFIX and any(
                    prefix.startswith(buffer) for prefix in self._prefixes()
                )
                return

    def _prefixes(self) -> tuple[bytes, ...]:
        return (_PROGRESS_PREFIX, *_STREAM_PREFIXES) if self.on_line is not None else (_PROGRESS_PREFIX,)

    def _take_progress(self, untrusted_line: bytes) -> None:
        try:
            untrusted = json.loads(untrusted_line)
            done, total = int(untrusted["progress"]), int(untrusted["total"])
        except (ValueError, KeyError, TypeError):
            return
        if self.callback is not None and self.last < done <= total <= _MAX_PROGRESS_TOTAL:
            self.last = done
            self.pending.append((done, total))
