"""Write server/pdf_airlock/server/mcp/tools_list.json, the ``tools/list`` answer served before the SDK has
loaded (``pdf_airlock.server.mcp.early_tools_list``): ``python scripts/tools_list_snapshot.py`` after changing
a tool's
schema or description. ``tests/protocol/test_handshake.py`` fails while the file is out of date."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pdf_airlock.server.app.calls import App  # noqa: E402
from pdf_airlock.server.config import Settings  # noqa: E402
from pdf_airlock.server.mcp.direct_calls import DirectCalls  # noqa: E402
from pdf_airlock.server.mcp.early_tools_list import SNAPSHOT  # noqa: E402
from pdf_airlock.server.mcp.handshake import HANDSHAKE_VERSIONS  # noqa: E402
from pdf_airlock.server.tools.registry import CATEGORIES, TOOLS  # noqa: E402


def live_answers() -> dict[str, dict[str, Any]]:
    """The direct route's ``tools/list`` result for each handshake-era version."""
    route = DirectCalls(App(Settings(), cast(Any, None)), frozenset(TOOLS), frozenset(CATEGORIES))
    return {version: route.list_result(version) for version in HANDSHAKE_VERSIONS}


def snapshot() -> dict[str, Any]:
    answers = live_answers()
    result = answers[HANDSHAKE_VERSIONS[-1]]
    return {"versions": [v for v, answer in answers.items() if answer == result], "result": result}


def main() -> None:
    SNAPSHOT.write_text(json.dumps(snapshot(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    sys.stderr.write(f"wrote {SNAPSHOT.relative_to(ROOT)}\n")


if __name__ == "__main__":
    main()
