"""Soak: many mixed calls through one server: ``python -m tests.hostile.soak --calls 5000``.

The mix: good reads and infos, fast-failing hostile inputs (not a PDF, encrypted, outside the
root, a FIFO), decompression bombs, layout calls that hit the deadline, calls cancelled by the
client mid-parse, all issued by 8 concurrent workers. Afterwards: every call that was not
cancelled got exactly one answer, the zygote has no children left, the supervisor holds as many
fds as before, and its RSS has not grown beyond a small bound.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

from tests.hostile.generate import flate_bomb
from tests.hostile.run import PROJECT, server_params, supervisor
from tests.pdfs import scattered_glyphs_pdf, text_pdf

WORKERS = 8
MIX: list[tuple[int, str, str, dict[str, Any]]] = [
    (50, "good-read", "pdf_read", {"path": "good.pdf", "pages": "1"}),
    (15, "good-info", "pdf_info", {"path": "good.pdf"}),
    (8, "not-a-pdf", "pdf_read", {"path": "junk.pdf"}),
    (5, "encrypted", "pdf_read", {"path": "locked.pdf"}),
    (5, "outside-root", "pdf_read", {"path": "/etc/passwd"}),
    (5, "fifo", "pdf_read", {"path": "pipe.pdf"}),
    (6, "cancelled", "pdf_read", {"path": "slow.pdf", "engine": "layout"}),
    (1, "bomb", "pdf_read", {"path": "bomb.pdf"}),
]

SPARE_NAME = "airlock-spare"


@dataclass
class SoakReport:
    calls: int = 0
    answered: int = 0
    cancelled: int = 0
    lost: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    rss_start_mb: float = 0.0
    rss_end_mb: float = 0.0
    fds_start: int = 0
    fds_end: int = 0
    leftover_children: int = -1
    idle_spares: int = -1
    seconds: float = 0.0


def make_root(folder: Path) -> None:
    import os

    (folder / "good.pdf").write_bytes(text_pdf(["Soak page one", "Soak page two"]))
    (folder / "junk.pdf").write_bytes(b"not a pdf\n" * 100)
    (folder / "slow.pdf").write_bytes(scattered_glyphs_pdf(20_000))
    (folder / "bomb.pdf").write_bytes(flate_bomb())
    from tests.pdfs import encrypted_pdf

    (folder / "locked.pdf").write_bytes(encrypted_pdf("secret"))
    os.mkfifo(folder / "pipe.pdf")


async def soak(calls: int, folder: Path, seed: int = 7) -> SoakReport:
    make_root(folder)
    rng = random.Random(seed)
    weights = [weight for weight, *_ in MIX]
    plan = rng.choices(MIX, weights=weights, k=calls)
    report = SoakReport(calls=calls)
    queue = iter(plan)
    started = time.perf_counter()
    async with Client(
        server_params(folder, folder / "server.log"), mode="legacy", read_timeout_seconds=120
    ) as client:
        await client.call_tool("pdf_read", {"path": "good.pdf"})
        # The supervisor keeps a sealed copy of each unchanged file it read (a descriptor each,
        # boundary.paths): read every regular file once, so a growth below is a leak.
        for name in ("junk.pdf", "slow.pdf", "bomb.pdf", "locked.pdf"):
            await client.call_tool("pdf_info", {"path": name})
        await anyio.sleep(0.5)  # let the zygote hand its spares over: their sockets are our fds
        server = supervisor()
        report.rss_start_mb = server.memory_info().rss / 1e6
        report.fds_start = server.num_fds()

        async def worker() -> None:
            for _weight, label, tool, arguments in queue:
                if label == "cancelled":
                    with anyio.move_on_after(0.3):
                        await client.call_tool(tool, arguments)
                        report.answered += 1
                        continue
                    report.cancelled += 1
                    continue
                result = await client.call_tool(tool, arguments)
                report.answered += 1
                report.outcomes[result.structured_content["error"]["code"] if result.is_error else "ok"] += 1

        async with anyio.create_task_group() as tg:
            for _ in range(WORKERS):
                tg.start_soon(worker)
        await client.list_tools()
        await anyio.sleep(0.5)  # let the zygote reap the last cancelled children
        report.rss_end_mb = server.memory_info().rss / 1e6
        report.fds_end = server.num_fds()
        zygotes = [p for p in server.children() if "pdf_airlock.worker.zygote" in " ".join(p.cmdline())]
        children = [child for zygote in zygotes for child in zygote.children()]
        # Pre-forked spares still waiting for a job are meant to be there; a spare renames itself
        # airlock-job the moment its job arrives, so anything else is a child left behind.
        report.idle_spares = sum(1 for child in children if child.name() == SPARE_NAME)
        report.leftover_children = len(children) - report.idle_spares
    report.lost = report.calls - report.answered - report.cancelled
    report.seconds = time.perf_counter() - started
    return report


def markdown(report: SoakReport) -> str:
    outcomes = ", ".join(f"`{code}` {count}" for code, count in sorted(report.outcomes.items()))
    return "\n".join(
        [
            f"{report.calls} calls by {WORKERS} concurrent client tasks in {report.seconds:.0f} s "
            f"(`python -m tests.hostile.soak --calls {report.calls}`):",
            "",
            f"- answered {report.answered}, cancelled by the client {report.cancelled}, "
            f"**lost {report.lost}**",
            f"- outcomes: {outcomes}",
            f"- supervisor RSS {report.rss_start_mb:.0f} MB at the start, "
            f"{report.rss_end_mb:.0f} MB at the end",
            f"- supervisor fds {report.fds_start} at the start, {report.fds_end} at the end; "
            f"job children left behind: {report.leftover_children} (idle pre-forked spares: "
            f"{report.idle_spares})",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    calls = parser.parse_args().calls
    with tempfile.TemporaryDirectory() as tmp:
        report = anyio.run(soak, calls, Path(tmp))
    text = markdown(report)
    doc = PROJECT / "docs" / "robustness.md"
    block = f"<!-- SOAK -->\n{text}\n<!-- /SOAK -->"
    doc.write_text(re.sub(r"<!-- SOAK -->.*<!-- /SOAK -->", lambda _: block, doc.read_text(), flags=re.S))
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
