"""When each step of a two-ended ``pdf_read`` happens, for a document read before and one not:
``python -m bench.studies.twoended_timeline text-10.pdf``.

Runs the application core in this process on a real pool (2 workers, 3 spares, cache off) and
alternates reads of one copy of FILE, read again and again, with reads of new copies (a comment
after ``%%EOF``: new bytes, a new sha256), 30 ms apart. Each child's job start and its first
``selection`` and ``page`` lines, the last line handled and the moment the merged answer is
built are stamped in the supervisor; prints the medians, in ms from the start of the call. Not
the shipped transport: for where the time goes, not for end-to-end figures
(``bench/perf/mcp_bench.py``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

import pdf_airlock.server.tools.read_two_ended as twoended
from bench.corpora.corpus import build
from bench.perf.mcp_bench import fresh_copy
from pdf_airlock.server.app.calls import App
from pdf_airlock.server.config import Settings
from pdf_airlock.server.log import configure_logging
from pdf_airlock.server.pool.pool import Pool

ROOT = Path(__file__).resolve().parents[2]

STEPS = ("forward job", "forward selection", "backward job", "backward selection", "backward page")
_stamps: list[tuple[float, str]] = []


def _stamp_lines() -> None:
    """Wraps ``_TwoEnded.run``, ``on_line`` and ``answer`` to stamp each child's job and lines."""
    run, on_line, answer = twoended._TwoEnded.run, twoended._TwoEnded.on_line, twoended._TwoEnded.answer

    async def stamped_run(self: Any, runner: Any, document: Any, stream: Any, after: Any = None) -> None:
        _stamps.append((time.perf_counter(), f"{stream.direction} job"))
        await run(self, runner, document, stream, after)

    def stamped_on_line(self: Any, stream: Any, line: bytes) -> None:
        kind = "selection" if line.startswith(b'{"selection"') else "page"
        _stamps.append((time.perf_counter(), f"{stream.direction} {kind}"))
        on_line(self, stream, line)

    def stamped_answer(self: Any, max_result_bytes: int) -> Any:
        _stamps.append((time.perf_counter(), "answer built"))
        return answer(self, max_result_bytes)

    twoended._TwoEnded.run = stamped_run  # type: ignore[method-assign]
    twoended._TwoEnded.answer = stamped_answer  # type: ignore[method-assign]
    twoended._TwoEnded.on_line = stamped_on_line  # type: ignore[method-assign,assignment]


async def timeline(path: Path, runs: int) -> dict[str, dict[str, float]]:
    found: dict[str, dict[str, list[float]]] = {"read before": {}, "not read before": {}}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "seen.pdf").write_bytes(path.read_bytes())
        async with Pool(2, 8, 60, 1, spares=3) as pool:
            app = App(Settings(roots=(root,), workers=2, cache_bytes=0), pool)
            await app.call_tool("pdf_read", {"path": "seen.pdf"})
            for run in range(runs):
                new = fresh_copy(root, path, run)
                for label, name in (("read before", "seen.pdf"), ("not read before", new)):
                    await anyio.sleep(0.03)
                    _stamps.clear()
                    started = time.perf_counter()
                    result = await app.call_tool("pdf_read", {"path": name})
                    ended = time.perf_counter()
                    assert not result.is_error, result
                    steps = found[label]
                    for step in STEPS:
                        first = next((at for at, what in _stamps if what == step), None)
                        if first is not None:
                            steps.setdefault(step, []).append((first - started) * 1000)
                    lines = [at for at, what in _stamps if what.endswith(("selection", "page"))]
                    steps.setdefault("last line", []).append((lines[-1] - started) * 1000)
                    built = next(at for at, what in _stamps if what == "answer built")
                    steps.setdefault("answer built", []).append((built - started) * 1000)
                    steps.setdefault("answer", []).append((ended - started) * 1000)
    return {
        label: {step: statistics.median(times) for step, times in steps.items()}
        for label, steps in found.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", help="a corpus name (text-10.pdf) or a PDF's path")
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    corpus = build()
    path = corpus.get(args.file) or Path(args.file)
    configure_logging("warning")  # the server's logs to stderr, as it runs
    _stamp_lines()
    medians = anyio.run(timeline, path, args.runs)
    for label, steps in medians.items():
        shown = ", ".join(f"{step} {ms:.2f}" for step, ms in steps.items())
        sys.stdout.write(f"{path.name}, {label} (ms from the call's start): {shown}\n")


if __name__ == "__main__":
    main()
