"""The trust boundary in the import graph: worker never imports server; server never loads a PDF engine."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

from conftest import PROJECT

PDF_ENGINES = {"pikepdf", "pypdfium2", "pdfminer"}


def imported_modules(package: str) -> set[str]:
    names: set[str] = set()
    for path in (PROJECT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def test_worker_never_imports_server() -> None:
    assert "server" not in imported_modules("worker")


def test_server_source_never_imports_pdf_engines() -> None:
    assert not imported_modules("server") & PDF_ENGINES


def test_supervisor_process_loads_no_pdf_engine() -> None:
    code = (
        "import json, sys; import server.session, server.cli, server.app; "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, cwd=PROJECT, text=True
    )
    loaded = set(json.loads(out.stdout))
    assert "server" in loaded
    assert not loaded & PDF_ENGINES
    assert "worker" not in loaded


def test_both_sides_name_the_same_sandbox_layers() -> None:
    """Each side owns its copy of the layer names (server may not import worker); keep them equal."""
    from server.selftest import LAYERS as SUPERVISOR_LAYERS
    from worker.sandbox import LAYERS as WORKER_LAYERS

    assert SUPERVISOR_LAYERS == WORKER_LAYERS


def test_both_sides_know_the_same_worker_error_codes() -> None:
    from server.errors import CODES as SUPERVISOR_CODES
    from worker.errors import CODES as WORKER_CODES

    assert WORKER_CODES <= SUPERVISOR_CODES
