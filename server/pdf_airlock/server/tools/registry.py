"""The tools this server publishes: every module of ``pdf_airlock.server.tools`` that declares
``TOOL = ToolSpec(...)``, listed by rank.

Nothing lists the tools by hand: adding a module with a ``TOOL`` adds the tool (its worker half
is ``pdf_airlock.worker.parsers.<same name>``; tests/unit/test_layout.py checks the two match).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Final

import pdf_airlock.server.tools as tools_package
from pdf_airlock.server.tools.base import CATEGORIES, ToolSpec

__all__ = ["CATEGORIES", "TOOLS", "ToolSpec", "tool_modules"]


def tool_modules() -> dict[str, ToolSpec]:
    """Module name -> the ``TOOL`` it declares, for every tool module of the package."""
    found: dict[str, ToolSpec] = {}
    for module_info in pkgutil.iter_modules(tools_package.__path__):
        module = importlib.import_module(f"{tools_package.__name__}.{module_info.name}")
        spec = getattr(module, "TOOL", None)
        if isinstance(spec, ToolSpec):
            found[module_info.name] = spec
    return found


TOOLS: Final[dict[str, ToolSpec]] = {
    spec.name: spec for spec in sorted(tool_modules().values(), key=lambda spec: spec.rank)
}
