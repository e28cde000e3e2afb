"""Per-job cost of the sandbox: fork -> ready with and without the optional layers.

    python -m bench.perf.sandbox_overhead [--jobs 300]

Runs probe jobs (no document) through a real pool, alternating the configurations so both see
the same machine load, and reports medians: time spent inside the child's sandbox set-up per
layer (measured in the child), and the round trip of a probe job as the pool's caller sees it.
Because the configurations alternate, no pre-forked spare ever matches the next job: every job
here pays the fork and the set-up on its critical path (the worst case; a spare pays them
before its job exists).
Writes the table into docs/performance.md between the SANDBOX-COST markers.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from bench.report import PERFORMANCE, write_block
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.worker.contract import TEST_HOOKS_ENV, Limits
from pdf_airlock.worker.sandbox.layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]

LIMITS = Limits(memory_bytes=1 << 30, cpu_seconds=10, max_input_bytes=1 << 20, max_result_bytes=1 << 16)
CONFIGS: dict[str, dict[str, Any]] = {
    "no optional layers": {"skip": ["namespaces", "landlock", "seccomp"]},
    "full sandbox (default)": {},
    "full sandbox + net namespace": {"net_namespace": True},
}


async def probe(pool: Pool, sandbox: dict[str, Any]) -> tuple[float, dict[str, int]]:
    fd = os.memfd_create("bench", os.MFD_CLOEXEC)
    try:
        started = time.perf_counter()
        outcome = await pool.run("probe", {}, fd, limits=LIMITS, deadline_s=10, sandbox=sandbox)
        wall_ms = (time.perf_counter() - started) * 1000
    finally:
        os.close(fd)
    result = classify(outcome, LIMITS.memory_bytes, 10)
    return wall_ms, {k: int(v) for k, v in result["micros"].items()}


async def measure(jobs: int) -> dict[str, dict[str, float]]:
    walls: dict[str, list[float]] = {name: [] for name in CONFIGS}
    setups: dict[str, list[dict[str, int]]] = {name: [] for name in CONFIGS}
    os.environ[TEST_HOOKS_ENV] = "1"  # a probe job (no document) is a test-only kind of the zygote's
    async with Pool(1, 8, 60, 1) as pool:
        for sandbox in CONFIGS.values():  # warm each path once
            await probe(pool, sandbox)
        for _ in range(jobs):
            for name, sandbox in CONFIGS.items():
                wall, micros = await probe(pool, sandbox)
                walls[name].append(wall)
                setups[name].append(micros)
    table: dict[str, dict[str, float]] = {}
    for name in CONFIGS:
        row = {layer: statistics.median(m.get(layer, 0) for m in setups[name]) / 1000 for layer in LAYERS}
        row["setup total"] = statistics.median(sum(m.values()) for m in setups[name]) / 1000
        row["job round trip, cold fork"] = statistics.median(walls[name])
        table[name] = row
    return table


def markdown(table: dict[str, dict[str, float]], jobs: int) -> str:
    names = list(table)
    rows = list(next(iter(table.values())))
    lines = [
        f"Median of {jobs} probe jobs per configuration, interleaved, one worker; "
        f"{platform.machine()}, {os.cpu_count()} CPUs, kernel {platform.release()}, "
        f"load {os.getloadavg()[0]:.2f}. Milliseconds.",
        "",
        "| ms | " + " | ".join(names) + " |",
        "|---" * (len(names) + 1) + "|",
    ]
    lines += [f"| {row} | " + " | ".join(f"{table[n][row]:.3f}" for n in names) + " |" for row in rows]
    base = table[names[0]]["setup total"]
    full = table[names[1]]["setup total"]
    lines += [
        "",
        f"The whole set-up, every layer, takes {full:.3f} ms median in the child (target: at most 2 ms); "
        f"the optional layers (namespaces, Landlock, seccomp) account for {full - base:.3f} ms of it. "
        "The round trip is the worst case (the configurations alternate, so no pre-forked spare "
        "matches); with a matching spare, the fork and the whole set-up happen before the job "
        "exists and cost it nothing.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=300)
    jobs = parser.parse_args().jobs
    text = markdown(anyio.run(measure, jobs), jobs)
    sys.stdout.write(text + "\n")
    write_block(PERFORMANCE, "SANDBOX-COST", text)


if __name__ == "__main__":
    main()
