"""The HTTP listener's own limits: what a connection may cost before it has made a request.

Request heads are read before anyone is authenticated, so every byte and every socket spent on
them is spent for a stranger. uvicorn's httptools protocol has no cap on a head (httptools
gathers a header value piece by piece in memory, and uvicorn's ``h11_max_incomplete_event_size``
is the other parser's), no deadline for a head, and keeps a connection that never sends a byte
for ever. ``GuardedHttpProtocol`` adds, in front of the parser:

- **A head cap** (``--max-head-kb``): the bytes of a request head, request line to the blank
  line that ends it, are counted as they arrive, before the parser sees them; past the cap the
  connection is answered ``431`` and closed. The count is exact but for bytes that follow a
  request body in the same read (at most one read of the event loop).
- **A head deadline** (``--head-timeout``): a connection must send a complete head within this
  long of opening, and of the first byte of each later request; otherwise it is answered ``408``
  (or closed without a word when it sent nothing) and closed.
- **An idle deadline** (``--keepalive-timeout``): a connection whose response is complete is
  closed after this long without a new request; so is one still sending the body of a request
  already answered (a ``401`` before the body, say), however slowly it sends.
- **A connection cap** (``--max-connections``, lowered to fit under the process's open-file
  limit with ``--fd-reserve`` descriptors to spare for everything else: the pool's pipes and
  sockets, documents, the JWKS fetch). At the cap a new connection closes the oldest connection
  that has no request in flight (never sent a head, half-sent one, or idle between requests);
  only when every connection is serving a request is the new one answered ``503`` and closed.
  Holding sockets open therefore cannot lock anyone out: a client that sends its request at
  once gets in, and a connection can only stay by making requests, which authentication and the
  per-principal limits bound.
"""

from __future__ import annotations

import asyncio
import resource
from collections import OrderedDict
from dataclasses import dataclass
from typing import Final

import structlog

from pdf_airlock.server.http.wire import CoalescingHttpProtocol

__all__ = ["Connections", "GuardedHttpProtocol", "ListenerLimits", "connection_budget", "guarded_protocol"]

log = structlog.get_logger(__name__)

_HEAD_END: Final = b"\r\n\r\n"
_TAIL: Final = len(_HEAD_END) - 1  # bytes of a head kept to find an end split across two reads


def _refusal(status: int, reason: str) -> bytes:
    body = reason.encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    ).encode() + body


HEAD_TOO_LARGE: Final = _refusal(431, "Request Header Fields Too Large")
HEAD_TIMEOUT: Final = _refusal(408, "Request Timeout")
NO_ROOM: Final = _refusal(503, "Service Unavailable")


@dataclass(frozen=True, slots=True)
class ListenerLimits:
    """The listener's limits (``Settings.http_*``), ``max_connections`` already fitted to the
    open-file limit (``connection_budget``)."""

    max_head_bytes: int
    head_timeout_s: float
    keepalive_timeout_s: float
    max_connections: int


