"""A seccomp-bpf allowlist for the job child's parse phase, compiled once in the zygote.

Assumes nothing about the document; the filter is loaded after ``no_new_privs`` and before the
first byte of the document is read. Policy (x86_64; other architectures report the layer as
unavailable rather than guessing syscall numbers):

- ALLOW: the syscalls a parse needs (memory, reading the input fd, writing the result pipe,
  signals to itself, time, futex, exit). Derived by tracing every job of the test corpus with
  strace (``python scripts/trace_syscalls.py``; see docs/security.md).
- EACCES: path-based file calls (open*, stat, access, readlink, getdents...), so a parser that
  lazily tries to open a data file fails with a Python error instead of a dead process.
- ENOTTY: ioctl (isatty probes on the /dev/null stdio).
- Conditional, allowed only when an argument matches:

  - ``mmap`` and ``mprotect`` only without ``PROT_EXEC`` (write-xor-execute). Every library
    was mapped in the zygote's warm-up, the zygote holds no writable and executable mapping
    (tests/sandbox/test_sandbox.py checks a spare's maps), and no parse maps code (the traced corpus
    never asks for ``PROT_EXEC``): a request for it is injected code or a ``dlopen`` after the
    sandbox is on. ``pkey_mprotect`` is not allowed at all. A ctypes callback made in the
    child maps its closure writable and executable, so it is killed too: the parsers make
    none (pypdfium2 gets the document as bytes, not through a file-access callback), and none
    is preallocated in the zygote, whose free closures would be writable and executable pages
    in every child.
  - ``prlimit64`` only on the child's own limits (pid 0, what glibc's getrlimit and
    setrlimit pass: any other pid would tell existing pids (EPERM) from free ones (ESRCH)), and
    only as a read (new limit NULL). A child allowed to serve several jobs of one input
    (``Limits.documents`` > 1, off by default) gets a variant that also allows a write of its
    RLIMIT_CPU: it moves its soft CPU limit up by one budget per job, under the hard limit set
    before the filter (``pdf_airlock.worker.sandbox.rlimits.renew_cpu``).
  - ``tgkill``/``tkill`` only to the child itself (abort() raises SIGABRT this way); the pid is
    patched into the compiled program in each child.
  - ``recvmsg`` only on the spare socket's fd number (the pre-forked child is sandboxed before
    its job exists and receives the job's fds over that socket, then closes it; nothing in the
    filter can create an fd, so the number stays dead).
  - ``prctl`` only as ``PR_SET_NAME`` (the child renames itself from ``airlock-spare`` to
    ``airlock-job`` when its job arrives, so ``ps`` and the tests can tell an idle spare from a
    running job).

- Everything else (execve, fork/clone, socket, ptrace, mount, unshare, kill, setrlimit, bpf,
  io_uring, keyctl...) kills the process with SIGSYS, which the supervisor reports as
  ``sandbox_violation``; so does a conditional call whose argument does not match. Only the
  path-based calls and ioctl get an errno, because a well-behaved parser makes them; nothing
  well-behaved maps code or reads another process's limits, so these are killed.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ALLOWED",
    "CONDITIONAL",
    "EACCES_CALLS",
    "CompiledFilter",
    "compile_filter",
    "unavailable_reason",
]

# x86_64 syscall numbers (asm/unistd_64.h).
_NR: Final[dict[str, int]] = {
    "read": 0, "write": 1, "open": 2, "close": 3, "stat": 4, "fstat": 5, "lstat": 6, "poll": 7,
    "lseek": 8, "mmap": 9, "mprotect": 10, "munmap": 11, "brk": 12, "rt_sigaction": 13,
    "rt_sigprocmask": 14, "rt_sigreturn": 15, "ioctl": 16, "pread64": 17, "readv": 19, "writev": 20,
    "access": 21, "sched_yield": 24, "mremap": 25, "madvise": 28, "setitimer": 38, "getpid": 39,
    "recvmsg": 47, "exit": 60,
    "uname": 63, "fcntl": 72, "getcwd": 79, "rename": 82, "mkdir": 83, "creat": 85, "unlink": 87,
    "readlink": 89, "gettimeofday": 96, "getrlimit": 97, "getrusage": 98, "sysinfo": 99,
    "times": 100, "getuid": 102, "getgid": 104, "geteuid": 107, "getegid": 108, "getppid": 110,
    "sigaltstack": 131, "prctl": 157, "gettid": 186, "tkill": 200, "futex": 202, "sched_getaffinity": 204,
    "getdents64": 217, "clock_gettime": 228, "clock_getres": 229, "clock_nanosleep": 230,
    "exit_group": 231, "tgkill": 234, "openat": 257, "newfstatat": 262, "readlinkat": 267,
    "faccessat": 269, "prlimit64": 302, "getrandom": 318, "statx": 332, "rseq": 334,
    "openat2": 437, "faccessat2": 439,
}  # fmt: skip

ALLOWED: Final = (
    # traced in the corpus (scripts/trace_syscalls.py)
    "munmap", "mremap", "brk", "pread64", "write", "close", "exit_group", "newfstatat",
    "rt_sigprocmask", "getpid", "gettid", "futex",
    # not seen in the corpus, kept for paths it does not reach: other allocator and libc paths,
    # signal delivery (SIGXCPU/SIGABRT), clocks without a vDSO, and Python's own I/O helpers
    "read", "fstat", "lseek", "madvise", "rt_sigaction", "rt_sigreturn", "sched_yield",
    "getrandom", "clock_gettime", "gettimeofday", "exit",
    # the child's own clock for OCR's per-page deadline (pdf_airlock.worker.deadline)
    "setitimer",
)  # fmt: skip
EACCES_CALLS: Final = (
    "open", "openat", "openat2", "creat", "stat", "lstat", "statx", "access", "faccessat",
    "faccessat2", "readlink", "readlinkat", "getdents64", "mkdir", "unlink", "rename",
)  # fmt: skip

# Allowed only when an argument matches (see _program); for scripts/trace_syscalls.py's report.
CONDITIONAL: Final = {
    "mmap": "without PROT_EXEC",
    "mprotect": "without PROT_EXEC",
    "prlimit64": "read-only, own (pid 0); RLIMIT_CPU writes too with --documents-per-child > 1",
    "tgkill": "self only",
    "tkill": "self only",
    "ioctl": "ENOTTY",
    "recvmsg": "spare socket only",
    "prctl": "PR_SET_NAME only",
}
_PR_SET_NAME: Final = 15
_RLIMIT_CPU: Final = 0  # <sys/resource.h>
_PROT_EXEC: Final = 0x4  # <sys/mman.h>

_AUDIT_ARCH_X86_64: Final = 0xC000003E
_X32_SYSCALL_BIT: Final = 0x40000000
_RET_KILL_PROCESS: Final = 0x80000000
_RET_ALLOW: Final = 0x7FFF0000
_RET_ERRNO: Final = 0x00050000
_LD_W_ABS: Final = 0x20
_JEQ_K: Final = 0x15
_JGE_K: Final = 0x35
_JSET_K: Final = 0x45
_RET_K: Final = 0x06
_OFF_NR: Final = 0
_OFF_ARCH: Final = 4
_OFF_ARG0_LO: Final = 16
_OFF_ARG1_LO: Final = 24
_OFF_ARG2_LO: Final = 32
_OFF_ARG2_HI: Final = 36
_PID_PLACEHOLDER: Final = 0xFFFFFFFF
_PR_SET_SECCOMP: Final = 22
_SECCOMP_MODE_FILTER: Final = 2


_libc = ctypes.CDLL(None, use_errno=True)


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


# (code, jump-if-true label, jump-if-false label, k); labels are resolved to forward offsets.
_Insn = tuple[int, str | None, str | None, int]


def unavailable_reason() -> str | None:
    """Why this machine cannot use the filter, or None."""
    if platform.machine() != "x86_64":
        return f"no syscall table for {platform.machine()}"
    return None


def _program(recv_fd: int, *, renew_cpu: bool) -> tuple[list[_Insn], dict[str, int]]:
    insns: list[_Insn] = []
    labels: dict[str, int] = {}

    def emit(code: int, k: int, jt: str | None = None, jf: str | None = None) -> None:
        insns.append((code, jt, jf, k))

    def label(name: str) -> None:
        labels[name] = len(insns)

    emit(_LD_W_ABS, _OFF_ARCH)
    emit(_JEQ_K, _AUDIT_ARCH_X86_64, None, "kill")
    emit(_LD_W_ABS, _OFF_NR)
    emit(_JGE_K, _X32_SYSCALL_BIT, "kill", None)
    emit(_JEQ_K, _NR["mmap"], "no_exec", None)  # first: the most frequent call after brk
    emit(_JEQ_K, _NR["mprotect"], "no_exec", None)
    for name in ALLOWED:
        emit(_JEQ_K, _NR[name], "allow", None)
    for name in EACCES_CALLS:
        emit(_JEQ_K, _NR[name], "eacces", None)
    emit(_JEQ_K, _NR["ioctl"], "enotty", None)
    emit(_JEQ_K, _NR["prlimit64"], "prlimit", None)
    emit(_JEQ_K, _NR["tgkill"], "self_signal", None)
    emit(_JEQ_K, _NR["tkill"], "self_signal", None)
    emit(_JEQ_K, _NR["recvmsg"], "recvmsg", None)
    emit(_JEQ_K, _NR["prctl"], "prctl", None)
    emit(_RET_K, _RET_KILL_PROCESS)
    label("recvmsg")
    emit(_LD_W_ABS, _OFF_ARG0_LO)  # the kernel reads the fd as a 32-bit int
    emit(_JEQ_K, recv_fd, "allow", "kill")
    label("prctl")
    emit(_LD_W_ABS, _OFF_ARG0_LO)  # the option is a 32-bit int
    emit(_JEQ_K, _PR_SET_NAME, "allow", "kill")
    label("no_exec")
    emit(_LD_W_ABS, _OFF_ARG2_LO)  # prot: PROT_EXEC is a bit of its low word
    emit(_JSET_K, _PROT_EXEC, "kill", "allow")
    label("prlimit")
    write = "cpu_limit" if renew_cpu else "kill"
    for code, k, jt, jf in (
        (_LD_W_ABS, _OFF_ARG0_LO, None, None),  # the pid is a 32-bit pid_t; 0 means the caller
        (_JEQ_K, 0, None, "kill"),
        (_LD_W_ABS, _OFF_ARG2_LO, None, None),  # the new limit: NULL for a read
        (_JEQ_K, 0, None, write),
        (_LD_W_ABS, _OFF_ARG2_HI, None, None),
        (_JEQ_K, 0, "allow", write),
    ):
        emit(code, k, jt, jf)
    if renew_cpu:
        label("cpu_limit")  # a write: RLIMIT_CPU only (a child serving several jobs renews its budget)
        emit(_LD_W_ABS, _OFF_ARG1_LO)  # the resource is a 32-bit unsigned int
        emit(_JEQ_K, _RLIMIT_CPU, "allow", "kill")
    label("self_signal")
    emit(_LD_W_ABS, _OFF_ARG0_LO)
    emit(_JEQ_K, _PID_PLACEHOLDER, "allow", "kill")
    label("kill")
    emit(_RET_K, _RET_KILL_PROCESS)
    label("allow")
    emit(_RET_K, _RET_ALLOW)
    label("eacces")
    emit(_RET_K, _RET_ERRNO | errno.EACCES)
    label("enotty")
    emit(_RET_K, _RET_ERRNO | errno.ENOTTY)
    return insns, labels


def _offset(labels: dict[str, int], target: str | None, index: int) -> int:
    if target is None:
        return 0
    offset = labels[target] - index - 1
    if not 0 <= offset <= 255:
        raise ValueError(f"BPF jump to {target} out of range")
    return offset


@dataclass(slots=True)
class CompiledFilter:
    """The assembled program; ``load`` patches this process's pid in and installs it."""

    program: ctypes.Array[_SockFilter]
    pid_slots: tuple[int, ...]

    def load(self) -> None:
        pid = os.getpid()
        for slot in self.pid_slots:
            self.program[slot].k = pid
        fprog = _SockFprog(len(self.program), self.program)
        if _libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"seccomp filter refused: {os.strerror(err)}")


def compile_filter(recv_fd: int, *, renew_cpu: bool = False) -> CompiledFilter:
    """Assemble the program; ``recv_fd`` is the one fd number on which recvmsg is allowed;
    ``renew_cpu`` also allows the child to set its own RLIMIT_CPU (a child that serves several
    jobs, ``Limits.documents`` > 1)."""
    insns, labels = _program(recv_fd, renew_cpu=renew_cpu)
    program = (_SockFilter * len(insns))()
    pid_slots = []
    for index, (code, jt, jf, k) in enumerate(insns):
        program[index] = _SockFilter(code, _offset(labels, jt, index), _offset(labels, jf, index), k)
        if k == _PID_PLACEHOLDER:
            pid_slots.append(index)
    return CompiledFilter(program, tuple(pid_slots))
