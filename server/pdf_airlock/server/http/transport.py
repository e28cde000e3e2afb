"""The SDK's Streamable HTTP transport, answering a request with one JSON body when nothing but
its response has to go out.

The spec lets the server choose, per POST, between an ``application/json`` answer and an SSE
stream. The SDK chooses once per server (``json_response``): SSE always, which costs a stream,
its task group and a keep-alive pinger per call, and, since the client stops reading once the
response event is in, a new TCP connection per call. JSON always would lose progress and
elicitation (the call's own channel for server-to-client messages). ``LazyJsonTransport``
chooses per request, from the first message the server has for it:

- the response itself, within ``JSON_HOLD_S``: one JSON body (the connection stays open for the
  next request);
- anything else first (a progress notification, an ``elicitation/create``), or nothing within
  ``JSON_HOLD_S``: the SSE stream the SDK would have sent, starting with that message (a slow
  call keeps the stream's keep-alive pings).

Only a plain request (not ``initialize``) on a session without an event store takes this path;
every other POST, and every GET and DELETE, is the SDK's. The request is checked exactly as the
SDK checks it (``Accept``, ``Content-Type``, the JSON-RPC model, the session) before it is
dispatched. The ``Streamable HTTP`` rows of ``bench/perf/http_load.py`` measure it.

Before that, a ``tools/call`` the direct route takes (``pdf_airlock.server.http.direct``) is run
here on the app, after the same checks, and answered with one JSON body; the SDK's session never
sees it. It is cancelled, as the SDK's dispatcher cancels a call, by a ``notifications/cancelled``
naming its id (the notification still goes on to the SDK, which answers it), and also when the
client goes away or the session ends; a call cancelled by the client is answered with the SDK's
``Request cancelled`` error. Requests are keyed as the SDK keys them (``coerce_request_id``); an
id already in flight goes to the SDK.

The SDK's private methods overridden or called here, all of ``StreamableHTTPServerTransport``
(``mcp`` 2.3): ``_handle_post_request`` (overridden, falling back to the SDK's),
``_validate_request_headers``, ``_check_content_type``, ``_get_session_id``, ``_create_session_message``,
``_create_json_response``, ``_create_error_response``, ``_create_event_data``,
``_clean_up_memory_streams``, ``_run_sse_writer``, and the attributes ``_read_stream_writer``,
``_request_streams``, ``_sse_stream_writers``, ``_event_store``; of the session manager,
``_admit_session``, ``_discard_session``, ``_handle_request`` (served without the SDK's body
middleware) and ``_server_instances``/``_session_owners``.
``tests/protocol/test_http_transport.py`` checks they are all still there, with the signatures used here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from dataclasses import dataclass, field
from functools import partial
from http import HTTPStatus
from typing import Any, Final
from uuid import uuid4

import anyio
import pydantic_core
import structlog
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import (
    CONTENT_TYPE_SSE,
    MCP_SESSION_ID_HEADER,
    REQUEST_CANCELLED,
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    SSEEvent,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params, handler_exception_to_error_data
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from pdf_airlock.server.http.direct import SESSION_SLOT, DirectCall, DirectRoute, SessionSlot
from pdf_airlock.server.http.events import EventBudget, SessionEvents
from pdf_airlock.server.http.quotas import PrincipalSessions

__all__ = ["JSON_HOLD_S", "LazyJsonTransport", "SessionManager"]

logger = logging.getLogger(__name__)
log = structlog.get_logger(__name__)

JSON_HOLD_S: Final = 1.0  # past this without a message, the answer becomes an SSE stream
_INITIALIZE: Final = "initialize"
_CANCELLED: Final = "notifications/cancelled"
_UNUSABLE: Final = object()  # a body neither route of this transport takes: the SDK answers it
_SESSION_ENDED: Final = "Session terminated before the request completed"  # the SDK's words


@dataclass(slots=True)
class _Running:
    """A direct call in flight: its scope, and why it was cancelled."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    cancelled: bool = False  # by the client's notifications/cancelled
    gone: bool = False  # the client closed the connection
    ended: bool = False  # the session ended


