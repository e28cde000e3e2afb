"""The image under two seccomp profiles side by side: ``python -m bench.studies.container_calls A B``.

    python -m bench.studies.container_calls seccomp/profile.json /tmp/other-profile.json

Starts two containers of the image with the production flags (``docker run -i --rm --network
none --read-only --cap-drop ALL``, no-new-privileges), one per profile (a path, ``unconfined``
or ``default``), each serving the corpus folder over a bare pipe, and reads the first page of
FILE (``--file``, default text-1.pdf) from each in turn (ABBA..., ``ab_servers.take_turns``),
50 ms apart, cache off. Prints the medians and the median of the paired differences B - A.
Needs the engine and the image
(``scripts/container.sh start && scripts/container.sh build``; ``DOCKER_HOST`` as printed there).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import anyio

from bench.corpora.corpus import build
from bench.perf.mcp_bench import RawServer
from bench.studies.ab_servers import take_turns

ROOT = Path(__file__).resolve().parents[2]


def container(folder: Path, seccomp: str, image: str) -> RawServer:
    security = [] if seccomp == "default" else ["--security-opt", f"seccomp={seccomp}"]
    command = [
        "docker", "run", "-i", "--rm", "--network", "none", "--read-only", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges", *security, "-v", f"{folder}:/data:ro", image,
        "serve", "--root", "/data", "--cache-mb", "0", "--log-level", "warning",
    ]  # fmt: skip
    return RawServer(folder, command=command)


def _profile(value: str) -> str:
    return value if value in {"unconfined", "default"} else str(Path(value).resolve())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("a", help="server A's seccomp profile: a path, 'unconfined' or 'default'")
    parser.add_argument("b", help="server B's seccomp profile")
    parser.add_argument("--file", default="text-1.pdf", help="a corpus name")
    parser.add_argument("--image", default="pdf-airlock")
    parser.add_argument("--runs", type=int, default=40)
    ns = parser.parse_args()
    folder = build()[ns.file].parent
    servers = [container(folder, _profile(value), ns.image) for value in (ns.a, ns.b)]
    call = {"name": "pdf_read", "arguments": {"path": ns.file, "pages": "1"}}

    async def over_pipe(which: int) -> float:
        return servers[which].request("tools/call", call)

    try:
        _, times = anyio.run(take_turns, over_pipe, None, ns.runs, 0.05)
    finally:
        for server in servers:
            server.close()
    difference = statistics.median(b - a for a, b in zip(*times, strict=True))
    sys.stdout.write(
        f"{ns.file} page 1 in the container: A {statistics.median(times[0]):.2f} ms ({ns.a}), "
        f"B {statistics.median(times[1]):.2f} ms ({ns.b}), paired B - A {difference:+.2f} ms\n"
    )


if __name__ == "__main__":
    main()
