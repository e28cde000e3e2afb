"""Test-only job kind ``escape``: one escape attempt from inside the real, sandboxed job child.

Reachable only when the zygote was started with ``PDF_AIRLOCK_TEST_HOOKS=1`` (the test suite
and ``tests/escape_table.py`` do this); no MCP tool maps to it, and without the variable the
zygote refuses the kind. An attempt either returns ``{"outcome": "denied", "errno": NAME}``,
``{"outcome": "allowed", ...}`` (a sandbox failure), or the process is killed by the sandbox
(SIGSYS from seccomp, SIGXCPU from RLIMIT_CPU), which the supervisor classifies.

Each attempt makes the one call it is named for and nothing else the filter would kill first
(``getppid``, for one, is not allowed): the attempts aimed at the zygote take its pid from
``ZYGOTE_PID``, read when the zygote imported this module. Calls aimed at another process are
harmless if a layer ever lets them through: signal 0 and ``PTRACE_SEIZE`` run the kernel's
permission checks without stopping or signalling the target. Files are opened through libc, not
Python's ``open``: the attempt is the syscall itself, which no audit hook in the child
(``pdf_airlock.worker.strict_loads``) answers before the sandbox does.
"""

from __future__ import annotations

import ctypes
import errno
import mmap
import os
import resource
import socket
from collections.abc import Callable
from typing import Any, Final

__all__ = ["ATTEMPTS", "ZYGOTE_PID", "run"]

# The zygote imports this module before it forks any child (a sandboxed child cannot import),
# so in a job child this is the zygote's pid.
ZYGOTE_PID: Final = os.getpid()
_CLONE_NEWUSER: Final = 0x10000000
_PTRACE_SEIZE: Final = 0x4206
_PROBE_SIGNAL: Final = 0  # permission and existence check only
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (  # addr, length, prot, flags, fd, offset
    ctypes.c_void_p,
    ctypes.c_size_t,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_int,
    ctypes.c_long,
)
_libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_MAP_FAILED: Final = ctypes.c_void_p(-1).value
_NEW_FILE_MODE: Final = 0o600
_DIRENT_BUFFER: Final = 4096
_NR_GETDENTS64: Final = 217


def _libc_call(result: int) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _open(path: bytes, flags: int) -> int:
    fd = int(_libc.open(path, flags | os.O_CLOEXEC, _NEW_FILE_MODE))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return fd


def _read_from(path: bytes, size: int) -> bytes:
    fd = _open(path, os.O_RDONLY)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def _open_passwd() -> object:
    return _read_from(b"/etc/passwd", 16).hex()


def _read_environ() -> object:
    return len(_read_from(b"/proc/self/environ", _DIRENT_BUFFER))


def _list_root() -> object:
    fd = _open(b"/", os.O_RDONLY | os.O_DIRECTORY)
    try:
        buffer = ctypes.create_string_buffer(_DIRENT_BUFFER)
        listed = int(_libc.syscall(_NR_GETDENTS64, fd, buffer, _DIRENT_BUFFER))
        if listed < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        return listed  # bytes of directory entries
    finally:
        os.close(fd)


def _write_file() -> object:
    fd = _open(b"/tmp/pdf-airlock-escape", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        return os.write(fd, b"x")
    finally:
        os.close(fd)


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


def _zygote_pid() -> int:
    if os.getpid() == ZYGOTE_PID:  # imported in this child, not inherited from the zygote
        raise RuntimeError("pdf_airlock.worker.testing.escape was not imported by the zygote")
    return ZYGOTE_PID


def _ptrace() -> object:
    _libc_call(_libc.ptrace(_PTRACE_SEIZE, _zygote_pid(), None, None))
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


def _kill_zygote() -> object:
    os.kill(_zygote_pid(), _PROBE_SIGNAL)
    return "signalled"


def _prlimit_zygote() -> object:
    """A read of another process's limits: EPERM or ESRCH would tell which pids exist."""
    return resource.prlimit(_zygote_pid(), resource.RLIMIT_NOFILE)


def _map_page(prot: int) -> int:
    address = _libc.mmap(None, mmap.PAGESIZE, prot, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)
    if address is None or address == _MAP_FAILED:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return int(address)


def _mmap_exec() -> object:
    """A writable and executable page: where injected code would be written, then run."""
    address = _map_page(mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    _libc.munmap(address, mmap.PAGESIZE)
    return "mapped"


def _mprotect_exec() -> object:
    """The same in two steps: a writable page (allowed), then made executable."""
    address = _map_page(mmap.PROT_READ | mmap.PROT_WRITE)
    try:
        _libc_call(_libc.mprotect(address, mmap.PAGESIZE, mmap.PROT_READ | mmap.PROT_EXEC))
    finally:
        _libc.munmap(address, mmap.PAGESIZE)
    return "executable"


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
    "kill_zygote": _kill_zygote,
    "prlimit_zygote": _prlimit_zygote,
    "mmap_exec": _mmap_exec,
    "mprotect_exec": _mprotect_exec,
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
