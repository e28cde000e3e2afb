"""Confinement of the job child, applied in order right after the zygote forks it.

Assumes nothing about the document (it has not been read yet when this runs). Each layer is
a small function; ``enter_sandbox`` applies them outermost first and returns which layers took
effect, so the result can be reported. Layers that the kernel refuses are recorded, never
silently skipped: the supervisor decides whether a missing layer is acceptable.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "CHILD_INPUT_FD",
    "CHILD_RESULT_FD",
    "Limits",
    "SandboxReport",
    "enter_sandbox",
    "set_parent_death_signal",
]

CHILD_INPUT_FD: Final = 3
CHILD_RESULT_FD: Final = 4
_FIRST_FREE_FD: Final = 5
_HIGH_FD: Final = 64
_NOFILE_LIMIT: Final = 16
_CPU_HARD_EXTRA_SECONDS: Final = 1
_ENV_ALLOWLIST: Final = ("LANG", "LC_ALL", "TZ")
_DEFAULT_ENV: Final = {"LANG": "C.UTF-8", "TZ": "UTC"}

_PR_SET_PDEATHSIG: Final = 1
_PR_SET_DUMPABLE: Final = 4
_PR_SET_NO_NEW_PRIVS: Final = 38

_libc = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-job resource budget, chosen by the supervisor."""

    memory_bytes: int
    cpu_seconds: int
    max_input_bytes: int
    max_result_bytes: int


@dataclass(slots=True)
class SandboxReport:
    """Which layers took effect in this child, and why others did not."""

    active: list[str] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)


def _prctl(option: int, arg: int) -> None:
    if _libc.prctl(option, arg, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def set_parent_death_signal() -> None:
    """SIGKILL this process when its parent dies (used by the zygote and by each child)."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _detach(parent_pid: int, report: SandboxReport) -> None:
    """Own session and process group, so the zygote can kill the whole group; die with the zygote."""
    set_parent_death_signal()
    if os.getppid() != parent_pid:  # the zygote died between fork and prctl
        os._exit(1)
    os.setsid()
    report.active.append("process_group")


def _move_fd(fd: int, target: int) -> None:
    if fd != target:
        os.dup2(fd, target, inheritable=False)
        os.close(fd)


def _close_fds(input_fd: int, result_fd: int, report: SandboxReport) -> None:
    """Keep only the input fd (3) and the result pipe (4); 0-2 point at /dev/null."""
    # Lift both above the target range first so moving one cannot clobber the other.
    high_input = fcntl.fcntl(input_fd, fcntl.F_DUPFD_CLOEXEC, _HIGH_FD)
    high_result = fcntl.fcntl(result_fd, fcntl.F_DUPFD_CLOEXEC, _HIGH_FD)
    os.close(input_fd)
    os.close(result_fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    os.close(devnull)
    _move_fd(high_input, CHILD_INPUT_FD)
    _move_fd(high_result, CHILD_RESULT_FD)
    os.closerange(_FIRST_FREE_FD, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    report.active.append("closed_fds")


def _scrub_environment(report: SandboxReport) -> None:
    kept = {key: os.environ[key] for key in _ENV_ALLOWLIST if key in os.environ}
    os.environ.clear()
    os.environ.update(_DEFAULT_ENV | kept)
    report.active.append("env_allowlist")


def _address_space_now() -> int:
    with open("/proc/self/statm", "rb") as statm:
        pages = int(statm.read().split()[0])
    return pages * resource.getpagesize()


def _apply_rlimits(limits: Limits, report: SandboxReport) -> None:
    memory = _address_space_now() + limits.memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = limits.cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + _CPU_HARD_EXTRA_SECONDS))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (_NOFILE_LIMIT, _NOFILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    report.active.append("rlimits")


def _no_new_privs(report: SandboxReport) -> None:
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    _prctl(_PR_SET_DUMPABLE, 0)
    report.active.append("no_new_privs")


def enter_sandbox(parent_pid: int, input_fd: int, result_fd: int, limits: Limits) -> SandboxReport:
    """Apply every layer, outermost first. Raises OSError if a mandatory layer fails."""
    report = SandboxReport()
    _detach(parent_pid, report)
    _close_fds(input_fd, result_fd, report)
    _scrub_environment(report)
    _apply_rlimits(limits, report)
    _no_new_privs(report)
    # Namespaces, Landlock and seccomp are applied here, after no_new_privs (sandbox issue).
    return report
