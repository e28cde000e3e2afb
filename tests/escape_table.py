"""Escape attempts run inside real job children, with the full sandbox and with layers removed.

``python tests/escape_table.py`` regenerates the table in docs/security.md (between the
ESCAPE-TABLE markers). The test suite (tests/sandbox/test_sandbox.py) asserts the full-sandbox column.
Needs the zygote's test hook (PDF_AIRLOCK_TEST_HOOKS=1), which this module sets.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

import anyio

from pdf_airlock.worker.contract import Limits

os.environ["PDF_AIRLOCK_TEST_HOOKS"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.worker.testing.escape import ATTEMPTS

LIMITS = Limits(
    memory_bytes=256 << 20,
    cpu_seconds=1,
    max_input_bytes=1 << 20,
    max_result_bytes=1 << 16,
)
DEADLINE_S = 5.0
COLUMNS: dict[str, list[str]] = {
    "full sandbox": [],
    "without seccomp": ["seccomp"],
    "without seccomp, Landlock": ["seccomp", "landlock"],
}
# Columns with layers removed still require the namespaces layer: without it the attempts
# (mount over /, kill, ptrace...) would run as the real user on the host. Never drop it here.
SAFETY_NET = {"require": ["namespaces"]}


async def run_attempt(pool: Pool, attempt: str, skip: list[str]) -> str:
    """'EACCES'-style errno when denied, an error code when the sandbox killed it, or 'ALLOWED'."""
    fd = os.memfd_create("escape", os.MFD_CLOEXEC)
    try:
        outcome = await pool.run(
            "escape",
            {"attempt": attempt},
            fd,
            limits=LIMITS,
            deadline_s=DEADLINE_S,
            sandbox={"skip": skip, **(SAFETY_NET if skip else {})},
        )
        result: dict[str, Any] = classify(outcome, LIMITS.memory_bytes, DEADLINE_S)
    except ToolError as error:
        return error.code
    finally:
        os.close(fd)
    return str(result["errno"]) if result["outcome"] == "denied" else "ALLOWED"


async def matrix() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    async with Pool(2, 64, 60, 1) as pool:
        for attempt in ATTEMPTS:
            table[attempt] = {
                column: await run_attempt(pool, attempt, skip) for column, skip in COLUMNS.items()
            }
    return table


def markdown(table: dict[str, dict[str, str]]) -> str:
    header = "| attempt | " + " | ".join(COLUMNS) + " |"
    rule = "|---" * (len(COLUMNS) + 1) + "|"
    rows = [f"| `{name}` | " + " | ".join(cells[c] for c in COLUMNS) + " |" for name, cells in table.items()]
    return "\n".join([header, rule, *rows])


def main() -> None:
    doc = Path(__file__).resolve().parent.parent / "docs" / "security.md"
    text = doc.read_text()
    block = f"<!-- ESCAPE-TABLE -->\n{markdown(anyio.run(matrix))}\n<!-- /ESCAPE-TABLE -->"
    doc.write_text(
        re.sub(r"<!-- ESCAPE-TABLE -->.*<!-- /ESCAPE-TABLE -->", lambda _: block, text, flags=re.S)
    )


if __name__ == "__main__":
    main()
