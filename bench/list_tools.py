"""The SDK client's ``list_tools`` on two checkouts side by side: ``python bench/list_tools.py``.

    git worktree add /tmp/old HEAD~1 && python bench/list_tools.py --b-code /tmp/old

Two servers, each behind its own SDK client, take turns (ABBA...) answering ``tools/list``
after a short pause; prints the size of each listing, the medians and the median of the
paired differences B - A. The SDK client parses and validates the whole listing (every tool's
schemas) on each call, so its time grows with the listing's size.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from corpus import build  # noqa: E402
from mcp_bench import checkout_server  # noqa: E402


def _params(folder: Path, code: Path) -> StdioServerParameters:
    python, *args = checkout_server(code)
    args += ["serve", "--root", str(folder.resolve()), "--log-level", "warning"]
    return StdioServerParameters(command=python, args=args, cwd=str(code))


async def _compare(folder: Path, codes: tuple[Path, Path], runs: int, pause: float) -> str:
    async with (
        Client(_params(folder, codes[0]), mode="legacy") as a,
        Client(_params(folder, codes[1]), mode="legacy") as b,
    ):
        clients = (a, b)
        sizes = []
        for client in clients:
            listing = await client.list_tools()
            dumped = listing.model_dump(mode="json", by_alias=True, exclude_none=True)
            sizes.append(len(json.dumps(dumped, separators=(",", ":"))))
            for _ in range(5):
                await client.list_tools()
        times: list[list[float]] = [[], []]
        for run in range(runs):
            for which in (0, 1) if run % 2 == 0 else (1, 0):
                await anyio.sleep(pause)
                started = time.perf_counter()
                await clients[which].list_tools()
                times[which].append((time.perf_counter() - started) * 1000)
    difference = statistics.median(y - x for x, y in zip(*times, strict=True))
    return (
        f"tools/list through the SDK client: A {statistics.median(times[0]):.2f} ms "
        f"({sizes[0]:,} bytes, {codes[0]}), B {statistics.median(times[1]):.2f} ms "
        f"({sizes[1]:,} bytes, {codes[1]}), paired B - A {difference:+.2f} ms\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--a-code", type=Path, default=ROOT, help="checkout server A runs from")
    parser.add_argument("--b-code", type=Path, default=ROOT, help="checkout server B runs from")
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--pause", type=float, default=0.01, help="seconds before each call")
    ns = parser.parse_args()
    folder = build()["text-1.pdf"].parent
    codes = (ns.a_code.resolve(), ns.b_code.resolve())
    sys.stdout.write(anyio.run(_compare, folder, codes, ns.runs, ns.pause))


if __name__ == "__main__":
    main()
