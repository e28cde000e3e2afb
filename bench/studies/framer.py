"""Cost of framing one long message: ``python -m bench.studies.framer [--mib 16 64 128] [--old REV]``.

A single message of each size is fed to the stdio transport's framer (``pdf_airlock.server.stdio.framing``) in
64 KiB reads, as the transport reads stdin, once newline-delimited and once with a
``Content-Length`` header. Prints, per framing, size and code: the CPU time to frame it, the
peak of memory allocated meanwhile (tracemalloc, the body still held, as its consumer holds
it) over the message's size, and the bytes searched for a delimiter over the message's size.
``--old`` also runs the framer of another revision (default ``HEAD``, read with ``git show``),
its searches counted through a counting buffer.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import tempfile
import time
import tracemalloc
from pathlib import Path
from types import ModuleType
from typing import Any

from pdf_airlock.server.stdio import framing as framing_module

ROOT = Path(__file__).resolve().parents[2]

READ = 1 << 16
MIB = 1 << 20
HEAD = b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"'
TAIL = b'"}}'


class _CountingBuffer(bytearray):
    """A bytearray that counts the bytes its ``find`` searches (for a framer without a count)."""

    searched = 0

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:
        first = 0 if start is None else start
        found = super().find(sub, first)
        _CountingBuffer.searched += (found + len(sub) if found >= 0 else len(self)) - first
        return found


def load_old(revision: str) -> ModuleType:
    """The framer's module as it is at ``revision``, imported under another name."""
    for where in (
        "server/pdf_airlock/server/stdio/framing.py",
        "server/pdf_airlock/server/mcp/framing.py",
        "server/transport.py",
    ):
        shown = subprocess.run(
            ["git", "show", f"{revision}:{where}"], cwd=ROOT, capture_output=True, check=False
        )
        if shown.returncode == 0:
            break
    shown.check_returncode()
    source = shown.stdout
    path = Path(tempfile.mkdtemp()) / "old_transport.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("old_transport", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reads(size: int, framing: str) -> list[bytes]:
    """The message of ``size`` bytes as 64 KiB reads; the filler read is one shared object."""
    filler = b"x" * READ
    body_fill = size - len(HEAD) - len(TAIL) - (1 if framing == "ndjson" else 0)
    first = HEAD if framing == "ndjson" else b"Content-Length: %d\r\n\r\n" % size + HEAD
    last = b"x" * (body_fill % READ) + TAIL + (b"\n" if framing == "ndjson" else b"")
    return [first, *[filler] * (body_fill // READ), last]


def measure(framer: Any, chunks: list[bytes], size: int) -> tuple[float, float]:
    """(CPU seconds, peak bytes allocated over ``size``) to frame ``chunks`` into one body."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    started = time.process_time()
    bodies = []
    for chunk in chunks:
        bodies += framer.feed(chunk)
    cpu = time.process_time() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert len(bodies) == 1 and len(bodies[0]) >= size - 64, "the message was not framed whole"
    return cpu, peak / size


def run(label: str, module: ModuleType, mib: int, framing: str) -> None:
    size = mib * MIB
    chunks = reads(size, framing)
    framer_class = getattr(module, "Framer", None) or module._Framer  # older revisions: _Framer
    framer = framer_class(size + MIB)
    counted = not hasattr(framer, "searched")
    if counted:
        framer.buffer = _CountingBuffer()
        _CountingBuffer.searched = 0
    cpu, peak = measure(framer, chunks, size)
    searched = _CountingBuffer.searched if counted else framer.searched
    ratio = searched / size
    print(f"{framing:7} {mib:4} MiB  {label:5}  cpu {cpu:7.3f} s  peak {peak:4.2f}x  searched {ratio:8.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, nargs="+", default=[16, 64, 128])
    parser.add_argument("--old", default="HEAD", help="revision to compare with ('' for none)")
    args = parser.parse_args()
    old = load_old(args.old) if args.old else None
    for framing in ("ndjson", "lsp"):
        for mib in args.mib:
            if old is not None:
                run(args.old, old, mib, framing)
            run("now", framing_module, mib, framing)


if __name__ == "__main__":
    main()
