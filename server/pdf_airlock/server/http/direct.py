"""A direct route for ``tools/call`` on the HTTP transport: the transport runs the call on the app
and answers with one JSON body, without the SDK's per-message dispatch in between.

Per call the SDK validates the POST's JSON-RPC message into models, hands it through memory
streams to the session's dispatcher, builds a request context, runs its middleware (an
OpenTelemetry span), validates the params against the negotiated version's surface, then dumps
and re-validates the result on its way back through the streams to the POST. The route here is
stdio's (``pdf_airlock.server.mcp.direct_calls``) on HTTP, and takes only the requests whose
handling it reproduces exactly; everything else stays with the SDK:

- the session's ``initialize`` has been accepted by the SDK (``SessionWatch`` below keeps its
  ``ServerSession``, whose negotiated version and client capabilities are read live), and the
  negotiated version is one the direct route knows;
- the message is a plain ``tools/call`` of one of our tools (``DirectCalls.parse``: ``name``,
  ``arguments``, ``_meta``) asking no progress (no ``progressToken``: progress needs the SSE
  stream);
- the call cannot need the human (``Approvals.may_ask``): approvals are off for it, or the
  client declared no elicitation (then the policy's fallback decides, as on the SDK's route).

The call runs through ``Admission.run`` as on the SDK's route (principal, its roots, rate and
concurrency, approvals, audit, metrics); the result is dumped and sieved by the negotiated
version's surface with the SDK's own ``serialize_server_result``, as the SDK does.
``tests/protocol/test_http_direct.py`` compares both routes byte for byte. The ``direct`` rows of
``bench/perf/http_load.py`` measure it; ``PDF_AIRLOCK_DIRECT_CALLS=0`` turns it off, with stdio's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.session import ServerSession
from mcp_types import RequestId
from starlette.requests import Request

from pdf_airlock.server.http.admission import Admission
from pdf_airlock.server.mcp.direct_calls import DIRECT_VERSIONS, DirectCalls

__all__ = ["SESSION_SLOT", "DirectCall", "DirectRoute", "SessionSlot", "SessionWatch"]

SESSION_SLOT = "pdf_airlock.session_slot"  # the ASGI scope key of a POST's ``SessionSlot``


class SessionSlot:
    """Where one MCP session's ``ServerSession`` is kept once the SDK has run its ``initialize``
    (the transport puts its slot on each POST's scope; ``SessionWatch`` fills it)."""

    __slots__ = ("session",)

    def __init__(self) -> None:
        self.session: ServerSession | None = None


class SessionWatch:
    """A ``Server.middleware`` entry: on ``initialize``, keeps the request's ``ServerSession`` in
    the slot its transport put on the HTTP request. The SDK's own state of the connection (the
    negotiated version, the client's capabilities, whether ``initialize`` was accepted) is then
    read through it, never copied."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method == "initialize" and isinstance(ctx.request, Request):
            slot = ctx.request.scope.get(SESSION_SLOT)
            if isinstance(slot, SessionSlot):
                slot.session = ctx.session
        return await call_next(ctx)


@dataclass(frozen=True, slots=True)
class DirectCall:
    """One accepted ``tools/call``: ``run(request)`` gives its JSON-RPC ``result``."""

    request_id: RequestId
    run: Callable[[Request], Awaitable[dict[str, Any]]]


class DirectRoute:
    """Accepts the ``tools/call`` requests of an initialized session it can answer exactly as
    the SDK would."""

    def __init__(self, direct: DirectCalls, calls: Admission) -> None:
        self.direct = direct
        self.calls = calls

    def route(self, message: Any, session: ServerSession | None) -> DirectCall | None:
        """The call ``message`` is, if this route takes it; None leaves it to the SDK."""
        if session is None or session.client_params is None:
            return None  # no initialize accepted yet: the SDK answers (its init gate)
        version = session.protocol_version
        if version not in DIRECT_VERSIONS:
            return None
        parsed = self.direct.parse(message)
        if parsed is None:
            return None
        request_id, name, arguments, token = parsed
        if token is not None or self.calls.approvals.may_ask(name, arguments, session):
            return None
        calls, sieve = self.calls, self.direct.sieve

        async def run(request: Request) -> dict[str, Any]:
            result = await calls.run(request, request_id, name, arguments, asker=None, progress=None)
            dumped = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return sieve("tools/call", version, dumped)

        return DirectCall(request_id, run)
