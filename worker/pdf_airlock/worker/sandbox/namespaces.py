"""Linux namespaces for the job child: a new user namespace that owns new mount, IPC and UTS
namespaces, with the root directory switched to an empty read-only tmpfs.

Assumes nothing about the document: applied before it is read. The zygote probes once at
start-up whether ``unshare`` works (Docker's default seccomp profile refuses it); children only
try when the probe succeeded. A network namespace is optional (``net=True``): it adds
set-up time to every job and little over seccomp (``socket`` kills the job) and
Landlock (TCP denied). PID namespaces are not used: the child can never fork (seccomp, NPROC 0).
"""

from __future__ import annotations

import ctypes
import os
from typing import Final

__all__ = ["enter_namespaces", "probe"]

_CLONE_NEWNS: Final = 0x00020000
_CLONE_NEWUTS: Final = 0x04000000
_CLONE_NEWIPC: Final = 0x08000000
_CLONE_NEWUSER: Final = 0x10000000
_CLONE_NEWNET: Final = 0x40000000
_MS_RDONLY: Final = 1
_MS_NOSUID: Final = 2
_MS_NODEV: Final = 4
_MS_NOEXEC: Final = 8
_MS_REC: Final = 1 << 14
_MS_PRIVATE: Final = 1 << 18
# Any existing directory can be the mount point: it only exists inside the new mount namespace.
_EMPTY_ROOT: Final = b"/proc"
_TMPFS_OPTIONS: Final = b"size=4k,nr_inodes=2,mode=0555"

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def enter_namespaces(net: bool) -> list[str]:
    """Unshare and switch to an empty root; returns the namespaces entered. Raises OSError."""
    flags = _CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS | (_CLONE_NEWNET if net else 0)
    _check(_libc.unshare(flags), "unshare")
    _check(_libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None), "mount --make-rprivate /")
    readonly = _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC
    _check(_libc.mount(b"none", _EMPTY_ROOT, b"tmpfs", readonly, _TMPFS_OPTIONS), "mount empty tmpfs")
    _check(_libc.chroot(_EMPTY_ROOT), "chroot")
    _check(_libc.chdir(b"/"), "chdir")
    return ["user", "mount", "ipc", "uts"] + (["net"] if net else [])


def probe(net: bool) -> str | None:
    """Try the namespaces in a throwaway child; None if they work, else the reason."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            enter_namespaces(net)
            os.write(write_fd, b"ok")
        except OSError as exc:
            os.write(write_fd, str(exc).encode()[:500])
        finally:
            os._exit(0)
    os.close(write_fd)
    try:
        answer = os.read(read_fd, 512).decode(errors="replace")
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    return None if answer == "ok" else answer or "probe child died"
