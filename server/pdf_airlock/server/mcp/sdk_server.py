"""The MCP SDK side of the session: the SDK's low-level ``Server`` wired to our app and tools.

Imported in the background while the transport already serves the opening handshake (see
``pdf_airlock.server.mcp.handshake``): everything that loads the ``mcp`` SDK or the tool models lives here.
The SDK runs the protocol (``initialize`` handshake for 2024-11-05 .. 2025-11-25 and the 2026-07-28
``server/discover`` era, ``ping``, cancellation). Tool errors are results with ``isError``; an unknown tool
name is a JSON-RPC ``-32602`` error as the MCP spec asks. A call that needs the client's input in the
2026-07-28 era (a human's approval) answers with its ``InputRequiredResult``. Resources, the prompt and
completions: ``pdf_airlock.server.mcp.handlers``.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from pdf_airlock.server import __version__
from pdf_airlock.server.app.calls import App, InputRequired
from pdf_airlock.server.app.policy import Approval
from pdf_airlock.server.config import Settings
from pdf_airlock.server.mcp.direct_calls import DirectCalls
from pdf_airlock.server.mcp.handlers import CACHE_HINTS, Access, CallFn, Handlers, StdioAccess
from pdf_airlock.server.mcp.handshake import INSTRUCTIONS, SERVER_ICONS, SERVER_NAME, SERVER_TITLE
from pdf_airlock.server.pool.child_output import ProgressFn
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.tools.registry import CATEGORIES, TOOLS

__all__ = ["CallFn", "approval_call", "build_app", "build_server", "direct_calls", "run"]

_STDIO_PRINCIPAL = ""  # stdio's one client (approvals, delivered answers)


def build_server(app: App, call: CallFn | None = None, access: Access | None = None) -> Server[Any]:
    """The SDK server of ``app``: ``call`` runs a tool for a transport's caller (default: the app
    itself), ``access`` names the caller and their roots (default: stdio's one client)."""

    async def plain_call(
        ctx: ServerRequestContext[Any], name: str, arguments: dict[str, Any], progress: ProgressFn | None
    ) -> types.CallToolResult:
        return await app.call_tool(name, arguments, ctx.request_id, progress)

    run_call = call or plain_call
    handlers = Handlers(app, access or StdioAccess(app), run_call)

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
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name not in TOOLS:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name[:100]}", {"tools": list(TOOLS)})
        progress = None
        if ctx.meta is not None and ctx.meta.get("progress_token") is not None:

            async def progress(done: int, total: int) -> None:
                await ctx.session.report_progress(done, total, f"page {done} of {total}")

        try:
            return await run_call(ctx, params.name, dict(params.arguments or {}), progress)
        except InputRequired as needed:  # a 2026-07-28 approval: the question, and a call again
            return needed.result

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        title=SERVER_TITLE,
        instructions=INSTRUCTIONS,
        icons=[types.Icon.model_validate(icon) for icon in SERVER_ICONS],
        cache_hints=CACHE_HINTS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=handlers.list_resources,
        on_list_resource_templates=handlers.list_templates,
        on_read_resource=handlers.read_resource,
        on_list_prompts=handlers.list_prompts,
        on_get_prompt=handlers.get_prompt,
        on_completion=handlers.complete,
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
        gate = approvals.gate(approvals.asker(ctx, _STDIO_PRINCIPAL), _STDIO_PRINCIPAL, "")
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
