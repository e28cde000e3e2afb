"""What one principal may hold before any of its calls runs: MCP sessions, and request bodies.

The per-principal limits of a call (``app/policy.py``, checked by ``http/admission.py``:
concurrency, rate) are checked once its body has been read and parsed; what comes before that is
bounded here, in front of the SDK (``BodyGuard`` asks):

- **Sessions.** A principal may hold ``--sessions-per-principal`` MCP sessions open at once,
  and opening one (``initialize``, or any session-opening POST of the handshake era) spends a
  token of its rate, as a call does. Past either, ``429`` with ``Retry-After``, before the body
  is read. The SDK's own cap (all sessions together) still holds, and the session manager
  (``http/transport.py``) counts each principal's sessions as it admits and discards them, so
  the cap also holds against opening requests that race each other. Without authentication
  there is one principal, and only the SDK's cap applies.
- **Bodies.** A request body over ``SMALL_BODY_BYTES`` needs a slot of its principal before
  more of it is read: as many slots as the principal's policy ``concurrency``, or
  ``--bodies-per-principal`` without one. A slot is held until the request has been answered
  (a call's arguments, inline documents included, live that long). Past it, ``429`` with
  ``Retry-After``. Small bodies (answers to the server's questions, notifications, calls by
  path) never wait for a slot, so a call waiting for its human cannot shut out the answer.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from dataclasses import dataclass
from typing import Final

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import Scope, Send

from pdf_airlock.server.app.policy import Limiter, Policy, Rule
from pdf_airlock.server.config import KIB
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.http.admission import principal_label
from pdf_airlock.server.http.auth import principal_of

__all__ = ["SMALL_BODY_BYTES", "BodySlot", "PrincipalSessions", "Quotas", "send_429"]

SMALL_BODY_BYTES: Final = 64 * KIB  # a body up to this size needs no slot
SESSIONS_RETRY_S: Final = 60.0  # Retry-After when a principal's sessions are all open
BODIES_RETRY_S: Final = 1.0  # Retry-After when a principal's body slots are taken
_SERVER_ERROR: Final = -32000  # JSON-RPC: an implementation-defined server error
_SESSION_HEADER: Final = MCP_SESSION_ID_HEADER.lower().encode()
_VERSION_HEADER: Final = b"mcp-protocol-version"


class PrincipalSessions:
    """Open MCP sessions by principal."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._open: Counter[str] = Counter()

    def full(self, key: str) -> bool:
        return self._open[key] >= self.cap

    def opened(self, key: str) -> None:
        self._open[key] += 1

    def closed(self, key: str) -> None:
        self._open[key] -= 1
        if self._open[key] <= 0:
            del self._open[key]

    def count(self, key: str) -> int:
        return self._open[key]


@dataclass(slots=True)
class BodySlot:
    """One request's claim on its principal's body slots: taken on demand, given back once."""

    limiter: Limiter
    key: str
    rule: Rule
    limit: int
    taken: bool = False

    def take(self) -> bool:
        """True if this request holds a slot (now or already)."""
        if not self.taken:
            self.taken = self.limiter.take_body(self.key, self.rule, self.limit)
        return self.taken

    def release(self) -> None:
        if self.taken:
            self.taken = False
            self.limiter.release_body(self.key)


def opens_a_session(scope: Scope) -> bool:
    """A POST the SDK would answer by opening a session: no session id, and a handshake-era
    protocol version or none (the SDK's own routing, ``StreamableHTTPSessionManager``)."""
    session = version = None
    for name, value in scope["headers"]:
        if name == _SESSION_HEADER:
            session = value
        elif name == _VERSION_HEADER:
            version = value.decode("latin-1")
    return session is None and (version is None or version in HANDSHAKE_PROTOCOL_VERSIONS)


async def send_429(send: Send, message: str, retry_after_s: float) -> None:
    """``429`` with ``Retry-After`` and a JSON-RPC error body (no id: the body was not read)."""
    payload = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": _SERVER_ERROR, "message": message}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"retry-after", str(max(1, math.ceil(retry_after_s))).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class Quotas:
    """The sessions and bodies of each principal, under the policy's rules."""

    def __init__(
        self, policy: Policy, limiter: Limiter, *, bodies_per_principal: int, sessions_per_principal: int
    ) -> None:
        self.policy = policy
        self.limiter = limiter
        self.bodies_per_principal = bodies_per_principal
        self.sessions = PrincipalSessions(sessions_per_principal)

    def session_refusal(self, scope: Scope) -> tuple[str, float] | None:
        """Why ``scope``'s principal may not open a session now (and when to retry), or None;
        None also spends one token of its rate."""
        principal = principal_of(scope)
        key = principal_label(principal)
        if principal is not None and self.sessions.full(key):
            return f"{self.sessions.cap} sessions of this principal are open", SESSIONS_RETRY_S
        try:
            self.limiter.take_rate(key, self.policy.rule_for(principal))
        except ToolError as error:
            return error.message, float(error.details.get("retry_after_s", 1.0))
        return None

    def body_slot(self, scope: Scope) -> BodySlot:
        principal = principal_of(scope)
        rule = self.policy.rule_for(principal)
        limit = rule.concurrency if rule.concurrency is not None else self.bodies_per_principal
        return BodySlot(self.limiter, principal_label(principal), rule, limit)
