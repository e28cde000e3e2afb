"""Cell accuracy, phantom tables and time per page of ``pdf_tables`` beside its peers.

    python -m bench.quality.tables_score [--rounds 3] [--no-write]

Builds the generated corpus (bench/corpora/tables_corpus.py: every style with known cells, and pages with
lists and two columns and no table) and runs, side by side on the same files:

* **pdf-airlock**: ``pdf_tables`` through the real server over stdio (sandboxed job children);
* **pdfplumber**: ``page.extract_tables()`` in-process, its default (ruled) settings, and with
  its ``text`` strategies (for tables without lines);
* **camelot**: ``read_pdf`` in-process in the peers' venv (``--peers-python``, default
  /tmp/peers/bin/python), ``lattice`` (ruled) and ``stream`` (whitespace).

Scoring: each truth table is matched to the unmatched found table on its page that agrees on the
most cells (position by position, spaces collapsed, at the best shift of the truth inside the
found table: extra rows or columns around it cost nothing here); cell accuracy is matching cells over truth
cells (a missed table scores 0 for its cells). A found table matched to no truth table is a
phantom. Time per page: each file's median over ``--rounds`` runs, summed, over its pages.

Results go to docs/performance.md between the ``TABLES-QUALITY`` markers. Tables of real documents
are scored against independent truth by ``bench/quality/structure_score.py`` (ICDAR 2013).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / ".corpus" / "tables"
PEERS_PYTHON = Path("/tmp/peers/bin/python")
MARKER = "TABLES-QUALITY"
SYSTEMS = ("pdf-airlock", "pdfplumber", "pdfplumber-text", "camelot-lattice", "camelot-stream")
PEERS = ("camelot-lattice", "camelot-stream")
Tables = list[dict[str, Any]]  # each {page, rows}
Outputs = dict[str, tuple[Tables, float] | None]  # file -> (tables, median seconds)


def norm(cell: object) -> str:
    return " ".join(str(cell or "").split())


# -- the systems ----------------------------------------------------------------------------------


def plumber_tables(path: str, text: bool) -> Tables:
    import pdfplumber

    settings = {"vertical_strategy": "text", "horizontal_strategy": "text"} if text else {}
    found: Tables = []
    with pdfplumber.open(path) as pdf:
        for number, page in enumerate(pdf.pages, 1):
            for table in page.extract_tables(settings):
                found.append({"page": number, "rows": [[norm(c) for c in row] for row in table]})
    return found


def camelot_tables(path: str, flavor: str) -> Tables:
    import camelot  # type: ignore[import-not-found]

    found: Tables = []
    for table in camelot.read_pdf(path, pages="all", flavor=flavor):
        rows = [[norm(c) for c in row] for row in table.df.values.tolist()]
        found.append({"page": int(table.page), "rows": rows})
    return found


def peer_main(name: str, files: list[str], rounds: int) -> None:
    """Runs in the peers' interpreter: one JSON line per file on stdout."""
    stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        flavor = name.split("-", 1)[1]
        for path in files:
            times, tables = [], []
            for _ in range(rounds):
                started = time.perf_counter()
                tables = camelot_tables(path, flavor)
                times.append(time.perf_counter() - started)
            stdout.write(
                json.dumps({"file": path, "tables": tables, "seconds": statistics.median(times)}) + "\n"
            )
            stdout.flush()


def run_peer(python: Path, name: str, files: list[Path], rounds: int) -> Outputs:
    if not python.exists():
        return dict.fromkeys(map(str, files))
    argv = [str(python), __file__, "--peer", name, "--rounds", str(rounds), *map(str, files)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd="/tmp")
    if done.returncode:
        sys.stderr.write(f"{name} failed:\n{done.stderr[-2000:]}")
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    got: Outputs = {a["file"]: (a["tables"], a["seconds"]) for a in answers}
    return {str(path): got.get(str(path)) for path in files}


