"""The catalogue's font files in the zygote's memory, shared read-only with every job child.

Two kinds of holding, each one mapping per file or set of files, shared and read-only (a fork
copies no page-table entry of a shared mapping; each mapping costs a fork and a child's exit a
few microseconds, ``bench/perf/cpu_per_doc.py``):

- the small files (the non-CJK faces, a few MB in all) are read once into one sealed memfd,
  as the CMaps are (``pdf_airlock.worker.cmaps``): one mapping for all of them;
- a large file (a CJK collection, tens of MB) is mapped from the file itself, whose pages the
  kernel shares with its page cache: a copy would double the memory for faces most documents
  never use. Its descriptor is closed at once; the mapping keeps the file.

No process can write either: the memfd's seals forbid it and neither mapping was ever writable.
"""

from __future__ import annotations

import ctypes
import fcntl
import mmap
import os
import stat
from dataclasses import dataclass
from typing import Final

from pdf_airlock.worker.memory import map_at

__all__ = ["LARGE_FILE_BYTES", "MappedFile", "load", "map_file"]

LARGE_FILE_BYTES: Final = 4 << 20  # a file this large or larger is mapped, not copied
_SEALS: Final = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
_NAME: Final = "pdf-airlock-fonts"


@dataclass(frozen=True, slots=True)
class MappedFile:
    address: int
    size: int

    def view(self) -> memoryview:
        """The bytes, read-only (a write would fault)."""
        return memoryview((ctypes.c_ubyte * self.size).from_address(self.address)).cast("B")


def _open(path: str) -> tuple[int, int] | None:
    """(descriptor, size) of a non-empty regular file, or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW)
    except OSError:
        return None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
        os.close(fd)
        return None
    return fd, info.st_size


def map_file(path: str) -> MappedFile | None:
    """``path`` mapped shared and read-only, its descriptor closed; None if it is missing, not a
    regular file or empty."""
    opened = _open(path)
    if opened is None:
        return None
    fd, size = opened
    try:
        address = map_at(None, size, mmap.PROT_READ, mmap.MAP_SHARED, fd)
    finally:
        os.close(fd)
    return MappedFile(address, size) if address is not None else None


def _read(path: str) -> bytes | None:
    opened = _open(path)
    if opened is None:
        return None
    fd, size = opened
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(size)
    return data if len(data) == size else None


def _sealed(parts: list[bytes]) -> list[MappedFile] | None:
    """``parts`` one after another in a sealed memfd, mapped read-only; None where memfds or
    seals are missing."""
    try:
        writable = os.memfd_create(_NAME, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except OSError:
        return None
    try:
        for part in parts:
            view = memoryview(part)
            while view:
                view = view[os.write(writable, view) :]
        fcntl.fcntl(writable, fcntl.F_ADD_SEALS, _SEALS)
        readable = os.open(f"/proc/self/fd/{writable}", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    finally:
        os.close(writable)
    total = sum(len(part) for part in parts)
    try:
        base = map_at(None, total, mmap.PROT_READ, mmap.MAP_SHARED, readable)
    finally:
        os.close(readable)
    if base is None:
        return None
    files, offset = [], 0
    for part in parts:
        files.append(MappedFile(base + offset, len(part)))
        offset += len(part)
    return files


def load(paths: list[str]) -> list[MappedFile | None]:
    """Each file in memory, in order; None for one that is missing, not a regular file or empty."""
    held: list[MappedFile | None] = [None] * len(paths)
    small: dict[int, bytes] = {}
    for number, path in enumerate(paths):
        try:
            size = os.stat(path).st_size
        except OSError:
            continue
        if size >= LARGE_FILE_BYTES:
            held[number] = map_file(path)
        elif (data := _read(path)) is not None:
            small[number] = data
    sealed = _sealed(list(small.values())) if small else []
    for number, mapped in zip(small, sealed or [], strict=False):
        held[number] = mapped
    if sealed is None:  # no memfd here: each small file mapped on its own
        for number in small:
            held[number] = map_file(paths[number])
    return held
