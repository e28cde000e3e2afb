"""The MCP SDK side of the session: the SDK's low-level ``Server`` wired to our app and tools.

Imported in the background while the transport already serves the opening handshake (see
``pdf_airlock.server.mcp.handshake``): everything that loads the ``mcp`` SDK or the tool models lives here.
The SDK runs the protocol (``initialize`` handshake for 2024-11-05 .. 2025-11-25 and the 2026-07-28
``server/discover`` era, ``ping``, cancellation). Tool errors are results with ``isError``; an unknown tool
name is a JSON-RPC ``-32602`` error as the MCP spec asks.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from pdf_airlock.server import __version__
from pdf_airlock.server.app.calls import App
from pdf_airlock.server.app.policy import Approval
from pdf_airlock.server.config import Settings
from pdf_airlock.server.mcp.direct_calls import DirectCalls
from pdf_airlock.server.mcp.handshake import INSTRUCTIONS, SERVER_NAME, SERVER_TITLE
from pdf_airlock.server.pool.child_output import ProgressFn
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.tools.registry import CATEGORIES, TOOLS

__all__ = ["CallFn", "approval_call", "build_app", "build_server", "direct_calls", "run"]

# How a transport runs one call: (request context, tool, arguments, progress) -> result. The HTTP
# transport's adds the principal, its policy and approvals (``pdf_airlock.server.http.admission``).
_STDIO_PRINCIPAL = "stdio"
CallFn = Callable[
    [ServerRequestContext[Any], str, dict[str, Any], ProgressFn | None], Awaitable[types.CallToolResult]
]


def build_server(app: App, call: CallFn | None = None) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        # An optional, non-standard `category` parameter narrows the list (text, structure, ...).
        category = (ctx.params or {}).get("category")
        if category is not None and category not in CATEGORIES:
            raise MCPError(types.INVALID_PARAMS, f"unknown category; use one of {', '.join(CATEGORIES)}")
        return types.ListToolsResult(tools=app.list_tools(category))

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in TOOLS:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name[:100]}", {"tools": list(TOOLS)})
        progress = None
        if ctx.meta is not None and ctx.meta.get("progress_token") is not None:

            async def progress(done: int, total: int) -> None:
                await ctx.session.report_progress(done, total, f"page {done} of {total}")

        if call is not None:
            return await call(ctx, params.name, dict(params.arguments or {}), progress)
        return await app.call_tool(params.name, dict(params.arguments or {}), ctx.request_id, progress)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        title=SERVER_TITLE,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    return server


def build_app(settings: Settings, pool: Pool) -> App:
    return App(settings, pool)


def direct_calls(app: App) -> DirectCalls:
    """The transport's direct ``tools/call`` and ``tools/list`` route to the same app
    (``pdf_airlock.server.mcp.direct_calls``)."""
    return DirectCalls(app, frozenset(TOOLS), frozenset(CATEGORIES))


def approval_call(app: App, approval: Approval) -> CallFn:
    """Calls that ask the human before risky actions (``pdf_airlock.server.app.approvals``): the
    stdio session with ``--policy``'s ``[approval]`` table. One client: one principal, one session."""
    from pdf_airlock.server.app.approvals import Approvals

    approvals = Approvals(app, approval)

    async def call(
        ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any], progress: ProgressFn | None
    ) -> types.CallToolResult:
        gate = approvals.gate(ctx.session, ctx.request_id, _STDIO_PRINCIPAL, "")
        return await app.call_tool(name, arguments, ctx.request_id, progress, gate=gate)

    return call


async def run(
    app: App,
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
    write_stream: MemoryObjectSendStream[SessionMessage],
    approval: Approval | None = None,
) -> None:
    """Serve the protocol over the transport's stream pair until the client's input ends."""
    server = build_server(app, approval_call(app, approval) if approval is not None else None)
    await server.run(read_stream, write_stream, server.create_initialization_options())
