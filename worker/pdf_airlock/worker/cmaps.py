"""pdfminer's predefined CMaps (CJK encodings), served from memory to the job child.

pdfminer loads a predefined CMap (``90ms-RKSJ-H``, ``UniGB-UCS2-H``, ``to-unicode-Adobe-Japan1``...)
from its package's ``cmap/*.json.gz`` on first use. A job child can open no file, so without
this the layout engine silently falls back to ``(cid:N)`` or nothing for CJK fonts.

The zygote reads the compressed files once (``preload``) into a sealed memfd that it maps shared
and read-only, through a read-only descriptor: a fork copies no page-table entry of a shared
mapping (every child faults in only the CMaps it decodes, and its exit unmaps no more), where a
private copy's ~8 MB of entries were copied at every fork and torn down at every exit
(bench/perf/cpu_per_doc.py). No process can write it: the seals forbid writes and the mapping was
never writable. The mapping is made through libc, not Python's ``mmap`` (which keeps a duplicate of
the descriptor for the mapping's life): once it exists, the zygote holds no descriptor of it.
Where memfds or sealing are missing, a private anonymous copy serves instead.
It replaces ``CMapDB._load_data`` with a loader that decompresses and decodes only
the CMap a document asks for, inside the child. Decoding every CMap in the zygote instead would
cost seconds of warm-up and many times that memory in every job. The decoding mirrors pdfminer's own
``_load_data`` (its JSON format and key conversions); tests/sandbox/test_cmaps.py compares the two on
every file. ``CMAP_PATH`` is not honoured: only the installed package's files are served.
"""

from __future__ import annotations

import ctypes
import fcntl
import gzip
import json
import mmap
import os
from typing import Any, Final

__all__ = ["decode", "loaded_bytes", "preload"]


_SUFFIX: Final = ".json.gz"
_INT_KEYED: Final = ("CID2UNICHR_H", "CID2UNICHR_V")
# Every file's bytes in one mapping, and each file's (offset, length): outside the malloc heap,
# where megabytes of small objects would push a job's allocations onto fresh pages and make
# every read slower (``bench/studies/ab_servers.py text-10.pdf`` shows it).
_store: list[memoryview] = []
_index: dict[str, tuple[int, int]] = {}


def _directory() -> str:
    import pdfminer

    return os.path.join(os.path.dirname(pdfminer.__file__), "cmap")


def _int_keys(mapping: dict[str, Any]) -> dict[Any, Any]:
    """pdfminer's ``_convert_code2cid_keys``: numeric string keys back to ints, recursively."""
    converted: dict[Any, Any] = {}
    for key, value in mapping.items():
        try:
            new_key: Any = int(key)
        except (ValueError, TypeError):
            new_key = key
        converted[new_key] = _int_keys(value) if isinstance(value, dict) else value
    return converted


def decode(name: str, compressed: bytes) -> type[Any]:
    """The class pdfminer's ``_load_data`` builds from one ``.json.gz`` file."""
    data: dict[str, Any] = json.loads(gzip.decompress(compressed).decode("utf-8"))
    for key in _INT_KEYED:
        if key in data:
            data[key] = {int(k): v for k, v in data[key].items()}
    if data.get("CODE2CID"):
        data["CODE2CID"] = _int_keys(data["CODE2CID"])
    return type(str(name), (), data)


def _load_from_memory(cls: Any, name: str) -> type[Any]:
    name = name.replace("\0", "")
    place = _index.get(name)
    if place is None or not _store:
        raise cls.CMapNotFound(name)
    offset, length = place
    return decode(name, bytes(_store[0][offset : offset + length]))


def preload() -> int:
    """Read every predefined CMap file into memory and route pdfminer's loader there. Returns the
    number of compressed bytes held."""
    from pdfminer.cmapdb import CMapDB

    directory = _directory()
    names = sorted(entry for entry in os.listdir(directory) if entry.endswith(_SUFFIX))
    parts = []
    offset = 0
    for entry in names:
        with open(os.path.join(directory, entry), "rb") as handle:
            data = handle.read()
        parts.append(data)
        _index[entry.removesuffix(_SUFFIX)] = (offset, len(data))
        offset += len(data)
    everything = b"".join(parts) or b"\0"
    try:
        store = _shared_read_only(everything)
    except OSError:  # no memfd or no sealing here: a private copy
        private = mmap.mmap(-1, len(everything), flags=mmap.MAP_PRIVATE)
        private[:] = everything
        store = memoryview(private)
    _store[:] = [store]
    CMapDB._load_data = classmethod(_load_from_memory)  # type: ignore[method-assign,assignment]
    return loaded_bytes()


_SEALS: Final = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


def _shared_read_only(data: bytes) -> memoryview:
    """``data`` in a sealed memfd, mapped shared from a read-only descriptor (so the mapping can
    never be made writable), with no descriptor left open (Python's ``mmap`` would keep one)."""
    writable = os.memfd_create("pdf-airlock-cmaps", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(writable, view) :]
        fcntl.fcntl(writable, fcntl.F_ADD_SEALS, _SEALS)
        readable = os.open(f"/proc/self/fd/{writable}", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(writable)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mmap.restype = ctypes.c_void_p
        libc.mmap.argtypes = (
            ctypes.c_void_p,
            ctypes.c_size_t,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_long,
        )
        address = libc.mmap(None, len(data), mmap.PROT_READ, mmap.MAP_SHARED, readable, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap of the CMap store failed")
    finally:
        os.close(readable)
    return memoryview((ctypes.c_char * len(data)).from_address(address)).cast("B")  # for the process's life


def loaded_bytes() -> int:
    return sum(length for _offset, length in _index.values())
