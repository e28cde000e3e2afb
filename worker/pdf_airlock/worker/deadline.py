"""The job child's own clock for one stretch of native work (the OCR of one page).

Input: a number of seconds and the error envelope to answer with if they run out, both made by
the worker itself before the work starts; nothing from the document. ``armed`` sets a real-time
interval timer (``setitimer(ITIMER_REAL)``); when it fires, a SIGALRM handler writes that
envelope to the result pipe and ends the process, whatever native call it interrupts. The
supervisor then reads a typed error (``timeout`` with the page's number), as from any failed job.

Why not a Python handler or the library's own deadline: CPython runs Python signal handlers only
between bytecodes, and Tesseract's layout analysis is one long native call that looks at neither
Python's signals nor its own ``ETEXT_DESC`` deadline (a page of 40,000 specks ran for minutes).
The handler here is a ctypes callback made at import, in the zygote (making one maps executable
memory, which the child's seccomp filter refuses), and installed with libc's ``signal``; ``seal``
(the zygote, after its warm-up, before any fork) makes its code page read-and-execute
(``pdf_airlock.worker.memory.closures``), so no child inherits a writable code page. When it
runs, the interrupted code is Tesseract's or PDFium's (which hold no Python state), or, rarely,
the interpreter itself; the handler allocates nothing of its own, writes with ``os.write`` and
leaves with ``os._exit``, so it never returns into what it interrupted.

Only in a job child (``enable``, by ``pdf_airlock.worker.child``): in-process (tests, the
differential harness) ``armed`` sets no timer and callers fall back on the library's deadline.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
from collections.abc import Iterator
from typing import Any, Final

from pdf_airlock.worker.memory import closures

__all__ = ["armed", "enable", "enabled", "error_envelope", "seal"]

_EXIT_ANSWERED: Final = 0  # as after any envelope: the supervisor judges the envelope
_state: dict[str, Any] = {"result_fd": -1, "close_fd": -1, "envelope": b""}


def _on_alarm(_signum: int) -> None:  # pragma: no cover - runs in a job child only
    fd, envelope = _state["result_fd"], _state["envelope"]
    if fd < 0 or not envelope:
        return
    if _state["close_fd"] >= 0:  # a child kept for more documents says first it will not go on
        with contextlib.suppress(OSError):
            os.close(_state["close_fd"])
    view = memoryview(envelope)
    try:
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os._exit(_EXIT_ANSWERED)


_libc = ctypes.CDLL(None, use_errno=True)
_libc.signal.restype = ctypes.c_void_p
_libc.signal.argtypes = (ctypes.c_int, ctypes.c_void_p)
_HANDLER: Final = ctypes.CFUNCTYPE(None, ctypes.c_int)(_on_alarm)  # kept for the process's life
_HANDLER_ADDRESS: Final = ctypes.cast(_HANDLER, ctypes.c_void_p).value


def seal() -> int:
    """Make the handler's code page read-and-execute (``closures.seal``); the number of
    mappings sealed (0 once done)."""
    return closures.seal([_HANDLER])


def enable(result_fd: int, close_fd: int = -1) -> None:
    """In the job child: deadlines answer on ``result_fd`` (after closing ``close_fd``, the
    socket of a child kept for more documents, when it is not -1)."""
    _state["result_fd"], _state["close_fd"] = result_fd, close_fd


def enabled() -> bool:
    return bool(_state["result_fd"] >= 0)


def error_envelope(code: str, message: str, details: dict[str, object]) -> bytes:
    """The job child's error envelope (``pdf_airlock.worker.child``'s shape and encoding)."""
    envelope = {"ok": False, "error": {"code": code, "message": message, "details": details}}
    return json.dumps(envelope, ensure_ascii=False, separators=(",", ":")).encode()


@contextlib.contextmanager
def armed(seconds: float, envelope: bytes) -> Iterator[None]:
    """Answer ``envelope`` and exit if the block runs past ``seconds`` of wall-clock time (a
    no-op unless ``enable`` was called)."""
    if not enabled():
        yield
        return
    _state["envelope"] = envelope
    _libc.signal(signal.SIGALRM, _HANDLER_ADDRESS)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        _state["envelope"] = b""
