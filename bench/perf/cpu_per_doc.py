"""CPU per document: ``python -m bench.perf.cpu_per_doc [--runs 5] [--before CHECKOUT] [--write]``.

What one more document costs in CPU, of the whole process tree (the command, and every process
it started and reaped: supervisor, zygote, spares and job children), measured as the
difference between a run over 300 documents and one over 100, divided by 200, so start-up and
shutdown cancel out. CPU time, not wall time: the machine is shared, and CPU time is what a
pipeline pays for. Side by side in one run, the measures taking turns in each round; medians
over ``--runs`` rounds:

- ``batch pdf_read --jobs 1`` over distinct 1-page and 10-page text documents
  (``bench/corpora/corpus.py``'s prose, ~3,000 characters a page);
- in-process pypdfium2 over the same documents (open, every page's text, close), in a process
  of its own measured the same way: the floor;
- one 1-page ``pdf_read`` MCP call after another over a bare pipe (``serve``, cache off), a new
  document each call;
- the same calls to ``bench/perf/pymupdf_server.py``, a PyMuPDF server on the official ``mcp`` SDK
  that reads in-process (run by ``--peers-python``, the benchmark peers' interpreter: PyMuPDF is
  AGPL, never a dependency); the row is left out when that interpreter is missing;
- the same ``batch`` runs and MCP calls with ``--documents-per-child SHARED`` (opt-in: one
  sandboxed child reads up to that many documents of one root, docs/security.md "What documents
  share");
- with ``--before CHECKOUT``, the same batch runs of another checkout (its ``.venv``'s
  interpreter: the zygote runs ``python -I``, so it imports what that interpreter has).

The zygote's size and what a fork of it costs: its resident set, huge pages and page tables
after the warm-up, and the CPU of a bare fork and exit (parent and child, ``FORKS`` of them), as
the zygote runs (OCR warm-up, warm memory in huge pages, ``fork_bare``), without the huge pages,
with ``os.fork``, and without the OCR warm-up.

The batch rows also split the marginal CPU by process (sampled every ``SAMPLE_S``): the
supervisor, the zygote (forks), and the job children (their whole lives: fork, sandbox,
parse, exit). ``--write`` puts the table in docs/performance.md between its ``CPU-PER-DOC``
markers; docs/pipelines.md's throughput model reads from it.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import psutil

from bench.corpora.corpus import text_document
from bench.report import write_block

ROOT: Final = Path(__file__).resolve().parents[2]
CORPUS_DIR: Final = Path(__file__).resolve().parents[1] / ".corpus-cpu"
SMALL: Final = 100
LARGE: Final = 300
PAGES: Final = (1, 10)
SAMPLE_S: Final = 0.02
RUN_TIMEOUT_S: Final = 600
MS: Final = 1000
HOUR_S: Final = 3600
BIG_RUN: Final = 10_000_000  # documents: the run docs/pipelines.md prices
MERGE_DOCUMENTS: Final = 200_000
FORKS: Final = 300  # bare forks per zygote variant and round
FORK_ROUNDS: Final = 9  # a round is seconds (a warm-up each), and a fork's cost is noisy
FORK_VARIANTS: Final = ("ocr", "ocr-4k", "ocr-osfork", "no-ocr")
OCR_NEGLIGIBLE_MS: Final = 0.2  # a fork and exit's extra CPU for the OCR warm-up, below which it is noise
SHARED: Final = 50  # --documents-per-child of the "shared" rows
_SHARED: Final = ("--documents-per-child", str(SHARED))
TARGET_OVERHEAD_MS: Final = 4.0
TARGET_RATIO: Final = 1.5
TARGET_MCP_RATIO: Final = 1.5  # CPU per 1-page MCP call against the PyMuPDF server's
PEERS_PYTHON: Final = Path("/tmp/peers/bin/python")
PEER_SERVER: Final = Path(__file__).resolve().parent / "pymupdf_server.py"

# In-process pypdfium2 over the paths given on stdin: the floor a sandboxed read is held to.
_FLOOR = """
import sys, pypdfium2
for path in sys.stdin.read().split("\\n"):
    if not path:
        continue
    with open(path, "rb") as handle:
        data = handle.read()
    document = pypdfium2.PdfDocument(data)
    for index in range(len(document)):
        page = document[index]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    document.close()
