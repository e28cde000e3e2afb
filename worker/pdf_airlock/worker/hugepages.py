"""The zygote's warm memory in huge pages, so that a fork of it and a child's exit cost less.

A fork copies one page-table entry for every 4 KiB page of the zygote's private memory that is
resident (write-protecting both copies), and each child's exit takes them down again: with
Tesseract's model and the engines' tables loaded that is tens of thousands of entries each way,
per document. Once the warm-up is done, ``collapse_warm_memory`` asks the kernel to back every
2 MiB-aligned range of the zygote's anonymous memory that is mostly resident with one
transparent huge page (``MADV_COLLAPSE``, Linux 6.1 and later, whatever the system's THP
setting): one entry per 2 MiB to copy and tear down. Nothing about sharing changes: the memory
stays private copy-on-write, and the first write to such a range by the zygote or a child splits
the mapping back into 4 KiB entries in that process, whose copy-on-write is then per 4 KiB page
as before. So the ranges that stay cheap are the ones no one writes (Tesseract's model, the
engines' tables), the bulk of it (bench/cpu_per_doc.py, "CPU per document" in
docs/performance.md).

Best effort: a kernel without ``MADV_COLLAPSE``, or with THP off, or a range the kernel will
not collapse (no huge page free), is left as it is.
"""

from __future__ import annotations

import ctypes
import os
from typing import Final

__all__ = ["collapse_warm_memory"]

_MADV_COLLAPSE: Final = 25  # <linux/mman.h>
_HUGE_PAGE: Final = 2 << 20
_PAGE: Final = os.sysconf("SC_PAGE_SIZE")
# A range is collapsed when at least this share of its 4 KiB pages is resident: the rest is
# memory the huge page adds (at most 1 MiB a range; well under 1 MiB in all, measured).
_MIN_RESIDENT_SHARE: Final = 0.5
_PRIVATE_WRITABLE: Final = "rw-p"
_HEAP: Final = "[heap]"
_PATH_FIELD: Final = 5

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mincore.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)
_libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)


def _anonymous_ranges() -> list[tuple[int, int]]:
    """(start, end) of each private writable mapping backed by no file: the heap, glibc's and
    pymalloc's mmapped arenas, libraries' large allocations. Not the stack: it grows down."""
    ranges = []
    with open("/proc/self/maps", encoding="ascii") as maps:
        for line in maps:
            fields = line.split()
            anonymous = len(fields) == _PATH_FIELD or fields[_PATH_FIELD] == _HEAP
            if fields[1] == _PRIVATE_WRITABLE and anonymous:
                start, end = (int(bound, 16) for bound in fields[0].split("-"))
                ranges.append((start, end))
    return ranges


def _resident_share(start: int, residency: ctypes.Array[ctypes.c_char]) -> float:
    if _libc.mincore(start, _HUGE_PAGE, residency) != 0:
        return 0.0
    return sum(byte & 1 for byte in residency.raw) / len(residency.raw)


def collapse_warm_memory() -> int:
    """Collapse each 2 MiB-aligned range of anonymous memory at least half resident into a
    huge page; returns how many the kernel collapsed (0 where it cannot)."""
    residency = ctypes.create_string_buffer(_HUGE_PAGE // _PAGE)
    collapsed = 0
    for start, end in _anonymous_ranges():
        huge = (start + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
        while huge + _HUGE_PAGE <= end:
            resident = _resident_share(huge, residency) >= _MIN_RESIDENT_SHARE
            if resident and _libc.madvise(huge, _HUGE_PAGE, _MADV_COLLAPSE) == 0:
                collapsed += 1
            huge += _HUGE_PAGE
    return collapsed
