"""The C library's ``mmap``, ``munmap`` and ``mprotect``, at raw addresses.

Python's ``mmap`` module gives no address for a read-only mapping and cannot map at a fixed
one; the fonts (``pdf_airlock.worker.fonts.store``) and the callbacks' sealed code
(``closures``) need both. Used in the zygote only.
"""

from __future__ import annotations

import ctypes
import os
from typing import Final

__all__ = ["map_at", "protect", "unmap"]

_FAILED: Final = ctypes.c_void_p(-1).value

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (
    ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long,
)  # fmt: skip
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def map_at(address: int | None, length: int, prot: int, flags: int, fd: int) -> int | None:
    """``mmap(address, length, prot, flags, fd, 0)``: the mapping's address, or None."""
    placed: int | None = _libc.mmap(address, length, prot, flags, fd, 0)
    return None if placed in (None, _FAILED) else placed


def unmap(address: int, length: int) -> None:
    _libc.munmap(address, length)


def protect(address: int, length: int, prot: int) -> None:
    if _libc.mprotect(address, length, prot) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
