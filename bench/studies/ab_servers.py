"""Two servers side by side, differing in flags or in code: ``python -m bench.studies.ab_servers FILE``.

    python -m bench.studies.ab_servers text-10.pdf --a "--job-nice 0" --b ""   # niceness 0 against 10
    git worktree add /tmp/old HEAD~1 && python -m bench.studies.ab_servers text-1.pdf --b-code /tmp/old
    # (a checkout with its own .venv runs with that interpreter: give /tmp/old one to compare code)
    python -m bench.studies.ab_servers text-10.pdf --b-code /tmp/old --sdk     # each behind an SDK client
    python -m bench.studies.ab_servers text-10.pdf --b-code /tmp/old --after-info  # new bytes, pdf_info first

Both run at once, cache off, over bare pipes (or, with ``--sdk``, each behind its own SDK
client), and take turns (ABBA...) reading the whole of FILE (a corpus name or a PDF's path)
after a pause, with the in-process floor measured before each pair; it prints the medians and
the median of the paired differences B - A. With ``--after-info`` each call reads a new copy of
FILE (a comment after ``%%EOF``: new bytes, the same text) that the same server was asked
``pdf_info`` about before the pause, as an agent does before reading a document. Run it more
than once: the machine's load moves single runs by a millisecond or more.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import shlex
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from bench.corpora.corpus import build
from bench.perf.mcp_bench import (
    FIRST_READ_DIR,
    MAX_CHARS,
    RawServer,
    checkout_server,
    floor_text,
    fresh_copy,
    read_whole,
    timed,
)

ROOT = Path(__file__).resolve().parents[2]

Call = Callable[[int], Awaitable[float]]
Prepare = Callable[[int], Awaitable[None]]


async def take_turns(
    call: Call, path: Path | None, runs: int, pause: float, prepare: Prepare | None = None
) -> tuple[list[float], list[list[float]]]:
    """Floors (of ``path``'s text; none without one), and each server's times, over ``runs``
    pairs in ABBA order, after three warm-up calls each; ``prepare(which)`` runs before each
    call's pause."""
    for which in (0, 1):
        for _ in range(3):
            if prepare is not None:
                await prepare(which)
            await call(which)
    floors: list[float] = []
    times: list[list[float]] = [[], []]
    for run in range(runs):
        if path is not None:
            started = time.perf_counter()
            floor_text(path)
            floors.append((time.perf_counter() - started) * 1000)
        for which in (0, 1) if run % 2 == 0 else (1, 0):
            if prepare is not None:
                await prepare(which)
            await anyio.sleep(pause)
            times[which].append(await call(which))
    return floors, times


async def _compare(ns: argparse.Namespace, path: Path) -> tuple[list[float], list[list[float]]]:
    made: list[Path] = []  # the copies ``--after-info`` wrote beside FILE; only they are removed
    try:
        return await _take_sides(ns, path, made)
    finally:
        for copy in made:
            copy.unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # gone, or holds files of someone else's
            (path.parent / FIRST_READ_DIR).rmdir()


async def _take_sides(
    ns: argparse.Namespace, path: Path, made: list[Path]
) -> tuple[list[float], list[list[float]]]:
    sides = ((ns.a, ns.a_code), (ns.b, ns.b_code))
    extra = ("--log-level", "warning", "--cache-mb", "0")
    targets = [path.name, path.name]  # what each side reads next
    copies = itertools.count()

    def new_copy(which: int) -> str:
        targets[which] = fresh_copy(path.parent, path, next(copies))
        made.append(path.parent / targets[which])
        return targets[which]

    if ns.sdk:
        async with contextlib.AsyncExitStack() as stack:
            clients = []
            for flags, code in sides:
                python, *args = checkout_server(code)
                args += ["serve", "--root", str(path.parent), *extra, *shlex.split(flags)]
                params = StdioServerParameters(command=python, args=args, cwd=str(code))
                clients.append(await stack.enter_async_context(Client(params, mode="legacy")))

            async def through_sdk(which: int) -> float:
                return await timed(lambda: read_whole(clients[which], targets[which]))

            async def info_sdk(which: int) -> None:
                await clients[which].call_tool("pdf_info", {"path": new_copy(which)})

            return await take_turns(through_sdk, path, ns.runs, ns.pause, info_sdk if ns.after_info else None)
    servers = [
        RawServer(
            path.parent,
            code=code,
            command=[
                *checkout_server(code),
                "serve",
                "--root",
                str(path.parent.resolve()),
                *extra,
                *shlex.split(flags),
            ],
        )
        for flags, code in sides
    ]

    async def over_pipe(which: int) -> float:
        read = {"name": "pdf_read", "arguments": {"path": targets[which], "max_chars": MAX_CHARS}}
        return servers[which].request("tools/call", read)

    async def info_pipe(which: int) -> None:
        servers[which].request("tools/call", {"name": "pdf_info", "arguments": {"path": new_copy(which)}})

    try:
        return await take_turns(over_pipe, path, ns.runs, ns.pause, info_pipe if ns.after_info else None)
    finally:
        for server in servers:
            server.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", help="a corpus name (text-10.pdf) or a PDF's path")
    parser.add_argument("--a", default="", help="server A's extra flags (shell words)")
    parser.add_argument("--b", default="", help="server B's extra flags (shell words)")
    parser.add_argument("--a-code", type=Path, default=ROOT, help="checkout server A runs from")
    parser.add_argument("--b-code", type=Path, default=ROOT, help="checkout server B runs from")
    parser.add_argument("--sdk", action="store_true", help="each server behind its own SDK client")
    parser.add_argument(
        "--after-info", action="store_true", help="each call a new copy of FILE, after pdf_info on it"
    )
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--pause", type=float, default=0.03, help="seconds before each call")
    ns = parser.parse_args()
    files = build()
    path = files[ns.file] if ns.file in files else Path(ns.file).resolve()
    floors, times = anyio.run(_compare, ns, path)
    difference = statistics.median(b - a for a, b in zip(*times, strict=True))
    sys.stdout.write(
        f"{ns.file}{' (SDK clients)' if ns.sdk else ''}{' (after pdf_info)' if ns.after_info else ''}"
        f": floor {statistics.median(floors):.2f} ms, "
        f"A {statistics.median(times[0]):.2f} ms ({ns.a or 'defaults'}, {ns.a_code}), "
        f"B {statistics.median(times[1]):.2f} ms ({ns.b or 'defaults'}, {ns.b_code}), "
        f"paired B - A {difference:+.2f} ms\n"
    )


if __name__ == "__main__":
    main()