"""


def corpus(pages: int, count: int) -> Path:
    """``count`` distinct documents of ``pages`` pages (a seed each), made once and kept."""
    folder = CORPUS_DIR / f"pages-{pages}"
    folder.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        path = folder / f"doc-{number:04d}.pdf"
        if not path.exists():
            path.write_bytes(text_document(pages, seed=1000 * pages + number))
    return folder


def subset(folder: Path, count: int, into: Path) -> Path:
    """A folder holding the first ``count`` documents of ``folder`` (hard links)."""
    target = into / f"{folder.name}-{count}"
    if not target.exists():
        target.mkdir()
        for path in sorted(folder.glob("*.pdf"))[:count]:
            os.link(path, target / path.name)
    return target


class Tree:
    """A command's process tree: its CPU once reaped (``os.wait4``: itself and every descendant
    reaped under it), and samples of the supervisor's and the zygote's own CPU."""

    def __init__(self, command: list[str], **popen: Any) -> None:
        self.process = subprocess.Popen(command, cwd=ROOT, **popen)
        self.own: dict[str, float] = {"supervisor": 0.0, "zygote": 0.0}
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        try:
            top = psutil.Process(self.process.pid)
            while not self._stop.is_set():
                times = top.cpu_times()
                self.own["supervisor"] = times.user + times.system
                for child in top.children():
                    if "pdf_airlock.worker.zygote" in " ".join(child.cmdline()):
                        mine = child.cpu_times()
                        self.own["zygote"] = mine.user + mine.system
                time.sleep(SAMPLE_S)
        except psutil.Error:
            return

    def wait(self) -> float:
        """CPU seconds of the whole tree."""
        _, status, usage = os.wait4(self.process.pid, 0)
        self.process.returncode = os.waitstatus_to_exitcode(status)
        self._stop.set()
        self._sampler.join()
        return usage.ru_utime + usage.ru_stime


def batch_cpu(
    python: list[str], folder: Path, scratch: Path, extra: tuple[str, ...] = ()
) -> dict[str, float]:
    out = scratch / f"out-{time.monotonic_ns()}.jsonl"
    command = [*python, "batch", "pdf_read", str(folder), "--out", str(out), "--jobs", "1"]
    command += ["--progress", "none", "--cache-mb", "0", *extra]
    tree = Tree(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = tree.wait()
    lines = out.read_text().splitlines()
    out.unlink()
    assert tree.process.returncode == 0 and len(lines) == len(list(folder.glob("*.pdf"))), folder
    return {"total": total, **tree.own, "children": total - sum(tree.own.values())}


def floor_cpu(folder: Path) -> dict[str, float]:
    paths = "\n".join(str(path) for path in sorted(folder.glob("*.pdf")))
    tree = Tree([sys.executable, "-c", _FLOOR], stdin=subprocess.PIPE)
    assert tree.process.stdin is not None
    tree.process.stdin.write(paths.encode())
    tree.process.stdin.close()
    return {"total": tree.wait()}


def airlock_serve(python: list[str], folder: Path, extra: tuple[str, ...] = ()) -> list[str]:
    """pdf-airlock's MCP server over ``folder``, cache off."""
    return [*python, "serve", "--root", str(folder), "--log-level", "warning", "--cache-mb", "0", *extra]


def peer_serve(peers_python: Path, folder: Path) -> list[str]:
    """The PyMuPDF MCP server over ``folder`` (``bench/perf/pymupdf_server.py``)."""
    return [str(peers_python), str(PEER_SERVER), str(folder)]


