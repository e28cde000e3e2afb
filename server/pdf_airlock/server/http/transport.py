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
dispatched. The ``ASGI one call at a time`` rows of ``bench/http_load.py`` measure it.
"""

from __future__ import annotations

import logging
from functools import partial
from http import HTTPStatus
from typing import Final
from uuid import uuid4

import anyio
import pydantic_core
from mcp.server.auth.middleware.bearer_auth import AuthorizationContext
from mcp.server.streamable_http import (
    CONTENT_TYPE_SSE,
    MCP_SESSION_ID_HEADER,
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    SSEEvent,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from sse_starlette import EventSourceResponse
from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from pdf_airlock.server.http.events import EventBudget, SessionEvents

__all__ = ["JSON_HOLD_S", "LazyJsonTransport", "SessionManager"]

logger = logging.getLogger(__name__)

JSON_HOLD_S: Final = 1.0  # past this without a message, the answer becomes an SSE stream
_INITIALIZE: Final = "initialize"


class LazyJsonTransport(StreamableHTTPServerTransport):
    """One session's transport: JSON for a request answered at once, SSE otherwise."""

    async def _handle_post_request(
        self, scope: Scope, request: Request, receive: Receive, send: Send
    ) -> None:
        message = await self._plain_request(request)
        if message is None:
            await super()._handle_post_request(scope, request, receive, send)
            return
        if not await self._validate_request_headers(request, send):
            return
        try:
            await self._answer(scope, request, receive, send, message)
        except Exception:
            logger.exception("Error handling POST request")
            response = self._create_error_response(
                "Error handling POST request", HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR
            )
            await response(scope, receive, send)

    async def _plain_request(self, request: Request) -> JSONRPCRequest | None:
        """The request this transport answers itself, or None for the SDK's path (which also
        answers every malformed POST). The body is read once; the SDK's path reuses it."""
        if self._event_store is not None or self.is_json_response_enabled:
            return None
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse and self._check_content_type(request)):
            return None
        try:
            message = jsonrpc_message_adapter.validate_python(
                pydantic_core.from_json(await request.body()), by_name=False
            )
        except (ValueError, ValidationError):
            return None
        if not isinstance(message, JSONRPCRequest) or message.method == _INITIALIZE:
            return None
        return message

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


class SessionManager(StreamableHTTPSessionManager):
    """The SDK's session manager with ``LazyJsonTransport`` sessions. With ``event_budget`` set
    (``--resume-buffer-mb``), each session gets an event store of its own under that budget
    (``pdf_airlock.server.http.events``): its streams are resumable, and only by itself."""

    event_budget: EventBudget | None = None

    def _admit_session(self, requestor: AuthorizationContext | None) -> StreamableHTTPServerTransport | None:
        if self.max_sessions is not None and len(self._server_instances) >= self.max_sessions:
            return None
        transport = LazyJsonTransport(
            mcp_session_id=uuid4().hex,
            is_json_response_enabled=self.json_response,
            event_store=SessionEvents(self.event_budget) if self.event_budget is not None else None,
            security_settings=self.security_settings,
            retry_interval=self.retry_interval,
            idle_timeout=self.session_idle_timeout,
        )
        session_id = transport.mcp_session_id
        assert session_id is not None
        if requestor is not None:
            self._session_owners[session_id] = requestor
        self._server_instances[session_id] = transport
        return transport
