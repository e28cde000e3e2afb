"""Run every hostile class through every tool and engine on one real server (real ``mcp`` client).

Used by tests/sandbox/test_hostile.py (asserts) and ``python -m tests.hostile.run`` (writes the class
table into docs/robustness.md). Each call records its outcome code, wall time seen by the client,
and the job child's peak RSS from the server's audit log.
"""

from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import psutil
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.hostile.generate import CLASSES, write_all

PROJECT = Path(__file__).resolve().parent.parent.parent
TIMEOUT_S = 5
MEMORY_MB = 512
CALLS = {
    "info": ("pdf_info", {}),
    "fast": ("pdf_read", {}),
    "layout": ("pdf_read", {"engine": "layout"}),
    "markdown": ("pdf_markdown", {}),
    "tables": ("pdf_tables", {}),
    "outline": ("pdf_outline", {}),
    "attachments": ("pdf_attachments", {}),
    "annotations": ("pdf_annotations", {}),
    "forms": ("pdf_forms", {}),
    "security": ("pdf_security", {}),
    "search": ("pdf_search", {"query": "e", "max_results": 5}),
    "render": ("pdf_render", {"dpi": 72}),
    "images": ("pdf_images", {}),
}


@dataclass
class Outcome:
    cls: str
    engine: str
    code: str
    seconds: float
    peak_rss_kb: int | None


def server_params(root: Path, log: Path) -> StdioServerParameters:
    command = (
        f"exec {sys.executable} -m pdf_airlock.server serve --root {root} --timeout {TIMEOUT_S} "
        f"--memory-mb {MEMORY_MB} --cache-mb 0 2>>{log}"
    )
    return StdioServerParameters(command="/bin/sh", args=["-c", command], cwd=str(PROJECT))


def supervisor() -> psutil.Process:
    for process in psutil.Process().children(recursive=True):
        if "pdf_airlock.server" in process.cmdline() and "serve" in process.cmdline():
            return process
    raise LookupError("supervisor not found")


async def run_all(root: Path, log: Path) -> tuple[list[Outcome], dict[str, float]]:
    paths = write_all(root)
    outcomes: list[Outcome] = []
    rss: dict[str, float] = {}
    async with Client(server_params(root, log), mode="legacy", read_timeout_seconds=60) as client:
        await client.call_tool("pdf_info", {"path": paths[CLASSES[-5].name].name})  # warm
        rss["start_mb"] = supervisor().memory_info().rss / 1e6
        for cls in CLASSES:
            for engine, (tool, extra) in CALLS.items():
                arguments: dict[str, Any] = {"path": paths[cls.name].name, **extra}
                if cls.password:
                    arguments["password"] = cls.password
                started = time.perf_counter()
                result = await client.call_tool(tool, arguments)
                seconds = time.perf_counter() - started
                code = result.structured_content["error"]["code"] if result.is_error else "ok"
                outcomes.append(Outcome(cls.name, engine, code, seconds, None))
                await client.list_tools()  # the server still answers (the client's read timeout)
        rss["end_mb"] = supervisor().memory_info().rss / 1e6
    lines = log.read_text().splitlines()
    rss["unresponsive_zygote"] = sum('"zygote_unresponsive"' in line for line in lines)
    audits = [json.loads(line) for line in lines if '"tool_call"' in line]
    audits = audits[1:]  # the warm-up call
    for outcome, audit in zip(outcomes, audits, strict=True):
        outcome.peak_rss_kb = audit.get("job_peak_rss_kb")
    return outcomes, rss


def table(outcomes: list[Outcome], rss: dict[str, float]) -> str:
    lines = [
        f"Deadline {TIMEOUT_S} s, memory budget {MEMORY_MB} MB per job. Supervisor RSS "
        f"{rss['start_mb']:.0f} MB at the start and {rss['end_mb']:.0f} MB after every call below.",
        "",
        "| class | tool / engine | outcome | seconds | child peak RSS (MB) |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        peak = f"{o.peak_rss_kb / 1024:.0f}" if o.peak_rss_kb else "-"
        label = {"info": "pdf_info", "fast": "pdf_read fast", "layout": "pdf_read layout"}.get(
            o.engine, f"pdf_{o.engine}"
        )
        lines.append(f"| {o.cls} | {label} | `{o.code}` | {o.seconds:.2f} | {peak} |")
    return "\n".join(lines)


def main() -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        outcomes, rss = anyio.run(run_all, Path(tmp) / "hostile", Path(tmp) / "server.log")
    text = table(outcomes, rss)
    doc = PROJECT / "docs" / "robustness.md"
    block = f"<!-- CLASS-TABLE -->\n{text}\n<!-- /CLASS-TABLE -->"
    doc.write_text(
        re.sub(r"<!-- CLASS-TABLE -->.*<!-- /CLASS-TABLE -->", lambda _: block, doc.read_text(), flags=re.S)
    )
    sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