def mcp_cpu(serve: Callable[[Path], list[str]], folder: Path) -> dict[str, float]:
    """1-page ``pdf_read`` calls one after another over a bare pipe, a new document each, to the
    server ``serve`` starts over ``folder``."""
    tree = Tree(serve(folder), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    pipe_in, pipe_out = tree.process.stdin, tree.process.stdout
    assert pipe_in is not None and pipe_out is not None

    def request(number: int, method: str, params: dict[str, Any]) -> None:
        message = {"jsonrpc": "2.0", "id": number, "method": method, "params": params}
        pipe_in.write(json.dumps(message).encode() + b"\n")
        pipe_in.flush()
        answer = json.loads(pipe_out.readline())
        assert "result" in answer and not answer["result"].get("isError"), answer

    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}
    request(0, "initialize", hello)
    pipe_in.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    for number, path in enumerate(sorted(folder.glob("*.pdf")), start=1):
        request(number, "tools/call", {"name": "pdf_read", "arguments": {"path": path.name}})
    pipe_in.close()
    total = tree.wait()
    return {"total": total, **tree.own, "children": total - sum(tree.own.values())}


def merge_memory(documents: int = MERGE_DOCUMENTS) -> dict[str, float]:
    """Peak RSS of ``batch-merge`` over two shard files of ``documents`` synthetic lines in all,
    against the interpreter with the merge imported: the memory it holds per document."""
    line = {"sha256": "ab" * 32, "tool": "pdf_read", "ok": True, "complete": True, "result": {"pages": []}}
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        for shard in range(2):
            with open(folder / f"r.shard-{shard}-of-2.jsonl", "w") as out:
                for number in range(documents // 2):
                    path = f"/data/invoices/2024/{shard}-{number:08d}.pdf"
                    out.write(json.dumps(line | {"path": path}) + "\n")
        used = _peak_rss_kb(["batch-merge", str(folder / "r.jsonl"), "--merged", str(folder / "m.jsonl")])
    baseline = _peak_rss_kb([])
    return {"documents": documents, "bytes_per_document": (used - min(baseline, used)) * 1024 / documents}


# ``batch-merge`` (or nothing) in a fresh interpreter, which then prints its own peak RSS in KiB:
# VmHWM, fresh after exec (``ru_maxrss`` would count the forking parent's pages too).
_PEAK = """
import sys
from pdf_airlock.server.cli.main import main
if len(sys.argv) > 1:
    try:
        main(sys.argv[1:])
    except SystemExit as exit:
        assert exit.code == 0, exit.code
status = open("/proc/self/status").read()
print(status.split("VmHWM:")[1].split()[0])
"""


def _peak_rss_kb(arguments: list[str]) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, *arguments], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return int(done.stdout.split()[-1])


# A zygote's warm-up (``variant``: as the zygote runs, warm memory in huge pages and children
# forked by ``fork_bare``; without the huge pages; with ``os.fork``; without the OCR warm-up),
# then FORKS bare forks, each child exiting at once; prints its VmRSS and VmPTE (KiB), the huge
# pages' share (AnonHugePages, KiB) and the CPU ms per fork of the parent and of the children.
_FORK = """
import json, os, resource, sys
from pdf_airlock.worker import warmup
from pdf_airlock.worker.hugepages import collapse_warm_memory
from pdf_airlock.worker.sandbox.process import fork_bare
variant, forks = sys.argv[1], int(sys.argv[2])
if variant == "no-ocr":
    warmup._warm_ocr = lambda sample: None
warmup.warm_up()
if variant != "ocr-4k":
    collapse_warm_memory()
fork = os.fork if variant == "ocr-osfork" else fork_bare
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
rollup = open("/proc/self/smaps_rollup").read()
def cpu(who):
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime
parent, children = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
for _ in range(forks):
    pid = fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
print(json.dumps({
    "rss_kb": int(status["VmRSS"].split()[0]), "pte_kb": int(status["VmPTE"].split()[0]),
    "huge_kb": int(rollup.split("AnonHugePages:")[1].split()[0]),
    "parent_ms": (cpu(resource.RUSAGE_SELF) - parent) * 1000 / forks,
    "child_ms": (cpu(resource.RUSAGE_CHILDREN) - children) * 1000 / forks,
}))
"""


