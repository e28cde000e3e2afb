"""Seeded mutation fuzzing through the real server: ``python -m tests.hostile.mutate --count N``.

Mutants come from the sample and hostile PDFs by byte-level mutations (flips, deletions,
duplications, truncation, random insertions) and object-level ones (numbers made huge or
negative, lengths and references corrupted, keywords dropped), each from ``random.Random(seed)``
so any mutant can be rebuilt from its seed. Each goes through every tool and engine (the slow
ones on every fifth mutant). A mutant fails the run when the server stops answering (the
client's read timeout ends the run) or returns ``internal`` (a bug on our side); a parse that
runs long ends in its deadline's ``timeout``, however busy the machine (``--busy-stretch``), and
PDFium/qpdf crashes inside the sandbox are contained and count as ``crashed``. Failing mutants
are written to the regressions folder with their seed in the name.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import anyio
from mcp import Client

from tests.hostile.generate import CLASSES
from tests.hostile.run import PROJECT, server_params
from tests.tool_calls import every_call

# Every tool and engine (tests/tool_calls.py: from the registry).
CALLS = every_call({"pdf_search": {"query": "e", "max_results": 5}, "pdf_render": {"dpi": 36}})
# Layout analysis and the structure engine: every fifth mutant (they are the slow ones).
SLOW = frozenset({"pdf_read layout", "pdf_markdown", "pdf_tables"})

SEEDS_BASE = 20261122
_NUMBER = re.compile(rb"(?<![\w.])\d+(?![\w.])")
_KEYWORDS = (
    b"endobj",
    b"endstream",
    b"stream",
    b"obj",
    b"xref",
    b"trailer",
    b"startxref",
    b"R",
    b">>",
    b"<<",
)
_HUGE = (b"2147483648", b"-1", b"99999999999999999999", b"0", b"-2147483649", b"1e308", b"4294967296")


def seeds_corpus() -> list[bytes]:
    corpus = [p.read_bytes() for p in sorted((PROJECT / "examples").glob("*.pdf"))]
    small = [
        c for c in CLASSES if c.build is not None and c.name not in {"flate_bomb", "lzw_bomb", "sparse_50mb"}
    ]
    corpus += [
        c.build()
        for c in small
        if c.name
        in {
            "truncated",
            "kids_cycle",
            "outline_cycle",
            "active_content_js_launch_uri_evil_attachment",
            "form_xobject_cycle",
            "broken_xref_needs_repair",
            "object_stream_self_reference",
        }
    ]
    return [c for c in corpus if c]


def mutate(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 6)):
        kind = rng.randrange(9)
        if not buffer:
            break
        at = rng.randrange(len(buffer))
        if kind == 0:
            buffer[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            del buffer[at : at + rng.randint(1, 64)]
        elif kind == 2:
            length = rng.randint(1, 256)
            buffer[at:at] = buffer[at : at + length] * rng.randint(1, 8)
        elif kind == 3:
            del buffer[rng.randrange(len(buffer)) :]
        elif kind == 4:
            buffer[at:at] = rng.randbytes(rng.randint(1, 32))
        elif kind in (5, 6):
            numbers = list(_NUMBER.finditer(buffer))
            if numbers:
                match = rng.choice(numbers)
                buffer[match.start() : match.end()] = rng.choice(_HUGE)
        elif kind == 7:
            keyword = rng.choice(_KEYWORDS)
            index = buffer.find(keyword, at)
            if index >= 0:
                del buffer[index : index + len(keyword)]
        else:
            buffer[at:at] = rng.choice((b" 1 0 R ", b" /Length 0 ", b" [[[[ ", b" << /Kids [1 0 R] >> "))
    return bytes(buffer)


@dataclass
class FuzzReport:
    mutants: int
    outcomes: Counter[str]
    failures: list[tuple[int, str, str]]
    seconds: float


async def fuzz(count: int, folder: Path, regressions: Path) -> FuzzReport:
    corpus = seeds_corpus()
    outcomes: Counter[str] = Counter()
    failures: list[tuple[int, str, str]] = []
    started = time.perf_counter()
    async with Client(
        server_params(folder, folder / "server.log"), mode="legacy", read_timeout_seconds=60
    ) as client:
        for index in range(count):
            seed = SEEDS_BASE + index
            rng = random.Random(seed)
            mutant = mutate(rng.choice(corpus), rng)
            (folder / "m.pdf").write_bytes(mutant)
            for label, (tool, extra) in CALLS.items():
                if label in SLOW and index % 5:
                    continue  # the slow tools on every fifth mutant only
                result = await client.call_tool(tool, {"path": "m.pdf", **extra})
                code = result.structured_content["error"]["code"] if result.is_error else "ok"
                outcomes[code] += 1
                if code == "internal":
                    failures.append((seed, label, code))
                    regressions.mkdir(parents=True, exist_ok=True)
                    (regressions / f"mutant-{seed}.pdf").write_bytes(mutant)
            await client.list_tools()
    return FuzzReport(count, outcomes, failures, time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--regressions", type=Path, default=PROJECT / "tests" / "hostile" / "regressions")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        report = anyio.run(fuzz, ns.count, Path(tmp), ns.regressions)
    outcomes = dict(sorted(report.outcomes.items()))
    sys.stdout.write(
        f"{report.mutants} mutants in {report.seconds:.0f} s; outcomes: {outcomes}; "
        f"failures: {report.failures or 'none'}\n"
    )
    raise SystemExit(1 if report.failures else 0)


if __name__ == "__main__":
    main()
