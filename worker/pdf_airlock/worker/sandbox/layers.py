"""Confinement of the job child, applied in order right after the zygote forks it.

Assumes nothing about the document (it has not been read yet when this runs: the child is a
pre-forked spare, and the job's fds reach it over its spare socket only after every layer is
up). Layers, outermost first: own process group + parent-death signal; only the spare socket
(fd 5) open, later only fds 3 (input) and 4 (result);
environment allowlist; namespaces with an empty root (when the zygote's probe said they work);
rlimits; no_new_privs + not dumpable; Landlock; seccomp. Each layer is recorded as active,
unavailable (the kernel or container lacks it) or failed; a failure of a layer the supervisor
marked as required aborts the job before the document is read.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pdf_airlock.worker.contract import SANDBOX_LAYERS
from pdf_airlock.worker.sandbox import landlock, namespaces
from pdf_airlock.worker.sandbox.seccomp import CompiledFilter

__all__ = [
    "CHILD_INPUT_FD",
    "CHILD_RESULT_FD",
    "LAYERS",
    "SPARE_SOCKET_FD",
    "Limits",
    "SandboxError",
    "SandboxPolicy",
    "SandboxReport",
    "enter_sandbox",
    "make_undumpable",
    "set_name",
    "set_parent_death_signal",
]

CHILD_INPUT_FD: Final = 3
CHILD_RESULT_FD: Final = 4
# The spare's end of its socketpair (the zygote passes the other end to the supervisor, which
# sends the job), kept while it waits for its job. Fds 3 and 4 stay free, so the job's two fds
# received over it land exactly there (the kernel installs received fds at the lowest free
# numbers); seccomp allows recvmsg on this fd number only.
SPARE_SOCKET_FD: Final = 5
LAYERS: Final = SANDBOX_LAYERS
SKIPPABLE: Final = frozenset({"namespaces", "landlock", "seccomp"})
_HIGH_FD: Final = 64
_NOFILE_LIMIT: Final = 16
_CPU_HARD_EXTRA_SECONDS: Final = 1
_NOBODY: Final = 65534
_ENV_ALLOWLIST: Final = ("LANG", "LC_ALL", "TZ")
_DEFAULT_ENV: Final = {"LANG": "C.UTF-8", "TZ": "UTC"}

_PR_SET_PDEATHSIG: Final = 1
_PR_SET_DUMPABLE: Final = 4
_PR_SET_NAME: Final = 15
_PR_SET_NO_NEW_PRIVS: Final = 38

_libc = ctypes.CDLL(None, use_errno=True)


class SandboxError(Exception):
    """A required layer could not be applied; the job must not run."""


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-job resource budget, chosen by the supervisor. ``nice``: the child's scheduling
    niceness (0-19): untrusted parsing yields the CPU to the supervisor and its client."""

    memory_bytes: int
    cpu_seconds: int
    max_input_bytes: int
    max_result_bytes: int
    nice: int = 0


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """What the supervisor asks for, plus what the zygote learnt at start-up."""

    require: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()
    net_namespace: bool = False
    namespaces_unavailable: str | None = None
    landlock_abi: int = 0
    seccomp: CompiledFilter | None = None
    seccomp_unavailable: str | None = None

    @classmethod
    def from_job(cls, untrusted_spec: dict[str, Any], **probed: Any) -> SandboxPolicy:
        return cls(
            require=frozenset(str(x) for x in untrusted_spec.get("require", ())),
            skip=frozenset(str(x) for x in untrusted_spec.get("skip", ())) & SKIPPABLE,
            net_namespace=bool(untrusted_spec.get("net_namespace", False)),
            **probed,
        )


@dataclass(slots=True)
class SandboxReport:
    """Layer name -> "active", "active: detail", "unavailable: reason" or "failed: reason"."""

    layers: dict[str, str] = field(default_factory=dict)
    micros: dict[str, int] = field(default_factory=dict)


