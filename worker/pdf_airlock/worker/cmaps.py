"""pdfminer's predefined CMaps (CJK encodings), served from memory to the job child.

pdfminer loads a predefined CMap (``90ms-RKSJ-H``, ``UniGB-UCS2-H``, ``to-unicode-Adobe-Japan1``...)
from its package's ``cmap/*.json.gz`` on first use. A job child can open no file, so without
this the layout engine silently falls back to ``(cid:N)`` or nothing for CJK fonts.

The zygote reads the compressed files once (``preload``: shared copy-on-write with every
child) and replaces ``CMapDB._load_data`` with a loader that decompresses and decodes only
the CMap a document asks for, inside the child. Decoding every CMap in the zygote instead would
cost seconds of warm-up and many times that memory in every job. The decoding mirrors pdfminer's own
``_load_data`` (its JSON format and key conversions); tests/test_cmaps.py compares the two on
every file. ``CMAP_PATH`` is not honoured: only the installed package's files are served.
"""

from __future__ import annotations

import gzip
import json
import mmap
import os
from typing import Any, Final

__all__ = ["decode", "loaded_bytes", "preload"]

_SUFFIX: Final = ".json.gz"
_INT_KEYED: Final = ("CID2UNICHR_H", "CID2UNICHR_V")
# Every file's bytes in one private anonymous mapping, and each file's (offset, length): outside
# the malloc heap, where megabytes of small objects would push a job's allocations onto fresh
# pages and make every read slower (``bench/ab_servers.py text-10.pdf`` shows it).
_store: list[mmap.mmap] = []
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
    return decode(name, _store[0][offset : offset + length])


def preload() -> int:
    """Read every predefined CMap file into memory and route pdfminer's loader there. Returns the
    number of compressed bytes held."""
    from pdfminer.cmapdb import CMapDB

    directory = _directory()
    names = sorted(entry for entry in os.listdir(directory) if entry.endswith(_SUFFIX))
    sizes = [os.path.getsize(os.path.join(directory, entry)) for entry in names]
    store = mmap.mmap(-1, max(1, sum(sizes)), flags=mmap.MAP_PRIVATE)
    offset = 0
    for entry, size in zip(names, sizes, strict=True):
        with open(os.path.join(directory, entry), "rb") as handle:
            data = handle.read(size)
        store[offset : offset + len(data)] = data
        _index[entry.removesuffix(_SUFFIX)] = (offset, len(data))
        offset += len(data)
    _store[:] = [store]
    CMapDB._load_data = classmethod(_load_from_memory)  # type: ignore[method-assign,assignment]
    return loaded_bytes()


def loaded_bytes() -> int:
    return sum(length for _offset, length in _index.values())
