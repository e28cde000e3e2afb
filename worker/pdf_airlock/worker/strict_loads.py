"""Strict loads: after the sandbox is on, a lazy load is a loud failure, not a silent one.

A job child can open no file. Anything a parser loads on first use (a codec module, a CMap, a
font, a plugin) must already be in memory from the zygote's warm-up; a load the warm-up missed
fails inside the parser, where a library may swallow it and return wrong text (``(cid:N)``
instead of CJK text) or a vague ``LookupError``. With ``PDF_AIRLOCK_STRICT_LOADS=1`` in the
zygote's environment (the test suite sets it for every server it starts), an audit hook
installed as the child's last sandbox step turns any ``open`` of a path, ``import`` of a module
not yet loaded, directory listing or ``dlopen`` into ``LazyLoad``: a ``BaseException``, so no
``except Exception`` in a library can hide it. The job then fails with ``internal``, naming the
event and its target. Off in production: a library's own fallback for an optional module is
then kept.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Final

from pdf_airlock.worker.contract import STRICT_LOADS_ENV

__all__ = ["ENABLED", "STRICT_LOADS_ENV", "LazyLoad", "install", "violations"]

# Read once, in the zygote (the child's environment is scrubbed by the sandbox).
ENABLED: Final = os.environ.get(STRICT_LOADS_ENV) == "1"
_EVENTS: Final = frozenset({"open", "import", "os.listdir", "os.scandir", "glob.glob", "ctypes.dlopen"})
_MAX_TARGET_CHARS: Final = 200
_seen: list[str] = []


class LazyLoad(BaseException):
    """A load after sandboxing (strict mode only); its text names the event and the target."""


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if event not in _EVENTS:
        return
    target = args[0] if args else None
    if event == "open" and isinstance(target, int):  # an fd the child already holds
        return
    detail = f"{event} {str(target)[:_MAX_TARGET_CHARS]}"
    _seen.append(detail)
    raise LazyLoad(detail)


def install() -> None:
    """Turn lazy loads into ``LazyLoad`` from now on, in this process (if strict mode is on)."""
    if ENABLED:
        sys.addaudithook(_hook)


def violations() -> list[str]:
    """Every lazy load seen in this process, even one a library caught."""
    return list(_seen)
