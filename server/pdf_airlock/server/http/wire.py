"""uvicorn's HTTP/1.1 protocol (httptools' parser) writing each response in one piece.

uvicorn writes a response's status line and headers, then its body, as separate socket writes:
two segments on the wire, and on a busy machine two wake-ups of the client, the first of which
often preempts the server before it has written the body. ``CoalescingHttpProtocol`` gathers
what the server writes in one turn of the event loop and sends it with one write at the end of
that turn, or at once when the response is complete: a JSON answer goes out whole, before
whatever else this turn of the loop has to run (a job's bookkeeping, the pool's next spare); an
SSE stream's events still leave as they come (at most one loop turn later). Nothing else
changes: parsing, limits, keep-alive and flow control are uvicorn's. It serves the ``Streamable
HTTP`` rows of ``bench/perf/http_load.py``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["CoalescingHttpProtocol"]


class _OneWritePerTurn:
    """A transport proxy: ``write`` gathers, the end of the loop turn sends. Everything else is
    the real transport's (``close`` first sends what was gathered)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._gathered: list[bytes] = []

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._gathered:
            self._loop.call_soon(self.flush)
        self._gathered.append(bytes(data))

    def flush(self) -> None:
        """Send what was gathered, now."""
        if not self._gathered:
            return
        data = b"".join(self._gathered)
        self._gathered.clear()
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CoalescingHttpProtocol(HttpToolsProtocol):
    """``uvicorn.Config(http=...)``: httptools, one socket write per loop turn."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn's
        super().connection_made(transport)
        self.transport = _OneWritePerTurn(self.transport, self.loop)  # type: ignore[assignment]

    def on_response_complete(self) -> None:
        """A complete response leaves now, not at the end of the loop's turn."""
        if isinstance(self.transport, _OneWritePerTurn):
            self.transport.flush()
        super().on_response_complete()
