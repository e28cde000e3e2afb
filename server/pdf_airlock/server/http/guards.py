"""Request guards in front of the MCP endpoint, checked before the SDK sees a byte.

- ``OriginGuard``: a request carrying an ``Origin`` header must name an allowed origin (the
  DNS-rebinding defence the MCP transport spec asks for: a web page cannot drive a server on
  localhost). Requests without ``Origin`` (every non-browser client) pass. ``403`` otherwise.
- ``BodyGuard``: the request body is read up to ``max_bytes`` (``413`` past it, or at once when
  ``Content-Length`` says so), then, for a ``tools/call`` of a tool that needs more than the base
  scope (``TOOL_SCOPES``), the principal's scopes are checked: ``403`` with
  ``error="insufficient_scope"`` naming the scope, as the MCP authorization spec's step-up asks.
  The body is then replayed to the SDK unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from pdf_airlock.server.http.auth import challenge, principal_of, send_refusal

__all__ = ["ATTACHMENTS_SCOPE", "READ_SCOPE", "TOOL_SCOPES", "BodyGuard", "OriginGuard"]

READ_SCOPE: Final = "pdf:read"  # every call of the MCP endpoint
ATTACHMENTS_SCOPE: Final = "pdf:attachments"  # pdf_attachments: embedded files leave the document
TOOL_SCOPES: Final[Mapping[str, str]] = {"pdf_attachments": ATTACHMENTS_SCOPE}

Refused = Callable[[int], None]
_UNICODE_ESCAPE: Final = b"\\u"


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


class BodyGuard:
    """Caps the body (``413``) and checks per-tool scopes (``403``) before the SDK."""

    def __init__(
        self,
        app: ASGIApp,
        max_bytes: int,
        metadata_url: str | None,
        on_refusal: Refused | None = None,
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.metadata_url = metadata_url  # None: no auth, no per-tool scopes
        self.on_refusal = on_refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._too_large(scope, receive, send)
            return
        body = bytearray()
        trailing: Message | None = None
        while True:
            message = await receive()
            if message["type"] != "http.request":
                trailing = message
                break
            body.extend(message.get("body", b""))
            if len(body) > self.max_bytes:
                await self._too_large(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        if self.metadata_url is not None and not await self._scopes_allow(scope, bytes(body), send):
            return
        replay: list[Message] = [{"type": "http.request", "body": bytes(body), "more_body": False}]
        if trailing is not None:
            replay.append(trailing)

        async def replayed() -> Message:
            return replay.pop(0) if replay else await receive()

        await self.app(scope, replayed, send)

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
