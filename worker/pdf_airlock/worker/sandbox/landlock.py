"""Landlock for the job child: no filesystem access at all, no TCP bind/connect, and (ABI >= 6)
no signals or abstract-socket connections out of the child's own domain.

Assumes nothing about the document: applied before it is read. Uses the raw syscalls through
ctypes (no binding is needed for three calls). On a kernel without Landlock the layer reports
itself unavailable; the supervisor decides whether that is acceptable.
"""

from __future__ import annotations

import ctypes
import os
from typing import Final

__all__ = ["abi_version", "restrict_self"]

_SYS_CREATE_RULESET: Final = 444
_SYS_RESTRICT_SELF: Final = 446
_CREATE_RULESET_VERSION: Final = 1

# handled_access_fs bits by the ABI that introduced them.
_FS_ABI1: Final = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_FS_REFER: Final = 1 << 13  # ABI 2
_FS_TRUNCATE: Final = 1 << 14  # ABI 3
_FS_IOCTL_DEV: Final = 1 << 15  # ABI 5
_NET_BIND_TCP: Final = 1 << 0  # ABI 4
_NET_CONNECT_TCP: Final = 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX: Final = 1 << 0  # ABI 6
_SCOPE_SIGNAL: Final = 1 << 1  # ABI 6

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


def abi_version() -> int:
    """The kernel's Landlock ABI, or 0 when Landlock is absent or disabled."""
    version = _libc.syscall(_SYS_CREATE_RULESET, None, ctypes.c_size_t(0), _CREATE_RULESET_VERSION)
    return max(0, int(version))


def _attr(abi: int) -> tuple[_RulesetAttr, int]:
    fs = _FS_ABI1
    if abi >= 2:
        fs |= _FS_REFER
    if abi >= 3:
        fs |= _FS_TRUNCATE
    if abi >= 5:
        fs |= _FS_IOCTL_DEV
    net = _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0
    scoped = _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0
    attr = _RulesetAttr(fs, net, scoped)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    return attr, size


def restrict_self(abi: int) -> list[str]:
    """Deny every handled access with no exception; returns what is covered. Needs no_new_privs."""
    attr, size = _attr(abi)
    fd = int(_libc.syscall(_SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), 0))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        if _libc.syscall(_SYS_RESTRICT_SELF, fd, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(fd)
    covered = ["filesystem"]
    if attr.handled_access_net:
        covered.append("tcp")
    if attr.scoped:
        covered.append("signals+abstract_unix")
    return covered