def _prctl(option: int, arg: int) -> None:
    if _libc.prctl(option, arg, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def make_undumpable() -> None:
    """No core dumps, and no ptrace attach by processes without CAP_SYS_PTRACE (the zygote)."""
    _prctl(_PR_SET_DUMPABLE, 0)


def set_parent_death_signal() -> None:
    """SIGKILL this process when its parent dies (used by the zygote and by each child)."""
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def set_name(name: bytes) -> None:
    """This process's name (``/proc/<pid>/comm``, what ``ps`` shows), at most 15 bytes."""
    if _libc.prctl(_PR_SET_NAME, ctypes.c_char_p(name[:15]), 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _arm_parent_death(parent_pid: int) -> None:
    """(Re-)arm the parent-death signal. The kernel clears it on every credential change
    (setresuid, entering a user namespace), so each such layer calls this again."""
    set_parent_death_signal()
    if os.getppid() != parent_pid:  # the zygote died before the signal was armed
        os._exit(1)


def _detach(parent_pid: int) -> str:
    """Own process group, so the zygote can kill the whole group; die with the zygote. Not a new
    session: where the kernel has autogroups (most desktop distributions), a session is one, and
    the child would be scheduled as a peer of the supervisor, its niceness counting only inside
    its own group. In the supervisor's session ``--job-nice`` does what it says."""
    _arm_parent_death(parent_pid)
    os.setpgid(0, 0)
    # The zygote is undumpable (no ptrace by its children); the kernel refuses unshare(NEWUSER)
    # to an undumpable process, so the child is dumpable until layer 6 sets it back to 0.
    _prctl(_PR_SET_DUMPABLE, 1)
    return "active"


def _move_fd(fd: int, target: int) -> None:
    if fd != target:
        os.dup2(fd, target, inheritable=False)
        os.close(fd)


def _close_fds(keep: Mapping[int, int]) -> str:
    """Keep only the fds in ``keep`` (source -> target number); 0-2 point at /dev/null."""
    # Lift every kept fd above the target range first so moving one cannot clobber another.
    lifted = {fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, _HIGH_FD): target for fd, target in keep.items()}
    for fd in keep:
        os.close(fd)
    devnull = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        os.dup2(devnull, std)
    os.close(devnull)
    for fd, target in lifted.items():
        _move_fd(fd, target)
    targets = sorted(keep.values())
    free_from = 3
    for target in targets:  # close the gaps below and between the targets, then everything above
        os.closerange(free_from, target)
        free_from = target + 1
    os.closerange(free_from, resource.getrlimit(resource.RLIMIT_NOFILE)[0])
    return "active"


def _scrub_environment() -> str:
    kept = {key: os.environ[key] for key in _ENV_ALLOWLIST if key in os.environ}
    os.environ.clear()
    os.environ.update(_DEFAULT_ENV | kept)
    return "active"


def _drop_privileges() -> str:
    """Run as nobody when started as root, so the child owns nothing and can signal or trace
    nothing of the host's (kill/ptrace permission checks compare real uids across namespaces)."""
    if os.geteuid() != 0:
        return f"active: already uid {os.geteuid()}"
    os.setgroups([])
    os.setresgid(_NOBODY, _NOBODY, _NOBODY)
    os.setresuid(_NOBODY, _NOBODY, _NOBODY)
    return f"active: uid {_NOBODY}"


def _address_space_now() -> int:
    with open("/proc/self/statm", "rb") as statm:
        pages = int(statm.read().split()[0])
    return pages * resource.getpagesize()


def _apply_rlimits(limits: Limits, address_space: int) -> str:
    memory = address_space + limits.memory_bytes
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    cpu = limits.cpu_seconds
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + _CPU_HARD_EXTRA_SECONDS))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (_NOFILE_LIMIT, _NOFILE_LIMIT))
    resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    return "active"


def _no_new_privs() -> str:
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    _prctl(_PR_SET_DUMPABLE, 0)
    return "active"


def _namespaces(policy: SandboxPolicy) -> str:
    if policy.namespaces_unavailable is not None:
        return f"unavailable: {policy.namespaces_unavailable}"
    return "active: " + "+".join(namespaces.enter_namespaces(policy.net_namespace))


def _landlock(policy: SandboxPolicy) -> str:
    if policy.landlock_abi <= 0:
        return "unavailable: the kernel has no Landlock"
    covered = landlock.restrict_self(policy.landlock_abi)
    return f"active: ABI {policy.landlock_abi}, denies " + ", ".join(covered)


def _seccomp(policy: SandboxPolicy) -> str:
    if policy.seccomp is None:
        return f"unavailable: {policy.seccomp_unavailable or 'not compiled'}"
    policy.seccomp.load()
    return "active: allowlist, kill by default"


def _rearmed(parent_pid: int, layer: Callable[[], str]) -> str:
    try:
        return layer()
    finally:
        _arm_parent_death(parent_pid)


def enter_sandbox(
    parent_pid: int, keep_fds: Mapping[int, int], limits: Limits, policy: SandboxPolicy
) -> SandboxReport:
    """Apply every layer, outermost first. Raises SandboxError if a required layer is missing.

    ``keep_fds`` maps each fd that stays open to the number it must end up at."""
    report = SandboxReport()
    address_space = _address_space_now()  # read before the root directory disappears
    steps: tuple[tuple[str, Callable[[], str]], ...] = (
        ("process_group", lambda: _detach(parent_pid)),
        ("closed_fds", lambda: _close_fds(keep_fds)),
        ("env_allowlist", _scrub_environment),
        ("unprivileged_uid", lambda: _rearmed(parent_pid, _drop_privileges)),
        ("namespaces", lambda: _rearmed(parent_pid, lambda: _namespaces(policy))),
        ("rlimits", lambda: _apply_rlimits(limits, address_space)),
        ("no_new_privs", _no_new_privs),
        ("landlock", lambda: _landlock(policy)),
        ("seccomp", lambda: _seccomp(policy)),
    )
    for name, apply in steps:
        if name in policy.skip and name not in policy.require:
            report.layers[name] = "skipped"
            continue
        started = time.perf_counter_ns()
        try:
            report.layers[name] = apply()
        except OSError as exc:
            report.layers[name] = f"failed: {exc}"
        report.micros[name] = (time.perf_counter_ns() - started) // 1000
        if name in policy.require and not report.layers[name].startswith("active"):
            raise SandboxError(f"required layer {name} is {report.layers[name]}")
    return report
