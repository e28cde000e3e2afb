"""Resource limits of the job child: address space (on top of what the forked spare already
maps), CPU seconds, no file writes, a handful of fds, no new processes, no core dumps."""

from __future__ import annotations

import math
import os
import resource
import time
from typing import Final

from pdf_airlock.worker.contract import Limits

__all__ = ["address_space_now", "apply_rlimits", "cpu_hard_limit", "renew_cpu"]

_NOFILE_LIMIT: Final = 16
_CPU_HARD_EXTRA_SECONDS: Final = 1
_STATM_BYTES: Final = 256  # seven decimal page counts


def address_space_now() -> int:
    """This process's address space in bytes (``/proc/self/statm``). Read with bare fd calls:
    a buffered file object is a dozen Python objects to build, in a fresh child each a page to
    copy (bench/perf/cpu_per_doc.py)."""
    fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
    try:
        pages = int(os.read(fd, _STATM_BYTES).split()[0])
    finally:
        os.close(fd)
    return pages * resource.getpagesize()


def cpu_hard_limit(limits: Limits) -> int:
    """RLIMIT_CPU's hard limit: one job's budget, or each job's for a child that serves several
    (``renew_cpu`` then moves the soft limit up to one budget past what it used so far)."""
    return limits.cpu_seconds * max(1, limits.documents) + _CPU_HARD_EXTRA_SECONDS


def renew_cpu(limits: Limits) -> None:
    """A whole CPU budget for the next job of a child that serves several: the soft limit (the
    SIGXCPU point) goes to the CPU used so far plus one budget, never past the hard limit."""
    hard = cpu_hard_limit(limits)
    used = math.ceil(time.process_time())
    resource.setrlimit(resource.RLIMIT_CPU, (min(used + limits.cpu_seconds, hard), hard))


def apply_rlimits(limits: Limits, address_space: int) -> str:
    memory = address_space + limits.memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = limits.cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu_hard_limit(limits)))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (_NOFILE_LIMIT, _NOFILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return "active"