def connection_budget(max_connections: int, fd_reserve: int) -> int:
    """The connections this process can hold with ``fd_reserve`` descriptors to spare: the soft
    open-file limit is raised towards the hard one as far as ``max_connections + fd_reserve``
    needs, and the cap is lowered to what fits under it (at least 1)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = max_connections + fd_reserve
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        if raised > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
            except (OSError, ValueError):  # a sandbox that refuses it: fit under what there is
                pass
    if soft == resource.RLIM_INFINITY:
        return max_connections
    fitted = max(1, min(max_connections, soft - fd_reserve))
    if fitted < max_connections:
        log.warning(
            "http_connections_capped",
            max_connections=fitted,
            asked=max_connections,
            open_file_limit=soft,
            fd_reserve=fd_reserve,
        )
    return fitted


class Connections:
    """Every open connection of one server, and which of them have no request in flight (the
    ones a new connection may push out at the cap), oldest first."""

    def __init__(self, limits: ListenerLimits) -> None:
        self.limits = limits
        self.open = 0
        self.evicted = 0  # connections closed to make room (for the tests and the log)
        self._idle: OrderedDict[GuardedHttpProtocol, None] = OrderedDict()

    def opened(self, connection: GuardedHttpProtocol) -> bool:
        """Count a new connection (it starts idle); False if there is no room for it."""
        self.open += 1
        self._idle[connection] = None
        if self.open <= self.limits.max_connections:
            return True
        victim = next((idle for idle in self._idle if idle is not connection), None)
        if victim is None:
            return False
        self.evicted += 1
        victim.evict()
        return True

    def busy(self, connection: GuardedHttpProtocol) -> None:
        """A request is in flight on ``connection``: it is not pushed out."""
        self._idle.pop(connection, None)

    def idle(self, connection: GuardedHttpProtocol) -> None:
        """``connection`` has no request in flight (again); it is now the newest idle one."""
        self._idle.pop(connection, None)
        self._idle[connection] = None

    def closed(self, connection: GuardedHttpProtocol) -> None:
        self._idle.pop(connection, None)
        self.open -= 1


class GuardedHttpProtocol(CoalescingHttpProtocol):
    """uvicorn's httptools protocol (one write per loop turn) under ``ListenerLimits``; made per
    server by ``guarded_protocol``."""

    registry: Connections  # one per server (``guarded_protocol``)

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self._awaiting_head = True  # the parser waits for a request line
        self._head_bytes = 0
        self._tail = b""
        self._counted = False  # in ``self.registry`` (until connection_lost or eviction)
        self._timer: asyncio.TimerHandle | None = None
        self._timing_head = False  # ``_timer`` is a head's deadline (not the idle one)
        self._drain_timer: asyncio.TimerHandle | None = None
        limits = self.registry.limits
        if not self.registry.opened(self):
            self.registry.closed(self)
            self.transport.write(NO_ROOM)
            self.transport.close()
            return
        self._counted = True
        self._arm(limits.head_timeout_s, head=True)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._cancel_drain()
        if self._counted:
            self._counted = False
            self.registry.closed(self)
        super().connection_lost(exc)

    def evict(self) -> None:
        """Closed to make room for a new connection (it had no request in flight)."""
        if self._counted:
            self._counted = False
            self.registry.closed(self)
        self._disarm()
        self.transport.close()

    # -- the head, before the parser ----------------------------------------------------------

    def data_received(self, data: bytes) -> None:
        limits = self.registry.limits
        while data and not self.transport.is_closing():
            if not self._awaiting_head:
                super().data_received(data)
                return
            if not self._timing_head:
                self._arm(limits.head_timeout_s, head=True)  # a new request: its head has this long
            searched = self._tail + data
            end = searched.find(_HEAD_END)
            take = len(data) if end < 0 else end + len(_HEAD_END) - len(self._tail)
            self._head_bytes += take
            if self._head_bytes > limits.max_head_bytes:
                log.info("http_head_too_large", limit=limits.max_head_bytes)
                self._refuse(HEAD_TOO_LARGE)
                return
            piece, data = data[:take], data[take:]
            # An end found is consumed (blank lines before a request line are skipped by the
            # parser, and counting goes on); otherwise the last bytes may begin one.
            self._tail = b"" if end >= 0 else (self._tail + piece)[-_TAIL:]
            super().data_received(piece)

    def _refuse(self, answer: bytes) -> None:
        self._disarm()
        self.transport.write(answer)
        self.transport.close()

    # -- parser and response callbacks ---------------------------------------------------------

    def on_headers_complete(self) -> None:
        self._awaiting_head = False
        self._disarm()
        self.registry.busy(self)
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self._awaiting_head = True
        self._head_bytes = 0
        self._tail = b""
        if self._drain_timer is not None:  # the body of an answered request is over: idle now
            self._cancel_drain()
            self._arm(self.registry.limits.keepalive_timeout_s, head=False)

    def on_response_complete(self) -> None:
        pipelined = bool(self.pipeline)  # uvicorn starts the next request now: still busy
        super().on_response_complete()
        if self.transport.is_closing() or not self._counted or pipelined:
            return
        self.registry.idle(self)
        keepalive = self.registry.limits.keepalive_timeout_s
        if not self._awaiting_head:  # answered before its body was read: no more time for it
            self._drain_timer = self.loop.call_later(keepalive, self._expire)
        elif self._head_bytes == 0:  # (a head already under way keeps its own deadline)
            self._arm(keepalive, head=False)

    # -- deadlines ---------------------------------------------------------------------------

    def _arm(self, seconds: float, *, head: bool) -> None:
        self._disarm()
        self._timer = self.loop.call_later(seconds, self._expire)
        self._timing_head = head

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._timing_head = False

    def _cancel_drain(self) -> None:
        if self._drain_timer is not None:
            self._drain_timer.cancel()
            self._drain_timer = None

    def _expire(self) -> None:
        """A deadline passed: answer ``408`` if a head was under way, and close."""
        self._timer = None
        self._timing_head = False
        self._drain_timer = None
        if self.transport.is_closing():
            return
        if self._awaiting_head and self._head_bytes > 0:
            self.transport.write(HEAD_TIMEOUT)
        self.transport.close()


def guarded_protocol(limits: ListenerLimits) -> type[GuardedHttpProtocol]:
    """The protocol class for one server (``uvicorn.Config(http=...)``): its connections share
    one ``Connections``."""

    class Protocol(GuardedHttpProtocol):
        registry = Connections(limits)

    return Protocol
