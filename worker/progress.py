"""Progress lines from the job child: ``{"progress": done, "total": n}\\n`` on the result pipe,
written before the final envelope, only when the caller asked for progress.

The supervisor treats these lines as untrusted too (bounded, monotonic, checked ints).
"""

from __future__ import annotations

import os
from typing import Final

__all__ = ["enable", "page_done"]

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
