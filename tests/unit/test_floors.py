"""The floors of the code, declared once: each half of ``pdf_airlock`` is a stack of rooms
(subpackages or top-level modules), and a module imports only from its own room or a lower
floor. Rooms of one floor never import each other (the transports are peers), and no module
imports itself back through a chain of imports, lazy imports inside functions included.

The walk reads the source (AST), so an import inside a function, under ``TYPE_CHECKING`` or
behind a condition counts as much as one at the top: a circle dodged by a lazy import is still
a circle. docs/architecture.md draws the same floors.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import pytest

PROJECT = Path(__file__).resolve().parents[2]

# Top floor first. A name is a subpackage or a top-level module of the half.
FLOORS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "server": (
        ("__main__",),  # python -m pdf_airlock.server
        ("cli",),  # the console script
        ("stdio", "http", "batch"),  # the front ends: two transports and the pipeline stage
        ("mcp",),  # the protocol both transports use
        ("app",),  # one call, whatever the transport: calls, policy, approvals, audit, cache
        ("tools",),  # each tool's declaration
        ("pool",),  # the zygote, its children and the sandbox probe
        ("boundary",),  # what may be read and what may be passed on
        ("config", "errors", "log", "__init__"),
    ),
    "worker": (
        ("zygote",),
        ("child", "warmup"),
        ("probe",),
        ("parsers", "testing"),
        ("pdf",),
        ("sandbox", "cmaps", "fonts", "hugepages", "progress", "strict_loads", "deadline"),
        ("memory",),  # libc's mmap at raw addresses; the zygote's ctypes callbacks sealed
        ("contract", "__init__"),
    ),
}


def _modules(side: str) -> dict[str, Path]:
    root = PROJECT / side / "pdf_airlock" / side
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join((f"pdf_airlock.{side}", *parts))] = path
    return found


def _imports(path: Path, module: str, known: dict[str, Path]) -> Iterator[tuple[str, int]]:
    """Every module of the same half that ``path`` imports, anywhere in the file."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], base])
                base = base.rstrip(".")
            candidates = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        for candidate in candidates:
            # The deepest known module the name names (``a.b.c`` may be module ``a.b``'s name c).
            name = candidate
            while name and name not in known:
                name = name.rpartition(".")[0]
            if name and name != module and not module.startswith(name + "."):
                yield name, node.lineno


def _room(side: str, module: str) -> str:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else "__init__"


def _floor_of(side: str) -> dict[str, int]:
    return {room: level for level, rooms in enumerate(FLOORS[side]) for room in rooms}


@pytest.mark.parametrize("side", sorted(FLOORS))
def test_every_room_is_on_a_floor(side: str) -> None:
    rooms = {_room(side, module) for module in _modules(side)}
    assert rooms == set(_floor_of(side)), "declare each room in FLOORS exactly once"


@pytest.mark.parametrize("side", sorted(FLOORS))
def test_imports_only_go_down(side: str) -> None:
    known = _modules(side)
    floor = _floor_of(side)
    upward = []
    for module, path in known.items():
        room = _room(side, module)
        for target, line in _imports(path, module, known):
            other = _room(side, target)
            if other != room and floor[other] <= floor[room]:
                upward.append(f"{path.relative_to(PROJECT)}:{line} ({room}) imports {target} ({other})")
    assert not upward, "imports that do not go down a floor:\n" + "\n".join(upward)


@pytest.mark.parametrize("side", sorted(FLOORS))
def test_no_import_circles(side: str) -> None:
    known = _modules(side)
    graph = {
        module: sorted({target for target, _ in _imports(path, module, known)})
        for module, path in known.items()
    }
    # A package's __init__ importing its own modules is how a package is built, not a circle.
    for module, targets in graph.items():
        graph[module] = [target for target in targets if not target.startswith(module + ".")]
    circles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in graph[module]:
            if state.get(target) == 1:
                circles.append(" -> ".join([*path[path.index(target) :], target]))
            elif target not in state:
                visit(target, [*path, target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not circles, "import circles:\n" + "\n".join(circles)
