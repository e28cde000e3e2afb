"""Lines the job child writes on its result pipe before the final envelope.

- ``{"progress": done, "total": n}``: only when the caller asked for progress.
- ``{"selection": {...}}`` and ``{"page": {...}}``: a streamed read (``parsers.read``, job arg ``stream``)
  hands over each page as soon as it is extracted, so the supervisor can merge two children
  reading the same selection from both ends.

Every line is one JSON object encoded like the envelope (UTF-8, lone surrogates replaced) and
ends with a newline; JSON escapes every newline inside strings, so the framing is safe. The
supervisor treats these lines as untrusted too (bounded, checked, validated).
"""

from __future__ import annotations

import json
import os
from typing import Any, Final

__all__ = ["emit", "enable", "page_done", "write_all"]

_RESULT_FD: Final = 4
_state = {"enabled": False, "last": -1}


def enable(on: bool) -> None:
    _state["enabled"] = on
    _state["last"] = -1


def page_done(done: int, total: int) -> None:
    if not _state["enabled"] or done <= _state["last"]:
        return
    _state["last"] = done
    os.write(_RESULT_FD, b'{"progress":%d,"total":%d}\n' % (done, total))


def emit(kind: str, value: dict[str, Any]) -> None:
    """Write ``{kind: value}`` as one line (a blocking pipe: loop until all of it is written)."""
    payload = json.dumps({kind: value}, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    write_all(_RESULT_FD, payload.encode("utf-8", errors="replace") + b"\n")


def write_all(fd: int, data: bytes) -> None:
    """All of ``data`` to a blocking pipe (a write may take only part of it); the envelope too."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