class LazyJsonTransport(StreamableHTTPServerTransport):
    """One session's transport: direct calls, JSON for a request answered at once, SSE otherwise."""

    def __init__(self, *args: Any, direct: DirectRoute | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.direct = direct
        self.slot = SessionSlot()
        self._direct_calls: dict[RequestId, _Running] = {}

    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        scope[SESSION_SLOT] = self.slot
        raw = await self._json_body(request)
        direct = raw is not _UNUSABLE and self.direct is not None
        if direct and await self._direct_route(scope, request, receive, send, raw):
            return
        message = self._plain_request(raw)
        if message is None:
            await super()._handle_post_request(scope, request, receive, send)
            return
        if not await self._validate_request_headers(request, send):
            return
        await self._or_500(scope, receive, send, self._answer(scope, request, receive, send, message))

    async def _or_500(self, scope: Scope, receive: Receive, send: Send, answer: Awaitable[None]) -> None:
        """Run ``answer``; a failure is logged and answered 500, as the SDK answers a POST it fails."""
        try:
            await answer
        except Exception:
            logger.exception("Error handling POST request")
            response = self._create_error_response(
                "Error handling POST request", HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR
            )
            await response(scope, receive, send)

    async def _json_body(self, request: Request) -> Any:
        """The POST's JSON, or ``_UNUSABLE`` for the SDK's path (which also answers every
        malformed POST). The body is read once; the SDK's path reuses it."""
        if self._event_store is not None or self.is_json_response_enabled:
            return _UNUSABLE
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse and self._check_content_type(request)):
            return _UNUSABLE
        try:
            return pydantic_core.from_json(await request.body())
        except ValueError:
            return _UNUSABLE

    def _plain_request(self, raw: Any) -> JSONRPCRequest | None:
        """The request this transport answers itself (JSON or SSE), or None for the SDK's path."""
        if raw is _UNUSABLE:
            return None
        try:
            message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
        except ValidationError:
            return None
        if not isinstance(message, JSONRPCRequest) or message.method == _INITIALIZE:
            return None
        return message

    # -- the direct route ------------------------------------------------------------------

    async def _direct_route(
        self, scope: Scope, request: Request, receive: Receive, send: Send, raw: Any
    ) -> bool:
        """Run ``raw`` on the direct route if it takes it (then True: answered here)."""
        assert self.direct is not None
        if isinstance(raw, dict) and raw.get("method") == _CANCELLED and "id" not in raw:
            self._cancel_direct(request, raw)
            return False  # the SDK answers the notification (202) and forwards it as ever
        call = self.direct.route(raw, self.slot.session)
        if call is None:
            return False
        key = coerce_request_id(call.request_id)
        if key in self._direct_calls or str(call.request_id) in self._request_streams:
            return False  # the id is in flight: the SDK's way with a repeated id
        _forget_body(request)  # answered here: the parsed call is all that is needed of it
        if not await self._validate_request_headers(request, send):
            return True
        log.debug("tool_call_direct", id=call.request_id)
        await self._or_500(scope, receive, send, self._run_direct(scope, request, receive, send, call))
        return True

    async def _run_direct(
        self, scope: Scope, request: Request, receive: Receive, send: Send, call: DirectCall
    ) -> None:
        """One direct call, its answer written as the SDK's route writes it."""
        key = coerce_request_id(call.request_id)
        running = self._direct_calls[key] = _Running()
        answer: JSONRPCResponse | JSONRPCError | None = None
        # A bare asyncio task, not an anyio task group: uvicorn runs on asyncio, and a group's
        # start and cancellation cost more server CPU than the rest of the route (the direct
        # row of bench/perf/http_load.py). It only ever cancels ``running.scope``.
        watcher = asyncio.get_running_loop().create_task(self._watch_client(receive, running))
        try:
            with running.scope:
                try:
                    result = await call.run(request)
                    answer = JSONRPCResponse(jsonrpc="2.0", id=call.request_id, result=result)
                except Exception as exc:  # what the SDK's dispatcher answers for a handler's raise
                    error = handler_exception_to_error_data(exc)
                    if error is None:
                        logger.exception("handler for 'tools/call' raised")
                        error = ErrorData(code=0, message=str(exc))
                    answer = JSONRPCError(jsonrpc="2.0", id=call.request_id, error=error)
        finally:
            watcher.cancel()
            if self._direct_calls.get(key) is running:
                del self._direct_calls[key]
        if running.gone:
            return
        if running.ended:
            response = self._create_error_response(
                _SESSION_ENDED, HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR
            )
            await response(scope, receive, send)
            return
        if running.cancelled or answer is None:  # never answered: the SDK's settle-unanswered error
            cancelled = ErrorData(code=REQUEST_CANCELLED, message="Request cancelled")
            answer = JSONRPCError(jsonrpc="2.0", id=call.request_id, error=cancelled)
        await self._create_json_response(answer)(scope, receive, send)

    @staticmethod
    async def _watch_client(receive: Receive, running: _Running) -> None:
        """Cancel the call when the client goes away (the body is read: the next ASGI message
        of this request is its disconnect)."""
        while (await receive())["type"] != "http.disconnect":
            pass
        running.gone = True
        running.scope.cancel()

    def _cancel_direct(self, request: Request, raw: dict[str, Any]) -> None:
        """A ``notifications/cancelled`` of this session naming a direct call cancels it, as the
        SDK's dispatcher cancels the calls it runs."""
        if self._get_session_id(request) != self.mcp_session_id:
            return
        try:
            notification = jsonrpc_message_adapter.validate_python(raw, by_name=False)
        except ValidationError:
            return
        if not isinstance(notification, JSONRPCNotification):
            return
        request_id = cancelled_request_id_from_params(notification.params)
        running = self._direct_calls.get(coerce_request_id(request_id)) if request_id is not None else None
        if running is not None:
            running.cancelled = True
            running.scope.cancel()

    async def terminate(self) -> None:
        """The SDK's, and the direct calls in flight end as the SDK's calls do with the session."""
        for running in list(self._direct_calls.values()):
            running.ended = True
            running.scope.cancel()
        await super().terminate()

    # -- the SDK's dispatch, answered in JSON when it can be -----------------------------

    async def _answer(
        self, scope: Scope, request: Request, receive: Receive, send: Send, message: JSONRPCRequest
    ) -> None:
        writer = self._read_stream_writer
        if writer is None:  # pragma: no cover - connect() runs before any request
            raise RuntimeError("the transport is not connected")
        request_id = str(message.id)
        streams = anyio.create_memory_object_stream[EventMessage](REQUEST_STREAM_BUFFER_SIZE)
        self._request_streams[request_id] = streams
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
        await writer.send(self._create_session_message(message, request, request_id, version))
        first: EventMessage | None = None
        # anyio hands an item only to a receiver with no cancellation pending, and cancels no task
        # whose wait is already over: the deadline cannot lose the first message.
        with anyio.move_on_after(JSON_HOLD_S):
            try:
                first = await streams[1].receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                await self._clean_up_memory_streams(request_id)
                response = self._create_error_response(
                    "Session terminated before the request completed",
                    HTTPStatus.INTERNAL_SERVER_ERROR,
                    INTERNAL_ERROR,
                )
                await response(scope, receive, send)
                return
        if first is not None and isinstance(first.message, JSONRPCResponse | JSONRPCError):
            await self._clean_up_memory_streams(request_id)
            await self._create_json_response(first.message)(scope, receive, send)
            return
        opening = self._create_event_data(first) if first is not None else None
        await self._stream(scope, receive, send, request_id, opening)

    async def _stream(
        self, scope: Scope, receive: Receive, send: Send, request_id: str, opening: SSEEvent | None
    ) -> None:
        """The SDK's SSE answer for this request, ``opening`` first."""
        sse_writer, sse_reader = anyio.create_memory_object_stream[SSEEvent](0)
        self._sse_stream_writers[request_id] = sse_writer
        headers = {
            "Cache-Control": "no-cache, no-transform",
            "Connection": "keep-alive",
            "Content-Type": CONTENT_TYPE_SSE,
            **({MCP_SESSION_ID_HEADER: self.mcp_session_id} if self.mcp_session_id else {}),
        }
        reader = self._request_streams[request_id][1]
        response = EventSourceResponse(
            content=sse_reader,
            data_sender_callable=partial(self._run_sse_writer, request_id, sse_writer, reader, opening),
            headers=headers,
        )
        try:
            await response(scope, receive, send)
        except Exception:
            await sse_writer.aclose()
            await self._clean_up_memory_streams(request_id)
            raise
        finally:
            await sse_reader.aclose()


