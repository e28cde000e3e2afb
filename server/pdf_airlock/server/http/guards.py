"""Request guards in front of the MCP endpoint, checked before the SDK sees a byte.

- ``HostGuard`` (every route, ``/metrics`` and the probes too): the ``Host`` header must name
  this server (``--allow-host``; by default the loopback names when it listens on loopback). A
  page on ``evil.example`` whose name an attacker re-points at 127.0.0.1 (DNS rebinding) sends
  ``Host: evil.example``: ``421``. Requests without ``Host`` pass (no browser sends one).
- ``OriginGuard``: a request carrying an ``Origin`` header must name an allowed origin (the
  DNS-rebinding defence the MCP transport spec asks for: a web page cannot drive a server on
  localhost). Requests without ``Origin`` (every non-browser client) pass. ``403`` otherwise.
- ``BodyGuard``: first what the principal may hold (``http/quotas.py``): a POST that would
  open a session is refused ``429`` when its principal's sessions or rate are spent, and a body
  over 64 KiB needs one of the principal's body slots (``429`` otherwise), both before the body
  is read. The body is then read up to ``max_bytes`` (``413`` past it, or at once when
  ``Content-Length`` says so) within ``--body-timeout`` of its head (``408`` and the connection
  closed), then, for a ``tools/call`` of a tool that needs more than the base scope
  (``TOOL_SCOPES``: each tool's declared ``scope``), the principal's scopes are checked: ``403`` with
  ``error="insufficient_scope"`` naming the scope, as the MCP authorization spec's step-up asks.
  The body is then replayed to the SDK unchanged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any, Final

import anyio
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdf_airlock.server.http.auth import challenge, principal_of, send_refusal
from pdf_airlock.server.http.quotas import (
    BODIES_RETRY_S,
    SMALL_BODY_BYTES,
    BodySlot,
    Quotas,
    opens_a_session,
    send_429,
)
from pdf_airlock.server.tools.registry import TOOLS

__all__ = [
    "READ_SCOPE",
    "TOOL_SCOPES",
    "BodyGuard",
    "HostGuard",
    "OriginGuard",
    "host_name",
]

READ_SCOPE: Final = "pdf:read"  # every call of the MCP endpoint
# Tool -> the scope it needs beside the read scope (the tool's own ``scope``).
TOOL_SCOPES: Final[Mapping[str, str]] = {name: spec.scope for name, spec in TOOLS.items() if spec.scope}

Refused = Callable[[int], None]
_UNICODE_ESCAPE: Final = b"\\u"
_BODIES_BUSY: Final = "the large request bodies this principal may send at once are in flight"
_BODY_LATE: Final = "Request body not received in time"


def host_name(value: bytes) -> str:
    """The name in a ``Host`` header: lower case, without its port or an IPv6 literal's
    brackets."""
    text = value.decode("latin-1").strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text[1:]
    name, colon, port = text.rpartition(":")
    return name if colon and port.isdigit() else text


class HostGuard:
    """``421`` for a request whose ``Host`` is not one of ``allowed`` (None: any)."""

    def __init__(
        self, app: ASGIApp, allowed: frozenset[str] | None, on_refusal: Refused | None = None
    ) -> None:
        self.app = app
        self.allowed = allowed
        self.on_refusal = on_refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.allowed is not None and scope["type"] == "http":
            host = next((value for name, value in scope["headers"] if name == b"host"), None)
            if host is not None and host_name(host) not in self.allowed:
                if self.on_refusal is not None:
                    self.on_refusal(421)
                await PlainTextResponse("Host not allowed", status_code=421)(scope, receive, send)
                return
        await self.app(scope, receive, send)


class OriginGuard:
    """``403`` for a request whose ``Origin`` is not on the allow-list."""

    def __init__(self, app: ASGIApp, allowed: frozenset[str], on_refusal: Refused | None = None) -> None:
        self.app = app
        self.allowed = allowed
        self.on_refusal = on_refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            origin = Headers(scope=scope).get("origin")
            if origin is not None and origin.rstrip("/") not in self.allowed:
                if self.on_refusal is not None:
                    self.on_refusal(403)
                await PlainTextResponse("Origin not allowed", status_code=403)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _tools_called(body: bytes) -> list[str]:
    """Names of the tools a JSON-RPC body calls (one message, or a batch). A body that holds
    neither the name of a tool with a scope of its own nor a ``\\u`` escape (the only JSON escape
    that can spell a letter) cannot call one, and is not parsed here (a large inline document
    would be parsed twice)."""
    if _UNICODE_ESCAPE not in body and not any(name.encode() in body for name in TOOL_SCOPES):
        return []
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        return []  # the SDK answers the parse error
    messages = parsed if isinstance(parsed, list) else [parsed]
    names = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            if isinstance(name, str):
                names.append(name)
    return names


class _Gathered:
    """A body as it comes. One of known length goes into one buffer of that size, not thousands
    of small pieces the allocator keeps after they are joined (the ``test_http_quotas`` bound on a
    large inline call's peak)."""

    def __init__(self, length: int | None) -> None:
        self.size = 0
        self._buffer = bytearray(length) if length is not None and length > SMALL_BODY_BYTES else None
        self._chunks: list[bytes] = []

    def add(self, chunk: bytes) -> None:
        if self._buffer is not None and self.size + len(chunk) <= len(self._buffer):
            self._buffer[self.size : self.size + len(chunk)] = chunk
        elif chunk:
            if self._buffer is not None:  # more than its Content-Length said: keep what came
                self._chunks.append(bytes(self._buffer[: self.size]))
                self._buffer = None
            self._chunks.append(chunk)
        self.size += len(chunk)

    def take(self) -> bytes:
        """The body (one copy at most; none for a body that came in one piece)."""
        if self._buffer is not None:
            body = bytes(memoryview(self._buffer)[: self.size])
            self._buffer = None
            return body
        chunks, self._chunks = self._chunks, []
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class BodyGuard:
    """What the principal may hold (``429``), the body cap (``413``), per-tool scopes (``403``),
    before the SDK."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        metadata_url: str | None,
        on_refusal: Refused | None = None,
        *,
        quotas: Quotas | None = None,
        body_timeout_s: float = math.inf,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.metadata_url = metadata_url  # None: no auth, no per-tool scopes
        self.on_refusal = on_refusal
        self.quotas = quotas
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        length = int(declared) if declared is not None and declared.isascii() and declared.isdigit() else None
        if length is not None and length > self.max_bytes:
            await self._too_large(scope, receive, send)
            return
        if self.quotas is None:
            await self._read(scope, receive, send, None, length)
            return
        if opens_a_session(scope):
            refusal = self.quotas.session_refusal(scope)
            if refusal is not None:
                await self._429(send, *refusal)
                return
        slot = self.quotas.body_slot(scope)
        try:
            if length is not None and length > SMALL_BODY_BYTES and not slot.take():
                await self._429(send, _BODIES_BUSY, BODIES_RETRY_S)
                return
            await self._read(scope, receive, send, slot, length)
        finally:
            slot.release()

    async def _read(
        self, scope: Scope, receive: Receive, send: Send, slot: BodySlot | None, length: int | None
    ) -> None:
        """Read the body (a slot taken once it passes 64 KiB), check scopes, hand it on."""
        gathered = _Gathered(length)
        trailing: Message | None = None
        with anyio.move_on_after(self.body_timeout_s) as deadline:
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    trailing = message
                    break
                chunk = message.get("body", b"")
                if gathered.size + len(chunk) > self.max_bytes:
                    await self._too_large(scope, receive, send)
                    return
                if slot is not None and gathered.size + len(chunk) > SMALL_BODY_BYTES and not slot.take():
                    await self._429(send, _BODIES_BUSY, BODIES_RETRY_S)
                    return
                gathered.add(chunk)
                if not message.get("more_body", False):
                    break
        if deadline.cancelled_caught:  # a body sent too slowly holds a connection and its memory
            if self.on_refusal is not None:
                self.on_refusal(408)
            await PlainTextResponse(_BODY_LATE, 408, {"connection": "close"})(scope, receive, send)
            return
        body = gathered.take()
        if self.metadata_url is not None and not await self._scopes_allow(scope, body, send):
            return
        replay: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]
        del body
        if trailing is not None:
            replay.append(trailing)

        async def replayed() -> Message:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)

    async def _429(self, send: Send, message: str, retry_after_s: float) -> None:
        if self.on_refusal is not None:
            self.on_refusal(429)
        await send_429(send, message, retry_after_s)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.on_refusal is not None:
            self.on_refusal(413)
        await PlainTextResponse("Request body too large", status_code=413)(scope, receive, send)

    async def _scopes_allow(self, scope: Scope, body: bytes, send: Send) -> bool:
        principal = principal_of(scope)
        granted = principal.scopes if principal is not None else frozenset()
        for name in _tools_called(body):
            needed = TOOL_SCOPES.get(name)
            if needed is not None and needed not in granted:
                assert self.metadata_url is not None
                if self.on_refusal is not None:
                    self.on_refusal(403)
                header = challenge(
                    self.metadata_url,
                    error="insufficient_scope",
                    description=f"{name} requires scope {needed}",
                    scope=f"{READ_SCOPE} {needed}",
                )
                body_json = {"error": "insufficient_scope", "error_description": f"scope {needed} required"}
                await send_refusal(send, 403, header, body_json)
                return False
        return True
