"""Test-only job kind ``fault``: a job child that misbehaves on purpose, for fault injection.

Reachable only with the zygote's test hook (``PDF_AIRLOCK_TEST_HOOKS=1``), like ``escape``. Each
mode breaks the result protocol in one way; the supervisor must map each to the right error
code and keep serving.
"""

from __future__ import annotations

import os
import signal
from typing import Any, Final, NoReturn

__all__ = ["MODES", "run"]

_RESULT_FD: Final = 4


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


MODES: Final = {
    "garbage": _garbage,
    "truncated": _truncated,
    "oversized": _oversized,
    "hang_ignoring_sigterm": _hang_ignoring_sigterm,
    "close_pipe_early": _close_pipe_early,
    "wrong_shape": _wrong_shape,
    "unknown_code": _unknown_code,
    "exit_nonzero": _exit_nonzero,
}


def run(_data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    MODES[str(args["mode"])]()
    return {}