def _forget_body(request: Request) -> None:
    """Drop the bytes of a body already parsed (Starlette keeps them on the request, which lives
    as long as the call): a large inline document is then held once, as the parsed string, not
    twice."""
    if hasattr(request, "_body"):
        del request._body


class SessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager with ``LazyJsonTransport`` sessions (and their direct route).
    With ``event_budget`` set (``--resume-buffer-mb``), each session gets an event store of its
    own under that budget (``pdf_airlock.server.http.events``): its streams are resumable, and
    only by itself. With ``sessions``, each authenticated principal holds at most its cap of
    sessions (``pdf_airlock.server.http.quotas``; past it, the SDK's ``503``: the guard in
    front has already answered ``429`` unless two opening requests raced)."""

    event_budget: EventBudget | None = None

    def __init__(
        self,
        *args: Any,
        direct: DirectRoute | None = None,
        sessions: PrincipalSessions | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.direct = direct
        self.sessions = sessions
        # Not the SDK's ``RequestBodyLimitMiddleware``: ``BodyGuard`` in front has capped the body
        # already, and the middleware would copy each body twice and keep a copy for as long as
        # the call runs.
        self.asgi_app = self._handle_request  # type: ignore[assignment]  # an ASGI app as well

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            return None
        owner = _owner(requestor)
        if self.sessions is not None and owner is not None and self.sessions.full(owner):
            return None
        transport = LazyJsonTransport(
            mcp_session_id=uuid4().hex,
            is_json_response_enabled=self.json_response,
            event_store=SessionEvents(self.event_budget) if self.event_budget is not None else None,
            security_settings=self.security_settings,
            retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout,
            direct=self.direct,
        )
        session_id = transport.mcp_session_id
        assert session_id is not None
        if requestor is not None:
            self._session_owners[session_id] = requestor
        self._server_instances[session_id] = transport
        if self.sessions is not None and owner is not None:
            self.sessions.opened(owner)
        return transport

    async def _discard_session(self, session_id: str, transport: StreamableHTTPServerTransport) -> None:
        """The SDK's; the session no longer counts for its principal (once, however often the
        SDK discards it)."""
        if self.sessions is not None and session_id in self._server_instances:
            owner = _owner(self._session_owners.get(session_id))
            if owner is not None:
                self.sessions.closed(owner)
        await super()._discard_session(session_id, transport)


def _owner(requestor: AuthorizationContext | None) -> str | None:
    """The principal a session counts for (the token's subject, as ``Principal.subject``)."""
    return requestor.get("subject") if requestor is not None else None
