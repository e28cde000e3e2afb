"""Shards against cores: ``python -m bench.perf.shard_scaling [--runs 3] [--write]``.

Does a pipeline go twice as fast on twice the cores? N shards of one ``batch pdf_read`` run at
once as N processes (``--shard I/N --jobs 1``, the way an Indexed Job's pods run), for N from 1
to the machine's cores, over ``bench/perf/cpu_per_doc.py``'s distinct 1-page documents. Throughput
is marginal, like CPU per document there: the wall time of a run over 1,000 documents less that
of a run over 200, per 800 documents, so each shard's start-up (its zygote's warm-up) cancels
out; the CPU time of every shard's process tree over the same difference gives the cores busy.
Each configuration with a fresh child per document (the default) and with
``--documents-per-child 50``. Medians over ``--runs`` rounds, the configurations taking turns.
Each shard is pinned to a core of its own, as a pod with a one-CPU limit. Wall time on a machine
shared with other work: the load average is printed with the table.
``--write`` puts the table in docs/performance.md between its ``SHARD-SCALING`` markers.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from bench.perf.cpu_per_doc import _FLOOR, CORPUS_DIR, SHARED, corpus, subset
from bench.report import write_block

ROOT: Final = Path(__file__).resolve().parents[2]
RUN_TIMEOUT_S: Final = 600
SMALL: Final = 200  # documents of the short run
LARGE: Final = 1000  # of the long one: a shared child reads 200 documents in well under a second
CONTROL: Final = "control: in-process pypdfium2, no sandbox"
MODES: Final = {
    "a child per document": (),
    f"`--documents-per-child {SHARED}`": ("--documents-per-child", str(SHARED)),
}


def _pinned(commands: list[list[str]], **popen: Any) -> list[subprocess.Popen[bytes]]:
    """Start each command on a core of its own, as a pod with a one-CPU limit: every process it
    starts (a shard's zygote and children) inherits the core. This process runs no other thread,
    so the start hook cannot deadlock."""
    cpus = sorted(os.sched_getaffinity(0))

    def pin(core: int) -> Callable[[], None]:
        return lambda: os.sched_setaffinity(0, {core})

    return [
        subprocess.Popen(command, preexec_fn=pin(cpus[index % len(cpus)]), **popen)  # noqa: PLW1509
        for index, command in enumerate(commands)
    ]


def _reaped_cpu(processes: list[subprocess.Popen[bytes]]) -> float:
    """Wait for every process; the CPU seconds of their whole trees (each must exit 0)."""
    cpu = 0.0
    for process in processes:
        _pid, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        assert process.returncode == 0
        cpu += usage.ru_utime + usage.ru_stime
    return cpu


def run_shards(folder: Path, shards: int, extra: tuple[str, ...], scratch: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of every process tree) for ``shards`` shard processes,
    started together, to read ``folder``."""
    out = scratch / f"out-{time.monotonic_ns()}.jsonl"
    base = [sys.executable, "-m", "pdf_airlock.server", "batch", "pdf_read", str(folder), "--out", str(out)]
    base += ["--jobs", "1", "--progress", "none", "--cache-mb", "0", *extra]
    started = time.monotonic()
    commands = [[*base, "--shard", f"{index}/{shards}"] for index in range(shards)]
    cpu = _reaped_cpu(_pinned(commands, cwd=ROOT, stderr=subprocess.DEVNULL))
    elapsed = time.monotonic() - started
    lines = sum(len(path.read_text().splitlines()) for path in scratch.glob(f"{out.stem}.shard-*"))
    assert lines == len(list(folder.glob("*.pdf"))), (lines, folder)
    for path in scratch.glob(f"{out.stem}.shard-*"):
        path.unlink()
    return elapsed, cpu


def run_control(folder: Path, shards: int) -> tuple[float, float]:
    """The same split, pinned the same way, read by in-process pypdfium2 (``cpu_per_doc``'s
    floor): what this machine's cores give work that shares nothing, whatever pdf-airlock does."""
    paths = sorted(str(path) for path in folder.glob("*.pdf"))
    started = time.monotonic()
    processes = _pinned([[sys.executable, "-c", _FLOOR]] * shards, stdin=subprocess.PIPE)
    for index, process in enumerate(processes):
        assert process.stdin is not None
        process.stdin.write("\n".join(paths[index::shards]).encode())
        process.stdin.close()
    cpu = _reaped_cpu(processes)
    return time.monotonic() - started, cpu


def measure(runs: int, cores: int) -> dict[tuple[str, int], list[tuple[float, float]]]:
    """(documents per second, cores busy) of each (mode, shard count), per round: marginal, the
    long run less the short one."""
    samples: dict[tuple[str, int], list[tuple[float, float]]] = {}
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CORPUS_DIR) as scratch_name:
        scratch = Path(scratch_name)
        folder = corpus(1, LARGE)
        small, large = subset(folder, SMALL, scratch), subset(folder, LARGE, scratch)
        for round_number in range(runs):
            for mode, extra in [*MODES.items(), (CONTROL, ())]:
                for shards in range(1, cores + 1):
                    if mode == CONTROL:
                        long_wall, long_cpu = run_control(large, shards)
                        short_wall, short_cpu = run_control(small, shards)
                    else:
                        long_wall, long_cpu = run_shards(large, shards, extra, scratch)
                        short_wall, short_cpu = run_shards(small, shards, extra, scratch)
                    wall, cpu = long_wall - short_wall, long_cpu - short_cpu
                    samples.setdefault((mode, shards), []).append(((LARGE - SMALL) / wall, cpu / wall))
            sys.stderr.write(f"round {round_number + 1}/{runs} done\n")
    return samples


def table(samples: dict[tuple[str, int], list[tuple[float, float]]], runs: int, cores: int) -> str:
    lines = [
        "## Shards against cores (issue #27)",
        "",
        f"Generated by `python -m bench.perf.shard_scaling --runs {runs}` "
        f"on {platform.machine()}, {cores} CPUs "
        f"shared with other work (load average {os.getloadavg()[0]:.2f} at the end). N shards of "
        "`batch pdf_read --jobs 1` started together as N processes over distinct 1-page documents; "
        f"documents per second from the wall time of a {LARGE}-document run less a {SMALL}-document run "
        "(start-up cancels out), and the cores they kept busy (CPU time of every process tree over the "
        f"same wall time). Medians of {runs} rounds. Each shard is pinned to a core of its own "
        "(`sched_setaffinity`, inherited by its zygote and children), as a pod with a one-CPU limit: "
        "linear scaling is N shards on N cores reading N times as many documents a second.",
        "",
        "| mode | shards | documents per second | cores busy | documents per core-second | speed-up |",
        "|---|---|---|---|---|---|",
    ]
    for mode in [*MODES, CONTROL]:
        one = statistics.median(rate for rate, _busy in samples[(mode, 1)])
        for shards in range(1, cores + 1):
            rate = statistics.median(rate for rate, _busy in samples[(mode, shards)])
            busy = statistics.median(busy for _rate, busy in samples[(mode, shards)])
            lines.append(
                f"| {mode} | {shards} | {rate:.0f} | {busy:.2f} | {rate / busy:.0f} | {rate / one:.2f}x |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--write", action="store_true", help="write the table into docs/performance.md")
    args = parser.parse_args()
    text = table(measure(args.runs, args.cores), args.runs, args.cores)
    if args.write:
        write_block(ROOT / "docs" / "performance.md", "SHARD-SCALING", text)
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
