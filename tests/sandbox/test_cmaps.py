"""pdfminer's predefined CMaps served from memory (``pdf_airlock.worker.cmaps``) decode exactly as pdfminer's
own loader reads them from its files, for every file it ships."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest

from pdf_airlock.worker import cmaps

PROBE = """
import sys
from pdfminer.cmapdb import CMapDB
from pdf_airlock.worker import cmaps
original = CMapDB._load_data
files = __import__("os").listdir(cmaps._directory())
names = sorted(n.removesuffix(".json.gz") for n in files if n.endswith(".json.gz"))
def fields(cls):
    return {k: v for k, v in vars(cls).items() if not k.startswith("__")}
expected = {name: fields(original(name)) for name in names}
held = cmaps.preload()
got = {name: fields(CMapDB._load_data(name)) for name in names}
assert held > 1_000_000, held
assert len(names) > 100, len(names)
assert got == expected
try:
    CMapDB._load_data("no-such-cmap")
except CMapDB.CMapNotFound:
    print("ok", len(names))
"""


def test_every_cmap_decodes_as_pdfminer_reads_it() -> None:
    """In a fresh interpreter: the loader is replaced process-wide by ``preload``."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("ok ")


@pytest.mark.parametrize("name", ["UniJIS-UCS2-H", "to-unicode-Adobe-Japan1"])
def test_decode_needs_no_file(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Once preloaded, a CMap is read from memory: any file open would fail here."""
    cmaps.preload()
    from pdfminer.cmapdb import CMapDB

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("a file was opened")

    monkeypatch.setattr("builtins.open", refuse)
    monkeypatch.setattr(os, "open", refuse)
    assert vars(CMapDB._load_data(name))


SHARED_PROBE = """
import ctypes, errno, mmap
from pdf_airlock.worker import cmaps
cmaps.preload()
[line] = [line for line in open("/proc/self/maps") if "pdf-airlock-cmaps" in line]
start, end = (int(part, 16) for part in line.split()[0].split("-"))
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
refused = libc.mprotect(start, end - start, mmap.PROT_READ | mmap.PROT_WRITE)
print(line.split()[1], refused, errno.errorcode.get(ctypes.get_errno()))
"""


def test_cmaps_are_shared_read_only_and_cannot_be_made_writable() -> None:
    """Shared with every child (a fork copies none of it), so no child may ever write it: the
    mapping is read-only and shared (``r--s``), and making it writable is refused."""
    done = subprocess.run(
        [sys.executable, "-c", SHARED_PROBE], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["r--s", "-1", "EACCES"], done.stdout
