"""The ctypes callbacks made in the zygote, their code sealed read-and-execute before any fork.

Input: ctypes function pointers the worker made itself; nothing from a document. A ctypes
callback is a small trampoline that libffi (or CPython's own allocator) writes into a page mapped
writable *and* executable. The job child may hold no such page: the seccomp filter refuses
``PROT_EXEC`` to keep new code out, and a writable code page handed down by the zygote would be a
way around it (``tests/sandbox/test_sandbox.py`` checks a waiting spare's maps). So once the
zygote has made every callback it will ever make (the page deadline's signal handler,
``pdf_airlock.worker.deadline``; the font interface's, ``pdf_airlock.worker.fonts.serving``),
``seal`` moves each page holding one into a sealed memfd mapped
back at the same address, readable and executable, never writable: the seals forbid writing the
memfd and the mapping was never writable, so the code is as fixed as a library's. Where an
executable memfd is refused (``vm.memfd_noexec``), the page is made read-and-execute in place
instead (anonymous code then, which the spare's check reports).

After ``seal`` no ctypes callback may be made or freed in the process: the allocator's free
slots are in the sealed page, and filling one faults, as would freeing a sealed callback (so
``seal`` keeps each one alive for good, through the interpreter's shutdown). Nothing in the
zygote or a job child makes one after the warm-up (the parsers hand pypdfium2 bytes, not file
callbacks); a child trying would be killed by its seccomp filter anyway.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from pdf_airlock.worker.memory import map_at, protect, unmap

if TYPE_CHECKING:
    from _ctypes import CFuncPtr

__all__ = ["seal", "writable_code_ranges"]

_SEALS: Final = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
_MFD_EXEC: Final = 0x10  # <linux/memfd.h>, Linux 6.3: ask for an executable memfd explicitly
_NAME: Final = "pdf-airlock-callbacks"
_MAP_FIXED: Final = 0x10  # <sys/mman.h>; Python's mmap module does not name it
_CODE: Final = mmap.PROT_READ | mmap.PROT_EXEC


def writable_code_ranges(addresses: Iterable[int]) -> list[tuple[int, int]]:
    """(start, end) of each writable and executable mapping that holds one of ``addresses``."""
    wanted = set(addresses)
    found = []
    with open("/proc/self/maps", encoding="ascii") as maps:
        for line in maps:
            bounds, perms = line.split()[:2]
            start, end = (int(bound, 16) for bound in bounds.split("-"))
            if "w" in perms and "x" in perms and any(start <= address < end for address in wanted):
                found.append((start, end))
    return found


def _memfd_with(data: bytes) -> int:
    """A sealed memfd holding ``data``, opened read-only (the writable descriptor is closed)."""
    try:
        writable = os.memfd_create(_NAME, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING | _MFD_EXEC)
    except OSError:  # a kernel before MFD_EXEC
        writable = os.memfd_create(_NAME, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(writable, view) :]
        fcntl.fcntl(writable, fcntl.F_ADD_SEALS, _SEALS)
        return os.open(f"/proc/self/fd/{writable}", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(writable)


def _seal_range(start: int, end: int) -> None:
    length = end - start
    data = ctypes.string_at(start, length)
    try:
        readable = _memfd_with(data)
    except OSError:
        readable = -1
    if readable >= 0:
        try:
            # Mapped once elsewhere first: a refusal (a noexec memfd) then leaves the page as it
            # is, where a failed MAP_FIXED may already have unmapped it.
            trial = map_at(None, length, _CODE, mmap.MAP_SHARED, readable)
            if trial is not None:
                unmap(trial, length)
                if map_at(start, length, _CODE, mmap.MAP_SHARED | _MAP_FIXED, readable) == start:
                    return
        finally:
            os.close(readable)
    protect(start, length, _CODE)


def seal(callbacks: Iterable[CFuncPtr]) -> int:
    """Seal every writable code page holding one of ``callbacks`` (ctypes function pointers);
    returns how many mappings were sealed (none when they already were)."""
    kept = list(callbacks)
    for callback in kept:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(callback))  # never freed: see above
    addresses = [ctypes.cast(callback, ctypes.c_void_p).value or 0 for callback in kept]
    ranges = writable_code_ranges(addresses)
    for start, end in ranges:
        _seal_range(start, end)
    return len(ranges)
