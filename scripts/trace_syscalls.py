"""Derive the job child's seccomp allowlist: trace every parse of a corpus with strace.

    python scripts/trace_syscalls.py [--keep TRACE]

Runs the zygote under ``strace -f`` with seccomp skipped (so nothing is killed), sends every document of the
corpus (the bundled examples plus the test generators' good and hostile files) through every job kind and
engine, and collects the syscalls each job child made after its sandbox was up (after
``landlock_restrict_self``). Prints them next to worker/pdf_airlock/worker/sandbox/seccomp.py's policy and
exits 1 if the children used a syscall the filter would kill.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Final

import anyio

from pdf_airlock.worker.contract import Limits

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import pdfs  # noqa: E402
from pydantic import ValidationError  # noqa: E402
from tool_calls import every_job, job_of  # noqa: E402

from pdf_airlock.server.errors import ToolError  # noqa: E402
from pdf_airlock.server.pool.pool import Pool  # noqa: E402
from pdf_airlock.server.pool.verdict import classify  # noqa: E402
from pdf_airlock.server.tools.registry import TOOLS  # noqa: E402
from pdf_airlock.worker.contract import TEST_HOOKS_ENV  # noqa: E402
from pdf_airlock.worker.sandbox.seccomp import ALLOWED, CONDITIONAL, EACCES_CALLS  # noqa: E402

LIMITS = Limits(
    memory_bytes=512 << 20,
    cpu_seconds=10,
    max_input_bytes=1 << 30,
    max_result_bytes=16 << 20,
)
# Every tool's job and engine with the arguments the server sends for the tool's defaults
# (tests/tool_calls.py: from the registry, so a new tool is traced too), a pattern search where a
# tool takes one, then each variant below for every tool that takes its argument: the variants
# name arguments, never tools, so a new tool with such an argument is traced with it too.
PATTERN: Final[dict[str, Any]] = {"query": "e[a-z]+", "regex": True}
# (argument, value, other arguments given with it where the tool takes them)
VARIANTS: Final[tuple[tuple[str, Any, dict[str, Any]], ...]] = (
    ("password", "airlock", {"max_chars": 100_000}),
    ("extract", "notes.txt", {"max_bytes": 1 << 20, "max_items": 1000}),
    ("extract", {"page": 2, "name": "Photo"}, {"max_items": 100, "max_pixels": 4_000_000}),
    ("extract", {"page": 2, "name": "Fm0/Inner"}, {"max_items": 100, "max_pixels": 4_000_000}),
    # OCR (Tesseract in the child): every page of every document (the tools' default is "auto")
    ("ocr", "force", {"max_chars": 100_000, "query": "e", "max_results": 100, "time_budget_ms": 2000}),
)


def _variant_jobs() -> list[tuple[str, dict[str, Any]]]:
    jobs = []
    for name, spec in TOOLS.items():
        fields = spec.input_model.model_fields
        for argument, value, others in VARIANTS:
            if argument not in fields:
                continue
            given = {key: given for key, given in others.items() if key in fields}
            arguments = dict(spec.example) | given | {argument: value}
            try:
                jobs.append(job_of(name, arguments))
            except ValidationError:
                continue  # the tool's ``extract`` takes another shape
    return jobs


PATTERNS: Final = {
    name: PATTERN for name, spec in TOOLS.items() if set(PATTERN) <= set(spec.input_model.model_fields)
}
JOBS = [*every_job(PATTERNS).values(), *_variant_jobs()]
_LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. )?(\w+)[( ]")


def corpus(folder: Path) -> list[Path]:
    docs = {
        "text.pdf": pdfs.text_pdf(["Hello\nworld", "Second page"]),
        "columns.pdf": pdfs.two_column_pdf(["a", "b"], ["c", "d"]),
        "encrypted.pdf": pdfs.encrypted_pdf("airlock"),
        "bomb.pdf": pdfs.flate_bomb_pdf(1024),
        "glyphs.pdf": pdfs.scattered_glyphs_pdf(2000),
        "junk.pdf": b"not a pdf at all",
        "structured.pdf": pdfs.structured_pdf(),
        "interactive.pdf": pdfs.interactive_pdf(),
        "hidden.pdf": pdfs.hidden_text_pdf(),
        "images.pdf": pdfs.images_pdf(),
        "xmp.pdf": pdfs.xmp_pdf(),
        "damaged.pdf": pdfs.damaged_xref_pdf(),
        "scan.pdf": pdfs.scan_pdf([["Invoice 4711", "Total due: 1,250.00 EUR"], "A typed page."]),
        "scan-report.pdf": pdfs.structured_scan_pdf([("Report", 24, True), ("Body text here.", 11, False)]),
    }
    paths = [pdfs.write(folder / name, data) for name, data in docs.items()]
    return paths + sorted((ROOT / "examples").glob("*.pdf"))


async def run_corpus(trace: Path, documents: list[Path]) -> None:
    prefix = ("strace", "-f", "-qq", "-o", str(trace))
    async with Pool(1, 64, 120, 2, command_prefix=prefix) as pool:
        for path in documents:
            for kind, args in JOBS:
                fd = os.open(path, os.O_RDONLY)
                try:
                    outcome = await pool.run(
                        kind, args, fd, limits=LIMITS, deadline_s=30, sandbox={"skip": ["seccomp"]}
                    )
                finally:
                    os.close(fd)
                try:
                    classify(outcome, LIMITS.memory_bytes, 30)
                    verdict = "ok"
                except ToolError as error:
                    verdict = error.code
                sys.stderr.write(f"{path.name:18} {kind:9} {args.get('engine', 'fast'):6} {verdict}\n")


def parse(trace: Path) -> collections.Counter[str]:
    sandboxed: set[str] = set()
    used: collections.Counter[str] = collections.Counter()
    for line in trace.read_text(errors="replace").splitlines():
        match = _LINE.match(line)
        if match is None:
            continue
        pid, name = match.groups()
        if pid in sandboxed and "resumed>" not in line:
            used[name] += 1
        if name == "landlock_restrict_self":
            sandboxed.add(pid)
    return used


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="keep the raw strace output here")
    ns = parser.parse_args()
    os.environ[TEST_HOOKS_ENV] = "1"  # the jobs skip seccomp, which only the test hooks allow
    with tempfile.TemporaryDirectory() as tmp:
        trace = ns.keep or Path(tmp) / "trace.txt"
        anyio.run(run_corpus, trace, corpus(Path(tmp)))
        used = parse(trace)
    policy = {name: "allow" for name in ALLOWED} | {name: "EACCES" for name in EACCES_CALLS} | CONDITIONAL
    killed = sorted(set(used) - set(policy))
    sys.stdout.write("| syscall | calls in the corpus | policy |\n|---|---|---|\n")
    for name, count in sorted(used.items(), key=lambda item: -item[1]):
        sys.stdout.write(f"| `{name}` | {count} | {policy.get(name, '**kill**')} |\n")
    unused = sorted(set(ALLOWED) - set(used))
    sys.stdout.write(f"\nallowed but not seen in this corpus: {', '.join(unused) or 'none'}\n")
    if killed:
        sys.stdout.write(f"USED BUT NOT ALLOWED (the filter would kill): {', '.join(killed)}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
