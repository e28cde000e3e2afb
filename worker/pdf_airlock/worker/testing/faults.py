"""Test-only job kind ``fault``: a job child that misbehaves on purpose, for fault injection.

Reachable only with the zygote's test hook (``PDF_AIRLOCK_TEST_HOOKS=1``), like ``escape``. Each
mode breaks the result protocol in one way; the supervisor must map each to the right error
code and keep serving. The ``ANSWERING`` modes answer instead, and leave state behind or use
CPU and memory, for the tests of children that serve several jobs (``--documents-per-child``).
``linger`` plays a child a document took control of: it answers every job it is sent and never
hangs up or exits by itself.
"""

from __future__ import annotations

import gc
import json
import os
import resource
import signal
import socket
import threading
import time
from typing import Any, Final, NoReturn

from pdf_airlock.worker.contract import WorkerError

__all__ = ["ANSWERING", "MODES", "run"]

_INPUT_FD: Final = 3
_RESULT_FD: Final = 4
_SPARE_FD: Final = 5
_JOB_MESSAGE: Final = 1 << 16
_JOB_FDS_SPACE: Final = socket.CMSG_SPACE(2 * 4)
_LONG_WAIT_S: Final = 3600.0


def _write(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(_RESULT_FD, view) :]


def _garbage() -> NoReturn:
    _write(b"\x00\xff\xfe this is not json \x1b[31m")
    os._exit(0)


def _truncated() -> NoReturn:
    _write(b'{"ok": true, "result": {"engine": "fast", "pages": [{"page": 1, "te')
    os._exit(0)


def _oversized() -> NoReturn:
    chunk = b"x" * (1 << 16)
    while True:
        _write(chunk)


def _hang_ignoring_sigterm() -> NoReturn:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        pass


def _close_pipe_early() -> NoReturn:
    os.close(_RESULT_FD)
    os._exit(0)


def _wrong_shape() -> NoReturn:
    _write(b'{"ok": true, "result": {"engine": "fast", "page_count": "many", "pages": []}}')
    os._exit(0)


def _unknown_code() -> NoReturn:
    _write(b'{"ok": false, "error": {"code": "pwned", "message": "' + b"A" * 5000 + b'", "details": {}}}')
    os._exit(0)


def _exit_nonzero() -> NoReturn:
    os._exit(3)


def _abort_past_budget() -> NoReturn:
    """Die as native code does when an allocation fails under the memory budget (C++'s
    ``bad_alloc`` unhandled): buffers of doubling size, each written, until one is refused, then
    an abort. No envelope: the verdict has only the signal and the peak RSS."""
    held = []
    size = 1 << 20
    try:
        while True:
            held.append(b"\x01" * size)
            size *= 2
    except MemoryError:
        os.abort()


# Modes that answer (a result or a typed error) and leave the child able to take another job
# (``--documents-per-child``): what one job leaves behind, and what the next one sees of it.
_left_behind: dict[str, Any] = {}
_held: list[bytearray] = []


def _remember(args: dict[str, Any]) -> dict[str, Any]:
    """Keep ``value`` for the next job of this child; answer with what the last one kept."""
    seen = _left_behind.get("value")
    _left_behind["value"] = args.get("value")
    return {"pid": os.getpid(), "seen": seen}


def _spin_cpu(args: dict[str, Any]) -> dict[str, Any]:
    """Use ``cpu_s`` seconds of this process's CPU."""
    until = time.process_time() + float(args["cpu_s"])
    while time.process_time() < until:
        pass
    return {"pid": os.getpid()}


def _hold_memory(args: dict[str, Any]) -> dict[str, Any]:
    """Keep ``mb`` MiB allocated (and touched) after the job."""
    _held.append(bytearray(int(args["mb"]) << 20))
    return {"pid": os.getpid()}


def _typed_error(_args: dict[str, Any]) -> dict[str, Any]:
    raise WorkerError("malformed", "a typed failure on purpose")


ANSWERING: Final = {
    "remember": _remember,
    "spin_cpu": _spin_cpu,
    "hold_memory": _hold_memory,
    "typed_error": _typed_error,
}


def _linger() -> NoReturn:
    """A compromised child that serves several jobs (``--documents-per-child`` > 1): it lifts its
    soft CPU limit to the hard one, answers this job and every job later sent to it (its pid and
    how many it served) without ever hanging up first, and on EOF from the supervisor does not
    exit but waits for ever (a futex wait: no CPU). Only the zygote can end it."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
    spare = next(o for o in gc.get_objects() if isinstance(o, socket.socket) and o.fileno() == _SPARE_FD)
    served = 0
    while True:
        served += 1
        _write(json.dumps({"ok": True, "result": {"pid": os.getpid(), "served": served}}).encode())
        os.close(_RESULT_FD)
        os.close(_INPUT_FD)
        job, _ancillary, _flags, _address = spare.recvmsg(_JOB_MESSAGE, _JOB_FDS_SPACE)
        if not job:  # the supervisor hung up: stay anyway
            break
    forever = threading.Lock()
    forever.acquire()
    while True:
        forever.acquire(timeout=_LONG_WAIT_S)


MODES: Final = {
    "garbage": _garbage,
    "truncated": _truncated,
    "oversized": _oversized,
    "hang_ignoring_sigterm": _hang_ignoring_sigterm,
    "close_pipe_early": _close_pipe_early,
    "wrong_shape": _wrong_shape,
    "unknown_code": _unknown_code,
    "exit_nonzero": _exit_nonzero,
    "linger": _linger,
    "abort_past_budget": _abort_past_budget,
}


def run(_data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    mode = str(args["mode"])
    if mode in ANSWERING:
        return ANSWERING[mode](args)
    MODES[mode]()
    return {}
