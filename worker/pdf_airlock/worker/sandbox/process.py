"""Process-level layers of the job child: its own process group tied to the zygote's life, only
the fds it needs, an allowlisted environment, an unprivileged uid, no_new_privs and not dumpable.

Each function applies one layer and returns its report ("active...");
``pdf_airlock.worker.sandbox.layers`` applies them in order.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import resource
import signal
import threading
from collections.abc import Mapping
from typing import Final

__all__ = [
    "arm_parent_death",
    "close_fds",
    "detach",
    "drop_privileges",
    "fork_bare",
    "make_undumpable",
    "no_new_privs",
    "scrub_environment",
    "set_name",
    "set_parent_death_signal",
]

_HIGH_FD: Final = 64
_STDERR: Final = 2
_NOBODY: Final = 65534
_ENV_ALLOWLIST: Final = ("LANG", "LC_ALL", "TZ")
_DEFAULT_ENV: Final = {"LANG": "C.UTF-8", "TZ": "UTC"}
_PR_SET_PDEATHSIG: Final = 1
_PR_SET_DUMPABLE: Final = 4
_PR_SET_NAME: Final = 15
_PR_SET_NO_NEW_PRIVS: Final = 38
_libc = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, arg: int) -> None:
    if _libc.prctl(option, arg, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def fork_bare() -> int:
    """fork(2) through libc's ``fork``, without CPython's at-fork work: 0 in the child, the
    child's pid in the parent. ``os.fork`` runs every ``os.register_at_fork`` hook of every
    module loaded (``random`` reseeds, ``threading`` and ``logging`` re-create their locks...)
    and re-initialises the interpreter's thread state, in a process as large as the zygote each
    object touched a copy-on-write fault in the child (row "CPU per document",
    bench/perf/cpu_per_doc.py). That work repairs what other threads held at the fork; with one
    thread there is nothing to repair: ctypes releases the GIL around the call, so neither
    process's GIL is held by anyone else, and no import or logging lock is held between the
    zygote's loop iterations. With more than one Python thread, ``os.fork``. What a child does
    not get: ``random``'s reseed (children share the zygote's ``random`` state; no parser draws
    from it, and it is no secret either way) and the reset of signals caught just before the
    fork (the child resets the zygote's one handler, SIGCHLD's, first)."""
    if threading.active_count() != 1:
        return os.fork()
    pid = int(_libc.fork())
    if pid < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"fork: {os.strerror(err)}")
    return pid


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


def arm_parent_death(parent_pid: int) -> None:
    """(Re-)arm the parent-death signal. The kernel clears it on every credential change
    (setresuid, entering a user namespace), so each such layer calls this again."""
    set_parent_death_signal()
    if os.getppid() != parent_pid:  # the zygote died before the signal was armed
        os._exit(1)


def detach(parent_pid: int) -> str:
    """Own process group, so the zygote can kill the whole group; die with the zygote. Not a new
    session: where the kernel has autogroups (most desktop distributions), a session is one, and
    the child would be scheduled as a peer of the supervisor, its niceness counting only inside
    its own group. In the supervisor's session ``--job-nice`` does what it says."""
    arm_parent_death(parent_pid)
    os.setpgid(0, 0)
    # The zygote is undumpable (no ptrace by its children); the kernel refuses unshare(NEWUSER)
    # to an undumpable process, so the child is dumpable until layer 6 sets it back to 0.
    _prctl(_PR_SET_DUMPABLE, 1)
    return "active"


def _move_fd(fd: int, target: int) -> None:
    if fd != target:
        os.dup2(fd, target, inheritable=False)
        os.close(fd)


def close_fds(keep: Mapping[int, int]) -> str:
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


def close_leftover_fds(keep: int) -> list[str]:
    """The zygote, once warm: close every descriptor but 0-2 and ``keep`` (its control socket),
    and name what was closed. Libraries leave some open from the warm-up: qpdf keeps
    ``/dev/urandom`` from the first random number it draws (writing the encrypted warm-up
    samples) for the life of the process; it draws one again only to write an encrypted file,
    which no job does."""
    closed = []
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= _STDERR or fd == keep:
            continue
        try:
            closed.append(os.readlink(f"/proc/self/fd/{fd}"))
            os.close(fd)
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return closed


def scrub_environment() -> str:
    """Reduce the environment to the allowlist (defaults for what is unset). The zygote scrubs
    its own once it is warm (``pdf_airlock.worker.zygote.main``), so a child forked from it only
    checks that nothing else is there: rewriting the environment (one ``unsetenv``/``putenv`` a
    variable) writes to pages the child shares with the zygote, each a copy-on-write fault."""
    kept = {key: os.environ[key] for key in _ENV_ALLOWLIST if key in os.environ}
    allowed = _DEFAULT_ENV | kept
    if os.environ != allowed:
        os.environ.clear()
        os.environ.update(allowed)
    return "active"


def drop_privileges() -> str:
    """Run as nobody when started as root, so the child owns nothing and can signal or trace
    nothing of the host's (kill/ptrace permission checks compare real uids across namespaces)."""
    if os.geteuid() != 0:
        return f"active: already uid {os.geteuid()}"
    os.setgroups([])
    os.setresgid(_NOBODY, _NOBODY, _NOBODY)
    os.setresuid(_NOBODY, _NOBODY, _NOBODY)
    return f"active: uid {_NOBODY}"


def no_new_privs() -> str:
    _prctl(_PR_SET_NO_NEW_PRIVS, 1)
    _prctl(_PR_SET_DUMPABLE, 0)
    return "active"
