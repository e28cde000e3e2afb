"""Resource limits of the job child: address space (on top of what the forked spare already
maps), CPU seconds, no file writes, a handful of fds, no new processes, no core dumps."""

from __future__ import annotations

import resource
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pdf_airlock.worker.sandbox.layers import Limits

__all__ = ["address_space_now", "apply_rlimits"]

_NOFILE_LIMIT: Final = 16
_CPU_HARD_EXTRA_SECONDS: Final = 1


def address_space_now() -> int:
    with open("/proc/self/statm", "rb") as statm:
        pages = int(statm.read().split()[0])
    return pages * resource.getpagesize()


def apply_rlimits(limits: Limits, address_space: int) -> str:
    memory = address_space + limits.memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = limits.cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + _CPU_HARD_EXTRA_SECONDS))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (_NOFILE_LIMIT, _NOFILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return "active"