def run_plumber(files: list[Path], rounds: int, text: bool) -> Outputs:
    plumber_tables(str(files[0]), text)  # imports and first-use costs outside the timing
    got: Outputs = {}
    for path in files:
        times, tables = [], []
        for _ in range(rounds):
            started = time.perf_counter()
            tables = plumber_tables(str(path), text)
            times.append(time.perf_counter() - started)
        got[str(path)] = (tables, statistics.median(times))
    return got


async def run_airlock_async(files: list[Path], rounds: int) -> Outputs:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    roots = sorted({str(path.parent) for path in files})
    args = ["-m", "pdf_airlock.server", "serve", "--cache-mb", "0", "--log-level", "warning"]
    args += [a for root in roots for a in ("--root", root)]
    got: Outputs = dict.fromkeys(map(str, files))
    async with Client(
        StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT)), mode="legacy"
    ) as client:
        await client.call_tool("pdf_tables", {"path": str(files[0])})
        for path in files:
            times, result = [], None
            for _ in range(rounds):
                started = time.perf_counter()
                result = await client.call_tool("pdf_tables", {"path": str(path), "max_tables": 1000})
                times.append(time.perf_counter() - started)
            if result is not None and not result.is_error:
                tables = [{"page": t["page"], "rows": t["rows"]} for t in result.structured_content["tables"]]
                got[str(path)] = (tables, statistics.median(times))
            elif result is not None:
                sys.stderr.write(f"pdf-airlock {path.name}: {result.structured_content['error']['code']}\n")
    return got


def run_airlock(files: list[Path], rounds: int) -> Outputs:
    import anyio

    return anyio.run(run_airlock_async, files, rounds)


# -- scoring --------------------------------------------------------------------------------------


MAX_SHIFT = 60


def agreement(truth: list[list[str]], found: list[list[str]]) -> int:
    """Cells in the same place, at the best shift of the truth inside the found table (a peer's
    table that also holds the prose above it keeps the credit for its cells)."""
    rows = range(min(max(len(found) - len(truth), 0), MAX_SHIFT) + 1)
    width = max((len(row) for row in found), default=0)
    columns = range(min(max(width - max(len(row) for row in truth), 0), MAX_SHIFT) + 1)
    return max(_shifted(truth, found, dr, dc) for dr in rows for dc in columns)


def _shifted(truth: list[list[str]], found: list[list[str]], dr: int, dc: int) -> int:
    return sum(
        1
        for r, row in enumerate(truth)
        for c, cell in enumerate(row)
        if r + dr < len(found) and c + dc < len(found[r + dr]) and norm(found[r + dr][c + dc]) == norm(cell)
    )


def score_file(truth: Tables, found: Tables) -> tuple[int, int, int]:
    """(matching cells, truth cells, phantom tables) for one file."""
    free = list(range(len(found)))
    hits = total = 0
    for table in truth:
        total += sum(len(row) for row in table["rows"])
        best = max(
            (i for i in free if found[i]["page"] == table["page"]),
            key=lambda i: agreement(table["rows"], found[i]["rows"]),
            default=None,
        )
        if best is not None:
            hits += agreement(table["rows"], found[best]["rows"])
            free.remove(best)
    phantoms = sum(1 for i in free if any(norm(c) for row in found[i]["rows"] for c in row))
    return hits, total, phantoms


def page_count(path: Path) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(path))
    try:
        return len(document)
    finally:
        document.close()


def style_of(path: Path) -> str:
    return path.stem.rsplit("-", 1)[0]


def score_system(outputs: Outputs, truths: dict[str, Tables], files: list[Path]) -> dict[str, list[float]]:
    """Per style: [matching cells, truth cells, phantoms, seconds, pages, failed files]."""
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0] * 6)
    for path in files:
        row = sums[style_of(path)]
        answer = outputs.get(str(path))
        if answer is None:
            row[5] += 1
            continue
        hits, total, phantoms = score_file(truths[str(path)], answer[0])
        row[0] += hits
        row[1] += total
        row[2] += phantoms
        row[3] += answer[1]
        row[4] += page_count(path)
    return sums