def fork_cost(variant: str) -> dict[str, float]:
    """A zygote-like process's size and the CPU of a bare fork and exit of it (``_FORK``)."""
    done = subprocess.run(
        [sys.executable, "-I", "-c", _FORK, variant, str(FORKS)],
        cwd=ROOT, capture_output=True, text=True, check=True, timeout=RUN_TIMEOUT_S,
    )  # fmt: skip
    found: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return found


def fork_costs(runs: int) -> dict[str, list[dict[str, float]]]:
    """``fork_cost`` of each variant, taking turns, ``runs`` rounds."""
    samples: dict[str, list[dict[str, float]]] = {}
    for _ in range(runs):
        for variant in FORK_VARIANTS:
            samples.setdefault(f"fork {variant}", []).append(fork_cost(variant))
    return samples


def marginal(measure: Callable[[Path], dict[str, float]], small: Path, large: Path) -> dict[str, float]:
    """ms of CPU per document beyond the first ``SMALL``, by part."""
    few, many = measure(small), measure(large)
    return {part: (many[part] - few[part]) * MS / (LARGE - SMALL) for part in many}


def measure(runs: int, before: Path | None, peers_python: Path | None) -> dict[str, list[dict[str, float]]]:
    samples: dict[str, list[dict[str, float]]] = {}
    ours = [sys.executable, "-m", "pdf_airlock.server"]
    theirs = None if before is None else [str(before / ".venv/bin/python"), "-m", "pdf_airlock.server"]
    CORPUS_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CORPUS_DIR) as scratch_name:
        scratch = Path(scratch_name)
        folders = {pages: corpus(pages, LARGE) for pages in PAGES}
        pairs = {
            pages: (subset(f, SMALL, scratch), subset(f, LARGE, scratch)) for pages, f in folders.items()
        }
        for round_number in range(runs):
            for pages, (small, large) in pairs.items():
                rows: list[tuple[str, Callable[[Path], dict[str, float]]]] = [
                    (f"batch {pages}p", functools.partial(batch_cpu, ours, scratch=scratch)),
                    (f"shared {pages}p", functools.partial(batch_cpu, ours, scratch=scratch, extra=_SHARED)),
                    (f"floor {pages}p", floor_cpu),
                ]
                if theirs is not None:
                    rows.append((f"before {pages}p", functools.partial(batch_cpu, theirs, scratch=scratch)))
                if pages == 1:
                    serve = functools.partial(airlock_serve, ours)
                    rows.append(("mcp 1p", functools.partial(mcp_cpu, serve)))
                    shared = functools.partial(airlock_serve, ours, extra=_SHARED)
                    rows.append(("mcp-shared 1p", functools.partial(mcp_cpu, shared)))
                    if peers_python is not None:
                        peer = functools.partial(peer_serve, peers_python)
                        rows.append(("pymupdf 1p", functools.partial(mcp_cpu, peer)))
                    if theirs is not None:
                        before_serve = functools.partial(airlock_serve, theirs)
                        rows.append(("mcp-before 1p", functools.partial(mcp_cpu, before_serve)))
                for label, how in rows:
                    samples.setdefault(label, []).append(marginal(how, small, large))
            sys.stderr.write(f"round {round_number + 1}/{runs} done\n")
    samples["load"] = [{"average": os.getloadavg()[0]}]  # at the end of the measuring
    return samples


def median(samples: list[dict[str, float]], part: str = "total") -> float:
    return statistics.median(sample[part] for sample in samples)


