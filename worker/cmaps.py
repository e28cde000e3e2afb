"""pdfminer's predefined CMaps (CJK encodings), served from memory to the job child.

pdfminer loads a predefined CMap (``90ms-RKSJ-H``, ``UniGB-UCS2-H``, ``to-unicode-Adobe-Japan1``...)
from its package's ``cmap/*.json.gz`` on first use. A job child can open no file, so without
this the layout engine silently falls back to ``(cid:N)`` or nothing for CJK fonts.

The zygote reads the compressed files once (``preload``: about 8 MB, shared copy-on-write with
every child) and replaces ``CMapDB._load_data`` with a loader that decompresses and decodes only
the CMap a document asks for, inside the child. Decoding every CMap in the zygote instead would
cost seconds of warm-up and over 100 MB in every job. The decoding mirrors pdfminer's own
``_load_data`` (its JSON format and key conversions); tests/test_cmaps.py compares the two on
every file. ``CMAP_PATH`` is not honoured: only the installed package's files are served.
"""

from __future__ import annotations

import gzip
import json
import os
from typing import Any, Final

__all__ = ["loaded_bytes", "preload"]

_SUFFIX: Final = ".json.gz"
_INT_KEYED: Final = ("CID2UNICHR_H", "CID2UNICHR_V")
_compressed: dict[str, bytes] = {}


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
    compressed = _compressed.get(name)
    if compressed is None:
        raise cls.CMapNotFound(name)
    return decode(name, compressed)


def preload() -> int:
    """Read every predefined CMap file into memory and route pdfminer's loader there. Returns the
    number of compressed bytes held."""
    from pdfminer.cmapdb import CMapDB

    directory = _directory()
    for entry in sorted(os.listdir(directory)):
        if entry.endswith(_SUFFIX):
            with open(os.path.join(directory, entry), "rb") as handle:
                _compressed[entry.removesuffix(_SUFFIX)] = handle.read()
    CMapDB._load_data = classmethod(_load_from_memory)  # type: ignore[method-assign,assignment]
    return loaded_bytes()


def loaded_bytes() -> int:
    return sum(len(data) for data in _compressed.values())
