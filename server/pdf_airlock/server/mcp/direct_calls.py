"""A direct route for ``tools/call``: the transport runs the call on the app and writes the
answer itself, without the SDK's message models in between.

Per call the SDK validates the JSON-RPC message into models, builds a request context, checks
the params against the negotiated version's surface, then dumps and re-validates the result on
the way out, which for a one-page answer costs about as much as the parse itself (the direct
route rows of docs/performance.md). The route here takes only requests whose handling it can reproduce
exactly, and leaves every other message to the SDK:

- the session opened with ``initialize`` (answered by ``pdf_airlock.server.mcp.handshake``), so it negotiated
  one of the handshake-era versions (the 2026-07-28 era's per-request envelope stays with the
  SDK);
- ``params`` is exactly ``name`` (a tool of ours), optional ``arguments`` (an object) and an
  optional ``_meta`` holding only a ``progressToken``; the id is an int or printable ASCII.

The answer is the app's ``CallToolResult`` shaped as the SDK shapes it: dumped (``by_alias``,
json mode, ``exclude_none``), then sieved by the negotiated version's surface with the SDK's own
``mcp_types.methods.serialize_server_result`` (fields and key order as that version defines
them). Progress goes out as the SDK's ``notifications/progress``; a request the
client cancels is never answered, as with the SDK. ``tests/protocol/test_direct_calls.py`` compares both
routes on every tool. ``PDF_AIRLOCK_DIRECT_CALLS=0`` turns the route off.

``tools/list`` takes the route too when its ``params`` are absent or hold only a known
``category`` and a ``_meta`` with at most a ``progressToken`` (a ``cursor``, an unknown category
or anything else goes to the SDK): the tools never change while the server runs, so the answer
is made and sieved once per protocol version and category, and served from there (the SDK's
route validates, dumps and sieves every schema on every request).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from pdf_airlock.server.mcp.handshake import HANDSHAKE_VERSIONS, plain_id, plain_meta
from pdf_airlock.server.pool.child_output import ProgressFn

if TYPE_CHECKING:
    from pdf_airlock.server.app.calls import App

__all__ = ["DIRECT_CALLS_ENV", "DIRECT_VERSIONS", "DirectCall", "DirectCalls", "direct_calls_enabled"]

DIRECT_CALLS_ENV: Final = "PDF_AIRLOCK_DIRECT_CALLS"
DIRECT_VERSIONS: Final = frozenset(HANDSHAKE_VERSIONS)
_PARAM_KEYS: Final = frozenset({"name", "arguments", "_meta"})
_LIST_PARAM_KEYS: Final = frozenset({"category", "_meta"})


def direct_calls_enabled() -> bool:
    return os.environ.get(DIRECT_CALLS_ENV, "1") != "0"


@dataclass(frozen=True, slots=True)
class DirectCall:
    """One accepted ``tools/call`` (or ``tools/list``): run it with a progress sender (or None)
    to get the result."""

    request_id: int | str
    progress_token: int | str | None
    run: Callable[[ProgressFn | None], Awaitable[dict[str, Any]]]
    method: str = "tools/call"


class DirectCalls:
    """Accepts the ``tools/call`` and ``tools/list`` requests it can answer exactly as the SDK
    would."""

    def __init__(
        self, app: App, tool_names: frozenset[str], categories: frozenset[str] = frozenset()
    ) -> None:
        """Made once the SDK is loaded (``pdf_airlock.server.mcp.sdk_server``): its sieve is imported here,
        not
        at module load, which the transport's start-up path must not pay for."""
        from mcp_types.methods import serialize_server_result

        self.app = app
        self.tool_names = tool_names
        self.categories = categories
        self.sieve = serialize_server_result
        self._lists: dict[tuple[str, str | None], dict[str, Any]] = {}

    def route(self, message: Any, protocol_version: str | None) -> DirectCall | None:
        if protocol_version not in DIRECT_VERSIONS or not isinstance(message, dict):
            return None
        if message.get("method") == "tools/list":
            return self._list(message, str(protocol_version))
        parsed = self.parse(message)
        if parsed is None:
            return None
        request_id, name, arguments, token = parsed
        app, sieve, version = self.app, self.sieve, str(protocol_version)

        async def run(progress: ProgressFn | None) -> dict[str, Any]:
            result = await app.call_tool(name, arguments, request_id, progress)
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return sieve("tools/call", version, dumped)

        return DirectCall(request_id, token, run)

    def _list(self, message: dict[str, Any], version: str) -> DirectCall | None:
        """A plain ``tools/list``: the answer made for this version and category the first time,
        the same object every time after (never changed: the transport only serializes it)."""
        request_id, params = message.get("id"), message.get("params", {})
        if message.get("jsonrpc") != "2.0" or not plain_id(request_id) or not isinstance(params, dict):
            return None
        category = params.get("category")
        if not params.keys() <= _LIST_PARAM_KEYS or not plain_meta(params.get("_meta", {}))[0]:
            return None
        if category is not None and category not in self.categories:
            return None  # the SDK answers an unknown category with -32602
        result = self.list_result(version, category)

        async def run(_progress: ProgressFn | None, answer: dict[str, Any] = result) -> dict[str, Any]:
            return answer

        return DirectCall(request_id, None, run, "tools/list")

    def list_result(self, version: str, category: str | None = None) -> dict[str, Any]:
        """The ``tools/list`` result for ``version`` and ``category``, made once and kept."""
        result = self._lists.get((version, category))
        if result is None:
            import mcp_types as types

            listed = types.ListToolsResult(tools=self.app.list_tools(category))
            dumped = listed.model_dump(by_alias=True, mode="json", exclude_none=True)
            result = self._lists[version, category] = self.sieve("tools/list", version, dumped)
        return result

    def parse(
        self, message: dict[str, Any]
    ) -> tuple[int | str, str, dict[str, Any], int | str | None] | None:
        """(id, tool name, arguments, progress token) of a plain call to one of our tools."""
        request_id, params = message.get("id"), message.get("params")
        plain = message.get("jsonrpc") == "2.0" and message.get("method") == "tools/call"
        if not plain or not plain_id(request_id) or not isinstance(params, dict):
            return None
        name, arguments = params.get("name"), params.get("arguments")
        if not params.keys() <= _PARAM_KEYS or name not in self.tool_names:
            return None  # the SDK answers an unknown tool with -32602
        meta_ok, token = plain_meta(params.get("_meta", {}))
        if not isinstance(arguments, dict | None) or not meta_ok:
            return None
        return request_id, str(name), dict(arguments or {}), token