def table(samples: dict[str, list[dict[str, float]]], runs: int) -> str:
    load = median(samples["load"], "average") if "load" in samples else os.getloadavg()[0]
    before = (
        " --before CHECKOUT" if any(name.startswith(("before", "mcp-before")) for name in samples) else ""
    )
    lines = [
        "## CPU per document (issue #27)",
        "",
        f"Generated by `python -m bench.perf.cpu_per_doc --runs {runs}{before}` on {platform.machine()}, "
        f"{os.cpu_count()} CPUs shared with other work (load average {load:.2f} at the end). CPU time of "
        f"the whole process tree (`wait4`), not wall time; each figure is the difference between a run over "
        f"{LARGE} documents and one over {SMALL}, per document: start-up and shutdown cancel out. "
        f"Medians of {runs} rounds, the rows taking turns in each round. `batch` runs one job at a time "
        "(`--jobs 1`); the MCP rows are one 1-page `pdf_read` call after another over a bare pipe, a new "
        "document each, cache off; the PyMuPDF server (`bench/perf/pymupdf_server.py`) is the official `mcp` "
        "SDK's `MCPServer` reading with PyMuPDF in its own process, no sandbox.",
        "",
        "| per document (ms of CPU) | total | supervisor | zygote | job children | in-process pypdfium2 "
        "| overhead | ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for pages in PAGES:
        floor = median(samples[f"floor {pages}p"])
        mcp_rows = ["mcp 1p", "mcp-shared 1p", "mcp-before 1p", "pymupdf 1p"] if pages == 1 else []
        names = [f"batch {pages}p", f"shared {pages}p", f"before {pages}p", *mcp_rows]
        for name in names:
            if name not in samples:
                continue
            rows = samples[name]
            total = median(rows)
            label = {
                "batch": "`batch`",
                "shared": f"`batch --documents-per-child {SHARED}`",
                "before": "`batch`, before",
                "mcp": "MCP call",
                "mcp-shared": f"MCP call, `--documents-per-child {SHARED}`",
                "mcp-before": "MCP call, before",
                "pymupdf": "MCP call to the PyMuPDF server",
            }[name.split()[0]]
            parts = (
                " | ".join(f"{median(rows, part):.2f}" for part in ("supervisor", "zygote", "children"))
                if "supervisor" in rows[0] and not name.startswith("pymupdf")
                else "- | - | -"  # the PyMuPDF server is one process: its own CPU is the total
            )
            lines.append(
                f"| {label}, {pages}-page | {total:.2f} | {parts} | {floor:.2f} | {total - floor:+.2f} "
                f"| {total / floor:.2f}x |"
            )
    pairs = [(f"`batch`, {pages}-page", f"before {pages}p", f"batch {pages}p") for pages in PAGES]
    pairs.append(("1-page MCP call", "mcp-before 1p", "mcp 1p"))
    changes = [
        f"{label} {median(samples[old]):.2f} -> {median(samples[new]):.2f} ms "
        f"({median(samples[new]) / median(samples[old]):.2f}x)"
        for label, old, new in pairs
        if old in samples
    ]
    if changes:
        lines += [
            "",
            "Before (`--before`, the checkout this branch started from) -> now: " + "; ".join(changes) + ".",
        ]
    lines += ["", *_throughput(samples)]
    lines += [
        "",
        "| target (issue #27) | one child per document (default) | met "
        f"| `--documents-per-child {SHARED}` | met |",
        "|---|---|---|---|---|",
    ]
    lines += _target_rows(samples)
    lines += [
        "",
        "Where it goes: the job children's column is each child's whole life, and most of it is "
        "not the parse: the fork's copy-on-write faults on the zygote's pages (Python writes "
        'reference counts into every object it touches), the sandbox set-up ("Sandbox set-up '
        "per job\" above) and the exit's teardown of the address space; the zygote's column is "
        "the fork (its page tables: the bare fork below) and its own loop per job, whose writes "
        "after each fork are copy-on-write faults as well. With `--documents-per-child` (opt-in) a "
        "child that answered well takes the next document of the same root and client, and pays none "
        "of that again; the documents one child reads can then affect each other "
        '(docs/security.md, "What documents share").',
    ]
    if "fork ocr" in samples:
        lines += [
            "",
            "The zygote, and a bare fork and exit of it (no job; "
            f"{FORKS} forks, medians of {len(samples['fork ocr'])} rounds):",
            "",
            "| zygote | resident | in huge pages | page tables | fork+exit: zygote | fork+exit: child "
            "| total |",
            "|---|---|---|---|---|---|---|",
        ]
        described = {
            "ocr": "as it runs (Tesseract loaded, warm memory in huge pages, `fork_bare`)",
            "ocr-4k": "the same without huge pages",
            "ocr-osfork": "the same with `os.fork` (CPython's at-fork hooks)",
            "no-ocr": "as it runs without the OCR warm-up",
        }
        for variant in FORK_VARIANTS:
            rows = samples[f"fork {variant}"]
            parent, child = median(rows, "parent_ms"), median(rows, "child_ms")
            lines.append(
                f"| {described[variant]} | {median(rows, 'rss_kb') / 1024:.1f} MiB "
                f"| {median(rows, 'huge_kb') / 1024:.0f} MiB "
                f"| {median(rows, 'pte_kb'):.0f} KiB | {parent:.2f} ms | {child:.2f} ms "
                f"| {parent + child:.2f} ms |"
            )
        lines += ["", _fork_reading(samples)]
    if "merge" in samples:
        [merge] = samples["merge"]
        per_document = merge["bytes_per_document"]
        lines.append("")
        lines.append(
            f"`batch-merge` holds about {per_document:.0f} bytes per document (peak RSS over "
            f"{merge['documents']:,.0f} synthetic lines, less the interpreter's): "
            f"{per_document * BIG_RUN / 1e9:.1f} GB for {BIG_RUN:,} documents."
        )
    return "\n".join(lines)


def _throughput(samples: dict[str, list[dict[str, float]]]) -> list[str]:
    """Documents per second per core and the core-hours of a big run, from the ``batch`` rows
    (a child per document) and the shared rows where measured."""
    modes = [("batch", "a child per document")]
    if all(f"shared {pages}p" in samples for pages in PAGES):
        modes.append(("shared", f"`--documents-per-child {SHARED}`"))
    rates, costs = [], []
    for row, label in modes:
        per_core = ", ".join(f"{pages}-page {MS / median(samples[f'{row} {pages}p']):.0f}" for pages in PAGES)
        hours = ", ".join(
            f"{BIG_RUN * median(samples[f'{row} {pages}p']) / MS / HOUR_S:,.0f} of {pages}-page documents"
            for pages in PAGES
        )
        rates.append(f"{label}: {per_core}")
        costs.append(f"{label}: {hours}")
    return [
        "Documents per second per core, from the `batch` rows (one core's second divided by a "
        "document's CPU): " + "; ".join(rates) + ".",
        f"A run over {BIG_RUN:,} documents (docs/pipelines.md, the throughput model) then costs, in "
        "core-hours, " + "; ".join(costs) + ", plus each shard's start-up (a zygote's warm-up, well "
        "under a core-second) and the pods' idle share.",
    ]


def _target_rows(samples: dict[str, list[dict[str, float]]]) -> list[str]:
    """The issue's three targets, each for the default (a child per document) and the shared
    rows (``--documents-per-child``), where measured."""

    def met(ok: bool) -> str:
        return "yes" if ok else "no"

    def overhead(row: str) -> str:
        value = median(samples[row]) - median(samples["floor 1p"])
        return f"{value:+.2f} ms | {met(value <= TARGET_OVERHEAD_MS)}"

    def ratio(row: str) -> str:
        value = median(samples[row]) / median(samples["floor 10p"])
        return f"{value:.2f}x | {met(value <= TARGET_RATIO)}"

    def against_peer(row: str) -> str:
        if "pymupdf 1p" not in samples or row not in samples:
            return "not measured | -"
        value = median(samples[row]) / median(samples["pymupdf 1p"])
        return (
            f"{median(samples[row]):.2f} / {median(samples['pymupdf 1p']):.2f} ms = {value:.2f}x "
            f"| {met(value <= TARGET_MCP_RATIO)}"
        )

    return [
        f"| sandbox overhead per 1-page document in `batch` at most {TARGET_OVERHEAD_MS} ms | "
        f"{overhead('batch 1p')} | {overhead('shared 1p')} |",
        f"| 10-page documents at most {TARGET_RATIO}x in-process pypdfium2 | {ratio('batch 10p')} | "
        f"{ratio('shared 10p')} |",
        f"| CPU per 1-page MCP call at most {TARGET_MCP_RATIO}x a PyMuPDF in-process server's | "
        f"{against_peer('mcp 1p')} | {against_peer('mcp-shared 1p')} |",
    ]


def _fork_reading(samples: dict[str, list[dict[str, float]]]) -> str:
    """What the zygote table says about OCR's share of a fork, and what could cut it."""

    def per_fork(variant: str) -> float:
        rows = samples[f"fork {variant}"]
        return median(rows, "parent_ms") + median(rows, "child_ms")

    def resident(variant: str) -> float:
        return median(samples[f"fork {variant}"], "rss_kb") / 1024

    ocr_ms, ocr_mib = per_fork("ocr") - per_fork("no-ocr"), resident("ocr") - resident("no-ocr")
    huge_ms, hooks_ms = per_fork("ocr-4k") - per_fork("ocr"), per_fork("ocr-osfork") - per_fork("ocr")
    ocr_reading = (
        ": its model sits in huge pages no one writes, so a fork hardly sees it"
        if ocr_ms < OCR_NEGLIGIBLE_MS
        else "; a second zygote for OCR, out of the way of text jobs, would take that off"
    )
    return (
        f"Huge pages save {huge_ms:.2f} ms a fork and exit here: the zygote's warm memory "
        "(`pdf_airlock.worker.hugepages`) takes one page-table entry per 2 MiB to copy at the fork "
        "and tear down at the exit instead of 512; the first write to such a range splits it back "
        "into 4 KiB entries in the writing process only (copy-on-write stays per 4 KiB page), so what "
        "stays cheap is what no one writes: Tesseract's model, the engines' tables. CPython's at-fork "
        f"hooks, which `fork_bare` skips, cost {hooks_ms:.2f} ms a bare fork (in a job, about 80 "
        f"page faults of the child's). Tesseract and its English data make the zygote {ocr_mib:.1f} "
        f"MiB larger and every fork and exit {ocr_ms:+.2f} ms dearer, whether or not the document "
        f"needs OCR{ocr_reading}. `malloc_trim(0)` after the warm-up returns about 8 MiB of freed "
        "heap but changed no job's CPU measurably: a job writes those pages again."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", type=Path, help="another checkout with its own .venv")
    parser.add_argument("--write", action="store_true", help="write the table into docs/performance.md")
    parser.add_argument("--json", type=Path, help="also keep every sample here")
    parser.add_argument("--load", type=Path, help="render the samples a --json run kept, measuring nothing")
    parser.add_argument(
        "--peers-python",
        type=Path,
        default=PEERS_PYTHON,
        help="an interpreter with pymupdf and mcp, for the PyMuPDF server row (skipped if absent)",
    )
    args = parser.parse_args()
    peers = args.peers_python if args.peers_python.exists() else None
    samples = json.loads(args.load.read_text()) if args.load else measure(args.runs, args.before, peers)
    if "fork ocr" not in samples:
        samples |= fork_costs(FORK_ROUNDS)
    if "merge" not in samples:
        samples["merge"] = [merge_memory()]
    if args.json:
        args.json.write_text(json.dumps(samples, indent=1))
    text = table(samples, args.runs)
    if args.write:
        write_block(ROOT / "docs" / "performance.md", "CPU-PER-DOC", text)
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
