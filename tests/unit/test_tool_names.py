"""A tool lives in its declaration: its name appears in few source modules.

Each tool is a server module (``pdf_airlock.server.tools.<name>``) and a worker parser
(``pdf_airlock.worker.parsers.<name>``); every table that lists tools (scopes, approvals, batch
defaults, the handshake's instructions, the warm-up, the seccomp workload, the tests' lists) is
derived from the registries, so nothing else needs to spell a tool's name. Counted as
``grep -rlw NAME server worker scripts --include=*.py`` counts it: the source modules whose text
holds the name as a whole word (comments and docstrings included: a name there is one more place
to change when the tool changes). At the median a name is in at most ``MEDIAN_MODULES`` modules
(its two), and no name is in more than ``MAX_MODULES`` (its two and a couple of justified
others, such as the two-ended read's own module).
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Final

from conftest import PROJECT

from pdf_airlock.server.tools.registry import TOOLS

MEDIAN_MODULES: Final = 2
MAX_MODULES: Final = 4
SOURCE_FOLDERS: Final = ("server", "worker", "scripts")


def _sources() -> dict[Path, str]:
    return {
        path: path.read_text(encoding="utf-8", errors="replace")
        for folder in SOURCE_FOLDERS
        for path in sorted((PROJECT / folder).rglob("*.py"))
    }


def modules_naming() -> dict[str, list[str]]:
    """Tool name -> the source modules that hold it as a whole word (grep's ``-w``: a word is
    letters, digits and underscores)."""
    sources = _sources()
    found = {}
    for name in TOOLS:
        word = re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")
        found[name] = [str(path.relative_to(PROJECT)) for path, text in sources.items() if word.search(text)]
    return found


def _table(found: dict[str, list[str]], names: list[str]) -> str:
    return "\n".join(f"{name}: {len(found[name])}: {', '.join(found[name])}" for name in names)


def test_a_tool_name_is_in_two_modules_at_the_median() -> None:
    found = modules_naming()
    median = statistics.median(len(modules) for modules in found.values())
    over = sorted((name for name in found if len(found[name]) > MEDIAN_MODULES), key=lambda n: -len(found[n]))
    assert median <= MEDIAN_MODULES, f"median {median} modules a tool name:\n{_table(found, over)}"


def test_no_tool_name_is_in_more_than_four_modules() -> None:
    found = modules_naming()
    over = sorted((name for name in found if len(found[name]) > MAX_MODULES), key=lambda n: -len(found[n]))
    assert not over, f"tool names in more than {MAX_MODULES} source modules:\n{_table(found, over)}"


def test_every_tool_name_is_found_in_its_own_modules() -> None:
    """The count above finds what it counts: each name is in its server module and its parser."""
    found = modules_naming()
    for name, modules in found.items():
        short = name.removeprefix("pdf_")
        assert f"server/pdf_airlock/server/tools/{short}.py" in modules, name
        assert f"worker/pdf_airlock/worker/parsers/{short}.py" in modules, name
