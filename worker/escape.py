"""Test-only job kind ``escape``: one escape attempt from inside the real, sandboxed job child.

Reachable only when the zygote was started with ``PDF_AIRLOCK_TEST_HOOKS=1`` (the test suite
and ``scripts/escape_table.py`` do this); no MCP tool maps to it, and without the variable the
zygote refuses the kind. An attempt either returns ``{"outcome": "denied", "errno": NAME}``,
``{"outcome": "allowed", ...}`` (a sandbox failure), or the process is killed by the sandbox
(SIGSYS from seccomp, SIGXCPU from RLIMIT_CPU), which the supervisor classifies.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import signal
import socket
from collections.abc import Callable
from typing import Any, Final

__all__ = ["ATTEMPTS", "run"]

_CLONE_NEWUSER: Final = 0x10000000
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _libc_call(result: int) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _open_passwd() -> object:
    with open("/etc/passwd", "rb") as handle:
        return handle.read(16).hex()


def _read_environ() -> object:
    with open("/proc/self/environ", "rb") as handle:
        return len(handle.read())


def _list_root() -> object:
    return os.listdir("/")


def _write_file() -> object:
    with open("/tmp/pdf-airlock-escape", "wb") as handle:  # noqa: S108 - the point is to try
        return handle.write(b"x")


def _connect() -> object:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1)
        sock.connect(("127.0.0.1", 9))
    return "connected"


def _execve() -> object:
    os.execv("/bin/sh", ["/bin/sh", "-c", "true"])  # noqa: S606 - the point is to try


def _fork() -> object:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    return pid


def _ptrace() -> object:
    ptrace_attach = 16
    _libc_call(_libc.ptrace(ptrace_attach, os.getppid(), None, None))
    return "attached"


def _unshare() -> object:
    _libc_call(_libc.unshare(_CLONE_NEWUSER))
    return "unshared"


def _mount() -> object:
    _libc_call(_libc.mount(b"none", b"/", b"tmpfs", 0, None))
    return "mounted"


def _kill_init() -> object:
    os.kill(1, 0)
    return "signalled"


def _kill_parent() -> object:
    os.kill(os.getppid(), signal.SIGKILL)
    return "signalled"


def _raise_rlimit() -> object:
    resource.setrlimit(resource.RLIMIT_CPU, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    return resource.getrlimit(resource.RLIMIT_CPU)


def _read_closed_fd() -> object:
    return os.read(5, 16).hex()


def _recvmsg_input_fd() -> object:
    """recvmsg is allowed on the spare socket's fd number only (closed by now: EBADF)."""
    _libc_call(_libc.recvmsg(3, None, 0))
    return "received"


def _prctl_dumpable() -> object:
    """prctl is allowed as PR_SET_NAME only."""
    _libc_call(_libc.prctl(4, 1, 0, 0, 0))  # PR_SET_DUMPABLE 1
    return "dumpable"


def _allocate() -> object:
    blocks = [bytearray(64 << 20) for _ in range(4096)]  # 256 GiB if nothing stops it
    return len(blocks)


def _spin() -> object:
    while True:
        pass


ATTEMPTS: Final[dict[str, Callable[[], object]]] = {
    "open_etc_passwd": _open_passwd,
    "read_proc_environ": _read_environ,
    "list_root": _list_root,
    "write_file": _write_file,
    "tcp_connect_loopback": _connect,
    "execve_sh": _execve,
    "fork": _fork,
    "ptrace_parent": _ptrace,
    "unshare_user": _unshare,
    "mount_tmpfs": _mount,
    "kill_init": _kill_init,
    "kill_zygote": _kill_parent,
    "raise_cpu_rlimit": _raise_rlimit,
    "read_closed_fd": _read_closed_fd,
    "recvmsg_input_fd": _recvmsg_input_fd,
    "prctl_set_dumpable": _prctl_dumpable,
    "allocate_past_budget": _allocate,
    "spin_past_cpu_budget": _spin,
}


def run(_data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    name = str(args["attempt"])
    try:
        value = ATTEMPTS[name]()
    except OSError as exc:
        return {
            "attempt": name,
            "outcome": "denied",
            "errno": errno.errorcode.get(exc.errno or 0, str(exc.errno)),
        }
    except ValueError as exc:  # resource.setrlimit refuses to raise a hard limit this way
        return {"attempt": name, "outcome": "denied", "errno": type(exc).__name__}
    return {"attempt": name, "outcome": "allowed", "value": repr(value)[:200]}
