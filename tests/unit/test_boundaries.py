"""The trust boundary in the import graph.

The supervisor (``pdf_airlock.server``, in server/) never imports a PDF engine and imports nothing
of the worker half but its contract module (``pdf_airlock.worker.contract``: job kinds, error
codes, line formats); the worker half (``pdf_airlock.worker``, in worker/) never imports the
supervisor.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

from conftest import PROJECT

PDF_ENGINES = {"pikepdf", "pypdfium2", "pdfminer", "lxml", "PIL"}
SERVER_SOURCE = PROJECT / "server" / "pdf_airlock" / "server"
WORKER_SOURCE = PROJECT / "worker" / "pdf_airlock" / "worker"
CONTRACT = "pdf_airlock.worker.contract"


def imported_modules(folder: Path) -> set[str]:
    """Every absolute module name the source under ``folder`` imports (lazy imports included)."""
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _under(names: set[str], package: str) -> set[str]:
    return {name for name in names if name == package or name.startswith(package + ".")}


def test_worker_never_imports_server() -> None:
    assert not _under(imported_modules(WORKER_SOURCE), "pdf_airlock.server")


def test_server_imports_only_the_contract_from_the_worker() -> None:
    crossing = _under(imported_modules(SERVER_SOURCE), "pdf_airlock.worker")
    # "from pdf_airlock.worker.contract import X" also names "pdf_airlock.worker.contract.X".
    assert {name for name in crossing if not name.startswith(CONTRACT)} == set()
    assert CONTRACT in crossing


def test_no_relative_imports() -> None:
    """Absolute imports only, so the import path always shows which half a module belongs to."""
    for folder in (SERVER_SOURCE, WORKER_SOURCE):
        for path in folder.rglob("*.py"):
            relative = [
                n for n in ast.walk(ast.parse(path.read_text())) if isinstance(n, ast.ImportFrom) and n.level
            ]
            assert not relative, path


def test_server_source_never_imports_pdf_engines() -> None:
    assert not {name.split(".")[0] for name in imported_modules(SERVER_SOURCE)} & PDF_ENGINES


def test_supervisor_process_loads_no_pdf_engine() -> None:
    code = (
        "import json, sys; import pdf_airlock.server.stdio.startup, pdf_airlock.server.cli.main; "
        "import pdf_airlock.server.app.calls, pdf_airlock.server.tools.registry; "
        "import pdf_airlock.server.batch.run; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-c", code], capture_output=True, check=True, cwd="/", text=True
    )
    loaded = set(json.loads(out.stdout))
    assert "pdf_airlock.server.tools.registry" in loaded
    assert not {name.split(".")[0] for name in loaded} & PDF_ENGINES
    assert _under(loaded, "pdf_airlock.worker") <= {"pdf_airlock.worker", CONTRACT}
