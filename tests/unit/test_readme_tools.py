"""The README's tool table and examples cannot drift from the registry.

Every registered tool has a row in the README's table of tools and a ``pdf-airlock call`` example
whose arguments the tool's own input model accepts; the table names no tool that is not
registered. (tests/protocol/test_readme.py runs the examples for real; this is the fast check
that a new or renamed tool, or a renamed argument, shows up here at once.)
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Final

from conftest import PROJECT

from pdf_airlock.server.tools.registry import TOOLS

README: Final = PROJECT / "README.md"
TABLE_ROW: Final = re.compile(r"^\| `(pdf_\w+)` \|", re.MULTILINE)
CALL: Final = re.compile(r"^(?:\.venv/bin/)?pdf-airlock call (pdf_\w+) .*$", re.MULTILINE)


def _examples(text: str) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for match in CALL.finditer(text):
        argv = shlex.split(match.group(0))
        arguments = json.loads(argv[argv.index("--json") + 1]) if "--json" in argv else {}
        found.setdefault(match.group(1), []).append(arguments)
    return found


def test_every_tool_has_a_row_in_the_readme_table() -> None:
    rows = TABLE_ROW.findall(README.read_text())
    assert sorted(rows) == sorted(TOOLS), "the README's table of tools and the registry differ"


def test_every_tool_has_a_readme_example_its_input_model_accepts() -> None:
    examples = _examples(README.read_text())
    assert set(TOOLS) <= set(examples), f"no README example for {sorted(set(TOOLS) - set(examples))}"
    assert set(examples) <= set(TOOLS), (
        f"README examples of unknown tools {sorted(set(examples) - set(TOOLS))}"
    )
    for name, calls in examples.items():
        for arguments in calls:
            TOOLS[name].input_model.model_validate(arguments)  # raises on a drifted argument


def test_every_declared_example_is_valid() -> None:
    """A tool's ``example`` (the tests' arguments for it) is accepted by its input model."""
    for spec in TOOLS.values():
        spec.input_model.model_validate({"path": "x.pdf", **spec.example})
