"""Two servers side by side, differing in flags or in code: ``python bench/ab_servers.py FILE``.

    python bench/ab_servers.py text-10.pdf --a "--job-nice 0" --b ""   # niceness 0 against 10
    git worktree add /tmp/old HEAD~1 && python bench/ab_servers.py text-1.pdf --b-code /tmp/old

Both run at once over bare pipes (no SDK client), cache off, and take turns (ABBA...) reading
the whole corpus FILE after a pause, with the in-process floor measured before each pair; it
prints the medians and the median of the paired differences B - A. Run it more than once: the
machine's load moves single runs by a millisecond or more.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from corpus import build  # noqa: E402
from mcp_bench import MAX_CHARS, RawServer, floor_text  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--a", default="", help="server A's extra flags (shell words)")
    parser.add_argument("--b", default="", help="server B's extra flags (shell words)")
    parser.add_argument("--a-code", type=Path, default=ROOT, help="checkout server A runs from")
    parser.add_argument("--b-code", type=Path, default=ROOT, help="checkout server B runs from")
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--pause", type=float, default=0.03, help="seconds before each call")
    ns = parser.parse_args()
    files = build()
    folder, path = files[ns.file].parent, files[ns.file]
    servers = [
        RawServer(folder, "--log-level", "warning", "--cache-mb", "0", *shlex.split(flags), code=code)
        for flags, code in ((ns.a, ns.a_code), (ns.b, ns.b_code))
    ]
    call = {"name": "pdf_read", "arguments": {"path": ns.file, "max_chars": MAX_CHARS}}
    for server in servers:
        for _ in range(3):
            server.request("tools/call", call)
    floors: list[float] = []
    times: list[list[float]] = [[], []]
    for run in range(ns.runs):
        started = time.perf_counter()
        floor_text(path)
        floors.append((time.perf_counter() - started) * 1000)
        for which in (0, 1) if run % 2 == 0 else (1, 0):
            time.sleep(ns.pause)
            times[which].append(servers[which].request("tools/call", call))
    for server in servers:
        server.close()
    difference = statistics.median(b - a for a, b in zip(*times, strict=True))
    sys.stdout.write(
        f"{ns.file}: floor {statistics.median(floors):.2f} ms, A {statistics.median(times[0]):.2f} ms "
        f"({ns.a or 'defaults'}, {ns.a_code}), B {statistics.median(times[1]):.2f} ms "
        f"({ns.b or 'defaults'}, {ns.b_code}), "
        f"paired B - A {difference:+.2f} ms\n"
    )


if __name__ == "__main__":
    main()
