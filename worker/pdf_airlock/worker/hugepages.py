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
engines' tables), the bulk of it (bench/perf/cpu_per_doc.py, "CPU per document" in
docs/performance.md).

Best effort: a kernel without ``MADV_COLLAPSE``, or with THP off, or a range the kernel will
not collapse (no huge page free), is left as it is.
"""

from __future__ import annotations

import array
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

_PAGEMAP_ENTRY: Final = 8  # bytes per page in /proc/self/pagemap
_PRESENT_BIT: Final = 63

_libc = ctypes.CDLL(None, use_errno=True)
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


def _resident_share(pagemap: int, start: int) -> float:
    """Share of the 4 KiB pages of the 2 MiB range at ``start`` that are resident, from the
    present bit of each page's /proc/self/pagemap entry (a file read: the container's seccomp
    profile allows it, where it refuses ``mincore``)."""
    pages = _HUGE_PAGE // _PAGE
    entries = array.array("Q", os.pread(pagemap, pages * _PAGEMAP_ENTRY, start // _PAGE * _PAGEMAP_ENTRY))
    return sum(entry >> _PRESENT_BIT for entry in entries) / pages


def collapse_warm_memory() -> int:
    """Collapse each 2 MiB-aligned range of anonymous memory at least half resident into a
    huge page; returns how many the kernel collapsed (0 where it cannot)."""
    collapsed = 0
    try:
        pagemap = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:  # no /proc: nothing to go by
        return 0
    try:
        for start, end in _anonymous_ranges():
            huge = (start + _HUGE_PAGE - 1) & ~(_HUGE_PAGE - 1)
            while huge + _HUGE_PAGE <= end:
                resident = _resident_share(pagemap, huge) >= _MIN_RESIDENT_SHARE
                if resident and _libc.madvise(huge, _HUGE_PAGE, _MADV_COLLAPSE) == 0:
                    collapsed += 1
                huge += _HUGE_PAGE
    finally:
        os.close(pagemap)
    return collapsed
