"""Only installed code runs: a server started inside a folder of impostor packages imports none.

MCP clients start the server in the user's project folder and often serve that same folder. A
repository a user opens may hold packages named like ours (``worker``, ``server``,
``pdf_airlock``), like our dependencies, or a ``sitecustomize.py``. Each impostor module here
writes a marker file when imported; after a real ``pdf_read`` over real stdio no marker may exist.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pdfs
import psutil
import pytest
from conftest import HELLO_PAGES, TEST_MEMORY_MB, TEST_TIMEOUT_S
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from pdf_airlock.server.pool.pool import ZYGOTE_ENV_KEYS
from pdf_airlock.worker.contract import Limits

pytestmark = pytest.mark.anyio

CONSOLE_SCRIPT = Path(sys.executable).parent / "pdf-airlock"
# Top-level names an import from the working directory or the served root could hijack: our own
# packages (before and after the layout change), our dependencies, and start-up hooks.
PACKAGES = {
    "worker": ["zygote", "child", "sandbox", "warmup", "parsers", "seccomp", "landlock"],
    "server": ["cli", "pool", "app", "transport", "log"],
    "pdf_airlock": ["server", "worker"],
    "pikepdf": [],
    "pypdfium2": [],
    "pdfminer": ["high_level", "layout"],
    "mcp": [],
    "anyio": [],
    "structlog": [],
    "pydantic": [],
    "psutil": [],
    "regex": [],
    "PIL": [],
}
MODULES = ["sitecustomize", "usercustomize", "json", "typing_extensions", "ctypes", "socket"]


def _marker_source(markers: Path, name: str) -> str:
    return (
        f"import os\nopen(os.path.join({str(markers)!r}, {name!r} + '.' + str(os.getpid())), 'w').close()\n"
    )


def plant_impostors(folder: Path, markers: Path) -> None:
    for package, submodules in PACKAGES.items():
        (folder / package).mkdir()
        (folder / package / "__init__.py").write_text(_marker_source(markers, package))
        (folder / package / "__main__.py").write_text(_marker_source(markers, f"{package}.__main__"))
        for sub in submodules:
            (folder / package / f"{sub}.py").write_text(_marker_source(markers, f"{package}.{sub}"))
    for module in MODULES:
        (folder / f"{module}.py").write_text(_marker_source(markers, module))


@pytest.fixture
def impostors(tmp_path: Path) -> tuple[Path, Path]:
    folder, markers = tmp_path / "project", tmp_path / "markers"
    folder.mkdir()
    markers.mkdir()
    plant_impostors(folder, markers)
    pdfs.write(folder / "hello.pdf", pdfs.text_pdf(HELLO_PAGES))
    return folder, markers


def _zygote_of(server_pid: int) -> psutil.Process:
    for child in psutil.Process(server_pid).children(recursive=True):
        if "pdf_airlock.worker.zygote" in child.cmdline():
            return child
    raise AssertionError("no zygote among the server's children")


def _server_pid() -> int:
    for child in psutil.Process().children(recursive=True):
        if str(CONSOLE_SCRIPT) in child.cmdline():
            return child.pid
    raise AssertionError("the server is not running")


async def test_console_script_in_a_folder_of_impostors(impostors: tuple[Path, Path]) -> None:
    """The README's form, `pdf-airlock serve --root "$PWD"`, started in the served folder."""
    folder, markers = impostors
    args = [
        "serve",
        "--root",
        str(folder),
        "--timeout",
        str(TEST_TIMEOUT_S),
        "--memory-mb",
        str(TEST_MEMORY_MB),
    ]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env["PDF_AIRLOCK_NOT_FOR_THE_ZYGOTE"] = "1"
    params = StdioServerParameters(command=str(CONSOLE_SCRIPT), args=args, cwd=str(folder), env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=60) as client:  # type: ignore[arg-type]
        read = await client.call_tool("pdf_read", {"path": "hello.pdf"})
        search = await client.call_tool("pdf_search", {"path": "hello.pdf", "query": "different"})
        layout = await client.call_tool("pdf_read", {"path": "hello.pdf", "engine": "layout", "pages": "3"})
        zygote = _zygote_of(_server_pid())
        zygote_argv, zygote_cwd, zygote_env = zygote.cmdline(), zygote.cwd(), zygote.environ()
    assert read.is_error is False, read
    assert [p["text"] for p in read.structured_content["pages"]] == HELLO_PAGES
    assert search.is_error is False and search.structured_content["hits"], search
    assert layout.is_error is False and "Third page" in layout.structured_content["pages"][0]["text"]
    assert sorted(m.name for m in markers.iterdir()) == []
    # Isolated mode (no working directory, no PYTHON* variables), a fixed working directory and
    # an allowlisted environment: nothing of the start folder or the caller's variables.
    assert zygote_argv[1] == "-I", zygote_argv
    assert zygote_cwd == "/"
    assert "PDF_AIRLOCK_NOT_FOR_THE_ZYGOTE" not in zygote_env
    assert set(zygote_env) <= set(ZYGOTE_ENV_KEYS), zygote_env