def table_lines(results: dict[str, dict[str, list[float]]], styles: list[str]) -> list[str]:
    head = ["| style | " + " | ".join(SYSTEMS) + " |", "|---|" + "---|" * len(SYSTEMS)]
    lines = []
    for style in styles:
        cells = []
        for system in SYSTEMS:
            hits, total, phantoms, _, _, failed = results[system].get(style, [0.0] * 6)
            accuracy = f"{hits / total:.3f}" if total else "-"
            note = f", {failed:.0f} failed" if failed else ""
            cells.append(f"{accuracy} / {phantoms:.0f}{note}")
        lines.append(f"| {style} | " + " | ".join(cells) + " |")
    timing = []
    base = _per_page(results["pdfplumber"])
    for system in SYSTEMS:
        per_page = _per_page(results[system])
        timing.append(f"{per_page * 1000:.1f} ms ({per_page / base:.2f}x)" if per_page and base else "n/a")
    lines.append("| time per page (median of rounds; x pdfplumber) | " + " | ".join(timing) + " |")
    return head + lines


def _per_page(sums: dict[str, list[float]]) -> float:
    seconds = sum(row[3] for row in sums.values())
    pages = sum(row[4] for row in sums.values())
    return seconds / pages if pages else 0.0


def peer_versions(python: Path) -> str:
    import importlib.metadata as metadata

    found = f"pdfplumber {metadata.version('pdfplumber')}"
    if python.exists():
        code = "import importlib.metadata as m; print('camelot-py', m.version('camelot-py'))"
        found += (
            ", "
            + subprocess.run(
                [str(python), "-c", code], capture_output=True, text=True, check=False
            ).stdout.strip()
        )
    return found


def report(argv: list[str], lines: list[str], versions: str, files: int) -> str:
    command = " ".join(["python -m bench.quality.tables_score", *argv])
    machine = (
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f} at the end; {versions}"
    )
    about = (
        f"Each cell: cell accuracy (matching cells / truth cells) / phantom tables, over {files} files. "
        "pdf-airlock runs through the server over stdio, each document in a sandboxed job child; the "
        "peers run in-process. Targets: accuracy >= 0.95 on every style, 0 phantoms, time per page "
        "within 2x of pdfplumber. Tables of real documents: the ICDAR 2013 rows of STRUCTURE-QUALITY "
        "(independent truth, `bench/quality/structure_score.py`)."
    )
    return "\n".join(
        [
            "## Table quality (`pdf_tables`)",
            "",
            f"Generated by `{command}` on {machine}.",
            "",
            about,
            "",
            *lines,
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers-python", type=Path, default=PEERS_PYTHON)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md")
    parser.add_argument("--peer", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        peer_main(args.peer, args.files, args.rounds)
        return
    from bench.corpora.tables_corpus import build

    generated = build(args.corpus)
    files = generated
    truths = {str(p): json.loads(p.with_suffix(".json").read_text())["tables"] for p in generated}
    outputs = {
        "pdf-airlock": run_airlock(files, args.rounds),
        "pdfplumber": run_plumber(files, args.rounds, text=False),
        "pdfplumber-text": run_plumber(files, args.rounds, text=True),
    }
    outputs |= {name: run_peer(args.peers_python, name, files, args.rounds) for name in PEERS}
    results = {system: score_system(outputs[system], truths, files) for system in SYSTEMS}
    styles = [*dict.fromkeys(style_of(p) for p in files)]
    text = report(sys.argv[1:], table_lines(results, styles), peer_versions(args.peers_python), len(files))
    sys.stdout.write(text + "\n")
    if not args.no_write:
        from bench.report import write_block

        doc = ROOT / "docs" / "performance.md"
        write_block(doc, MARKER, text)


if __name__ == "__main__":
    main()
