"""Shared fixtures: a folder of generated documents and a real server driven over real stdio."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment

sys.path.insert(0, str(Path(__file__).parent))
# Every zygote a test starts fails a job loudly on any lazy load after sandboxing
# (pdf_airlock.worker.strict_loads): the warm-up must preload whatever a parser needs.
os.environ["PDF_AIRLOCK_STRICT_LOADS"] = "1"

import pdfs

from pdf_airlock.server.tools.registry import TOOLS

PROJECT = Path(__file__).resolve().parent.parent

HELLO_PAGES = [
    "Hello from page one.\nSecond line of page one.",
    "Page two has different words.",
    "Third page: the end.",
]
TEST_PASSWORD = "s3cret-pass"
# Derived from the tool modules (``pdf_airlock.server.tools.registry``); tests/unit/test_layout.py
# checks the registry against the worker's parsers.
ALL_TOOLS = set(TOOLS)
BOMB_MIB = 1024
TEST_TIMEOUT_S = 3
TEST_MEMORY_MB = 256
# Set by CI (.ci/run), like PDF_AIRLOCK_REQUIRE_DOCKER: a test that needs a sandbox layer this
# kernel lacks then fails instead of being skipped.
REQUIRE_LAYERS_ENV = "PDF_AIRLOCK_REQUIRE_SANDBOX_LAYERS"
LANDLOCK_ABI = 4  # TCP rules: the escape table's full-sandbox column needs them


# Tests by purpose: each folder of tests/ is a marker (pyproject.toml registers them), so
# ``-m unit`` or ``-m "not container and not corpus"`` picks a purpose without listing files.
PURPOSES = ("unit", "protocol", "sandbox", "tools", "container", "corpus")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        folder = item.path.parent.name
        if folder in PURPOSES:
            item.add_marker(getattr(pytest.mark, folder))


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def landlock_layer() -> None:
    """A test that needs Landlock (ABI >= 4): skipped on a kernel without it, or failed there
    when ``PDF_AIRLOCK_REQUIRE_SANDBOX_LAYERS=1`` (CI). Use as ``needs_landlock``."""
    from pdf_airlock.worker.sandbox import landlock

    abi = landlock.abi_version()
    if abi >= LANDLOCK_ABI:
        return
    reason = f"kernel without Landlock ABI >= {LANDLOCK_ABI} (ABI {abi})"
    if os.environ.get(REQUIRE_LAYERS_ENV) == "1":
        pytest.fail(f"{reason}, and {REQUIRE_LAYERS_ENV}=1 requires every sandbox layer")
    pytest.skip(reason)


needs_landlock = pytest.mark.usefixtures("landlock_layer")


@pytest.fixture(scope="session")
def docs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A root folder with good and hostile documents, plus escapes that point outside it."""
    root = tmp_path_factory.mktemp("root")
    outside = tmp_path_factory.mktemp("outside")
    pdfs.write(root / "hello.pdf", pdfs.text_pdf(HELLO_PAGES, title="Hello Title"))
    pdfs.write(root / "columns.pdf", pdfs.two_column_pdf(["left A", "left B"], ["right A", "right B"]))
    pdfs.write(root / "encrypted.pdf", pdfs.encrypted_pdf(TEST_PASSWORD, "Encrypted body text"))
    pdfs.write(root / "not-a-pdf.pdf", b"<html><body>this is not a PDF</body></html>\n" * 40)
    pdfs.write(root / "empty.pdf", b"")
    pdfs.write(root / "bomb.pdf", pdfs.flate_bomb_pdf(BOMB_MIB))
    pdfs.write(root / "glyphs.pdf", pdfs.scattered_glyphs_pdf(20_000))
    pdfs.write(root / "slow.pdf", pdfs.scattered_glyphs_pdf(500))  # about a second of layout analysis
    pdfs.write(
        root / "long.pdf",
        pdfs.text_pdf([f"Page {n}\n" + "\n".join(["lorem ipsum " * 8] * 5) for n in range(1, 21)]),
    )
    (root / "sub").mkdir()
    pdfs.write(root / "sub" / "nested.pdf", pdfs.text_pdf(["Nested document."]))
    pdfs.write(outside / "secret.pdf", pdfs.text_pdf(["Outside the root."]))
    (root / "escape.pdf").symlink_to(outside / "secret.pdf")
    (root / "passwd.pdf").symlink_to("/etc/passwd")
    (root / "zero.pdf").symlink_to("/dev/zero")
    (root / "inside-link.pdf").symlink_to(root / "hello.pdf")
    os.mkfifo(root / "fifo.pdf")
    return root


def initialize_request(version: str = "2025-11-25", request_id: int = 1) -> dict[str, Any]:
    """A plain ``initialize`` request, as a raw-pipe test sends it first."""
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def server_command(root: Path, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pdf_airlock.server",
        "--root",
        str(root),
        "--timeout",
        str(TEST_TIMEOUT_S),
        "--memory-mb",
        str(TEST_MEMORY_MB),
        *extra,
    ]


@asynccontextmanager
async def connect(root: Path, *extra: str, mode: str = "legacy") -> AsyncIterator[Client]:
    """The real ``mcp`` client, spawning the real server over stdio."""
    command = server_command(root, *extra)
    env = {**get_default_environment(), "PDF_AIRLOCK_STRICT_LOADS": "1"}
    params = StdioServerParameters(command=command[0], args=command[1:], cwd=str(PROJECT), env=env)
    async with Client(params, mode=mode, read_timeout_seconds=60) as client:  # type: ignore[arg-type]
        yield client