async def test_impostors_are_live(impostors: tuple[Path, Path]) -> None:
    """The trap works: the same folder hijacks a non-isolated `python -m pdf_airlock.worker.zygote`."""
    import subprocess

    folder, markers = impostors
    subprocess.run(
        [sys.executable, "-m", "pdf_airlock.worker.zygote"], cwd=folder, check=False, capture_output=True
    )
    assert {m.name.split(".")[0] for m in markers.iterdir()} >= {"pdf_airlock"}


@pytest.mark.skipif(os.environ.get("PDF_AIRLOCK_DOCKER") != "1", reason="PDF_AIRLOCK_DOCKER=1 not set")
async def test_container_entry_point_in_a_folder_of_impostors(tmp_path: Path) -> None:
    """The image's own entry point and default command: the served folder is its working
    directory (`WORKDIR /data`), mounted read-only from the user's project folder."""
    from test_container import IMAGE_UID, production_flags

    folder, markers = tmp_path / "project", tmp_path / "markers"
    folder.mkdir()
    markers.mkdir()
    plant_impostors(folder, Path("/markers"))
    pdfs.write(folder / "hello.pdf", pdfs.text_pdf(HELLO_PAGES))
    for path in [folder, *folder.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    tmp_path.chmod(0o755)
    os.chown(markers, IMAGE_UID, IMAGE_UID)
    flags = production_flags(folder, f"{markers}:/markers")
    params = StdioServerParameters(command="docker", args=flags, env=dict(os.environ))
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:  # type: ignore[arg-type]
        read = await client.call_tool("pdf_read", {"path": "hello.pdf"})
    assert read.is_error is False, read
    assert [p["text"] for p in read.structured_content["pages"]] == HELLO_PAGES
    assert sorted(m.name for m in markers.iterdir()) == []


@pytest.mark.parametrize(
    ("kind", "args", "sandbox"),
    [
        ("escape", {"attempt": "open_etc_passwd"}, {}),
        ("fault", {"mode": "exit_nonzero"}, {}),
        (
            "pdf_read",
            {"max_chars": 100, "engine": "fast", "pages": None, "password": None},
            {"skip": ["seccomp"]},
        ),
    ],
)
async def test_test_hooks_are_off_unless_switched_on(
    monkeypatch: pytest.MonkeyPatch, kind: str, args: dict[str, object], sandbox: dict[str, object]
) -> None:
    """Without PDF_AIRLOCK_TEST_HOOKS=1 in the server's environment the zygote refuses the
    escape and fault kinds and any request to skip a sandbox layer."""
    from pdf_airlock.server.errors import ToolError
    from pdf_airlock.server.pool.pool import Pool

    monkeypatch.delenv("PDF_AIRLOCK_TEST_HOOKS", raising=False)
    limits = Limits(
        memory_bytes=256 << 20,
        cpu_seconds=2,
        max_input_bytes=1 << 20,
        max_result_bytes=1 << 16,
    )
    fd = os.memfd_create("hooks", os.MFD_CLOEXEC)
    os.write(fd, pdfs.text_pdf(["Hooks off."]))
    try:
        async with Pool(1, 4, 60, 1) as pool:
            with pytest.raises(ToolError) as refused:
                await pool.run(kind, args, fd, limits=limits, deadline_s=5.0, sandbox=sandbox)
            assert refused.value.code == "internal"
            assert "refused" in refused.value.message
            # The same pool still runs an ordinary job.
            plain = {"max_chars": 100, "engine": "fast", "pages": None, "password": None}
            outcome = await pool.run("pdf_read", plain, fd, limits=limits, deadline_s=5.0, sandbox={})
            assert b"Hooks off." in outcome.untrusted_output
    finally:
        os.close(fd)
