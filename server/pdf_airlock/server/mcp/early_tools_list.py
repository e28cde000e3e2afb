"""``tools/list`` answered before the MCP SDK has loaded, from a snapshot of the SDK's answer.

A client lists the tools right after the handshake, and the SDK (with the tool models) takes most of a second
more to import (``pdf_airlock.server.mcp.handshake``). ``tools_list.json`` beside this module holds the answer
the direct route (``pdf_airlock.server.mcp.direct_calls``) makes: the ``ListToolsResult`` dumped and sieved by
the SDK for each handshake-era version it lists (the same for all of them). It is written by ``python
scripts/tools_list_snapshot.py`` and checked against the live answer by
``tests/protocol/test_handshake.py``; once the SDK has loaded, the transport checks it too and
logs ``early_tools_list_mismatch`` (and stops using it) if it ever differs. Only a plain request
is answered here: no ``params``, or an empty object, or only a ``_meta`` with at most a
``progressToken``; a ``category`` or a ``cursor`` waits for the SDK. Imports nothing heavy.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Final

from pdf_airlock.server.mcp.handshake import plain_id, plain_meta

__all__ = ["SNAPSHOT", "early_tools_list", "load_snapshot"]

SNAPSHOT: Final = Path(__file__).with_name("tools_list.json")


def load_snapshot() -> dict[str, Any]:
    """``{"versions": [...], "result": {...}}``; empty when the file is missing or unreadable."""
    try:
        loaded = json.loads(SNAPSHOT.read_bytes())
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _plain(message: Any) -> bool:
    if not isinstance(message, dict) or message.get("method") != "tools/list":
        return False
    params = message.get("params", {})
    if message.get("jsonrpc") != "2.0" or not plain_id(message.get("id")) or not isinstance(params, dict):
        return False
    return params.keys() <= {"_meta"} and plain_meta(params.get("_meta", {}))[0]


def early_tools_list(message: Any, version: str | None, snapshot: dict[str, Any]) -> bytes | None:
    """The response body for a plain ``tools/list`` on a session of ``version``, serialised as
    the SDK's path serialises it; None to leave the request to the SDK."""
    if not snapshot or version not in snapshot.get("versions", ()) or not _plain(message):
        return None
    response = {"jsonrpc": "2.0", "id": message["id"], "result": snapshot["result"]}
    return json.dumps(response, separators=(",", ":"), ensure_ascii=False).encode()
