"""Resumable streams: the SDK's ``EventStore`` kept in memory, one store per session, under
one byte budget for the whole server (``--resume-buffer-mb``; 0, the default, turns it off).

With a store, the SDK's Streamable HTTP transport answers every request as an SSE stream whose
events carry ids (and opens each with a "priming" event); a client whose connection drops sends
``GET /mcp`` with ``Last-Event-ID`` and gets the events it missed, then the rest of the stream
(the MCP spec's resumability). The transport asks the store it was made with, so a store per
session means an event id replays only within its own session: a client of another session
(another principal) cannot replay it, even knowing the id. Ids are random as well.

Bounded: the messages kept are counted by their JSON size, and past the budget the oldest events
of the whole server are forgotten first. A client that comes back after its events were
forgotten gets an empty replay (the SDK then ends the stream), never another stream's events.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Final

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage

__all__ = ["EventBudget", "SessionEvents"]

_ID_BYTES: Final = 12
_PRIMING_BYTES: Final = 64  # what a priming event (no message) is counted as


@dataclass(slots=True)
class _Event:
    event_id: EventId
    message: JSONRPCMessage | None
    size: int


@dataclass(slots=True)
class EventBudget:
    """The byte budget every session's store shares; the oldest events go first past it."""

    max_bytes: int
    used: int = 0
    _order: deque[tuple[SessionEvents, StreamId, EventId]] = field(default_factory=deque)

    def admit(self, store: SessionEvents, stream_id: StreamId, event: _Event) -> None:
        self._order.append((store, stream_id, event.event_id))
        self.used += event.size
        while self.used > self.max_bytes and self._order:
            oldest_store, oldest_stream, oldest_id = self._order.popleft()
            self.used -= oldest_store.forget(oldest_stream, oldest_id)


class SessionEvents(EventStore):
    """One session's streams, each an ordered run of events (``EventStore`` for the SDK)."""

    def __init__(self, budget: EventBudget) -> None:
        self.budget = budget
        self._streams: dict[StreamId, OrderedDict[EventId, _Event]] = {}
        self._stream_of: dict[EventId, StreamId] = {}

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        event_id = secrets.token_urlsafe(_ID_BYTES)
        size = _PRIMING_BYTES if message is None else len(message.model_dump_json(by_alias=True))
        event = _Event(event_id, message, size)
        self._streams.setdefault(stream_id, OrderedDict())[event_id] = event
        self._stream_of[event_id] = stream_id
        self.budget.admit(self, stream_id, event)
        return event_id

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        """Send the events of ``last_event_id``'s stream that came after it; that stream, or
        None if the id is unknown here (another session's, made up, or forgotten)."""
        stream_id = self._stream_of.get(last_event_id)
        if stream_id is None:
            return None
        after = False
        for event in list(self._streams.get(stream_id, {}).values()):
            if after and event.message is not None:
                await send_callback(EventMessage(event.message, event.event_id))
            after = after or event.event_id == last_event_id
        return stream_id

    def forget(self, stream_id: StreamId, event_id: EventId) -> int:
        """Drop one event (the budget's oldest); the bytes it held."""
        self._stream_of.pop(event_id, None)
        events = self._streams.get(stream_id)
        if events is None or event_id not in events:
            return 0
        event = events.pop(event_id)
        if not events:
            del self._streams[stream_id]
        return event.size
