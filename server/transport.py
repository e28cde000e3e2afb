"""The stdio transport: the only code that reads fd 0 or writes fd 1.

Invariants:
- fd 1 belongs to the protocol. At start the transport takes private duplicates of fds 0 and 1
  and points fd 0 at /dev/null and fd 1 at stderr, so a stray ``print`` or a library writing
  to stdout can never put a partial frame on the wire.
- Exactly one task writes frames, whole frames only, in the order they were queued.
- Framing is newline-delimited JSON (the MCP stdio standard). LSP-style ``Content-Length:``
  framing is detected from the first bytes and answered in kind.
- A frame over ``max_message_bytes`` is discarded with a -32600 error; invalid UTF-8 or JSON
  gets -32700 with ``id: null``; a JSON array (batch) gets -32600. The server keeps serving.
- A request whose id repeats an answered request gets the earlier response again, without
  running anything (the last ``ANSWERED_CACHE`` answers are kept); a request whose id is still
  in flight gets -32600.
- ``drain()`` (SIGTERM) stops accepting input; ``idle`` is set when nothing is in flight.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any, Final

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["StdioTransport"]

log = structlog.get_logger("pdf_airlock.transport")

_READ_CHUNK: Final = 1 << 16
ANSWERED_CACHE: Final = 64
_HEADER_LIMIT: Final = 8192
_CONTENT_LENGTH: Final = b"content-length:"


def _error_frame(code: int, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def _valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


class _Framer:
    """Splits the input byte stream into message bodies; detects the framing once."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.buffer = bytearray()
        self.mode: str | None = None
        self.discarding = False
        self.expected: int | None = None

    def feed(self, chunk: bytes) -> list[bytes | str]:
        """Return complete bodies (bytes) and framing errors (str), in order."""
        self.buffer += chunk
        if self.mode is None:
            stripped = bytes(self.buffer).lstrip()
            if len(stripped) < len(_CONTENT_LENGTH) and _CONTENT_LENGTH.startswith(stripped.lower()):
                return []
            self.mode = "lsp" if stripped.lower().startswith(_CONTENT_LENGTH) else "ndjson"
        return self._lsp() if self.mode == "lsp" else self._ndjson()

    def _ndjson(self) -> list[bytes | str]:
        out: list[bytes | str] = []
        while True:
            newline = self.buffer.find(b"\n")
            if newline < 0:
                if len(self.buffer) > self.max_bytes and not self.discarding:
                    self.discarding = True
                    out.append(f"message exceeds the {self.max_bytes}-byte limit")
                if self.discarding:
                    self.buffer.clear()
                return out
            line = bytes(self.buffer[:newline])
            del self.buffer[: newline + 1]
            if self.discarding:
                self.discarding = False
                continue
            if len(line) > self.max_bytes:
                out.append(f"message exceeds the {self.max_bytes}-byte limit")
            elif line.strip():
                out.append(line)

    def _lsp(self) -> list[bytes | str]:
        out: list[bytes | str] = []
        while True:
            if self.expected is None:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    if len(self.buffer) > _HEADER_LIMIT:
                        self.buffer.clear()
                        out.append("frame header too long")
                    return out
                header = bytes(self.buffer[:end]).decode("ascii", "replace")
                del self.buffer[: end + 4]
                length = None
                for field in header.split("\r\n"):
                    name, _, value = field.partition(":")
                    if name.strip().lower() == "content-length" and value.strip().isdigit():
                        length = int(value.strip())
                if length is None:
                    out.append("frame header has no valid Content-Length")
                    continue
                if length > self.max_bytes:
                    out.append(f"message exceeds the {self.max_bytes}-byte limit")
                    self.discarding = True
                self.expected = length
            if len(self.buffer) < self.expected:
                if self.discarding:
                    self.expected -= len(self.buffer)
                    self.buffer.clear()
                return out
            body = bytes(self.buffer[: self.expected])
            del self.buffer[: self.expected]
            self.expected = None
            if self.discarding:
                self.discarding = False
            else:
                out.append(body)

    def encode(self, message: bytes) -> bytes:
        if self.mode == "lsp":
            return b"Content-Length: %d\r\n\r\n" % len(message) + message
        return message + b"\n"


def _parse(body: bytes) -> SessionMessage | dict[str, Any]:
    """A SessionMessage, or an error frame to send back instead."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return _error_frame(types.PARSE_ERROR, "Parse error: message is not valid UTF-8")
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return _error_frame(types.PARSE_ERROR, "Parse error: message is not valid JSON")
    if isinstance(obj, list):
        return _error_frame(types.INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not supported")
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(obj, by_name=False))
    except (ValidationError, RecursionError):
        request_id = obj.get("id") if isinstance(obj, dict) and _valid_id(obj.get("id")) else None
        return _error_frame(types.INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", request_id)


class StdioTransport:
    """Claims fds 0/1 and exposes the MCP SDK's read/write stream pair."""

    def __init__(self, max_message_bytes: int, stdin_fd: int = 0, stdout_fd: int = 1) -> None:
        self._framer = _Framer(max_message_bytes)
        self._in = os.dup(stdin_fd)
        self._out = os.dup(stdout_fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, stdin_fd)
        os.close(devnull)
        os.dup2(2, stdout_fd)
        self.eof = anyio.Event()
        self.idle = anyio.Event()
        self.idle.set()
        self.draining = False
        self._answered: OrderedDict[str, bytes] = OrderedDict()
        self._in_flight: set[str] = set()

    def drain(self) -> None:
        """Stop taking input (graceful shutdown); in-flight requests still get their answers."""
        self.draining = True

    def _track_outgoing(self, message: types.JSONRPCMessage, frame: bytes) -> str | None:
        """Remember an answer for id replay; returns its key, settled once the frame is written."""
        if not isinstance(message, (types.JSONRPCResponse, types.JSONRPCError)) or message.id is None:
            return None
        key = json.dumps(message.id)
        self._answered[key] = frame
        self._answered.move_to_end(key)
        while len(self._answered) > ANSWERED_CACHE:
            self._answered.popitem(last=False)
        return key

    def _settle(self, key: str) -> None:
        self._in_flight.discard(key)
        if not self._in_flight:
            self.idle.set()

    def _screen_incoming(self, message: SessionMessage) -> bytes | None:
        """A frame to answer with instead of forwarding (repeated id), or None to forward."""
        inner = message.message
        if isinstance(inner, types.JSONRPCNotification) and inner.method == "notifications/cancelled":
            request_id = (inner.params or {}).get("requestId")
            self._in_flight.discard(json.dumps(request_id))
            if not self._in_flight:
                self.idle.set()
        if not isinstance(inner, types.JSONRPCRequest):
            return None
        key = json.dumps(inner.id)
        if key in self._answered:
            log.info("request_id_replayed", id=inner.id)
            return self._answered[key]
        if key in self._in_flight:
            error = _error_frame(
                types.INVALID_REQUEST, "Invalid Request: this id is already in flight", inner.id
            )
            return self._frame(error)
        self._in_flight.add(key)
        self.idle = anyio.Event() if self.idle.is_set() else self.idle
        return None

    @contextlib.asynccontextmanager
    async def streams(
        self,
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
    ]:
        in_send, in_recv = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        out_send, out_recv = anyio.create_memory_object_stream[SessionMessage](16)
        frames_send, frames_recv = anyio.create_memory_object_stream[tuple[bytes, str | None]](64)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read_loop, in_send, frames_send.clone())
            tg.start_soon(self._encode_loop, out_recv, frames_send)
            tg.start_soon(self._write_loop, frames_recv)
            try:
                yield in_recv, out_send
            finally:
                tg.cancel_scope.cancel()

    async def _read_loop(
        self,
        in_send: MemoryObjectSendStream[SessionMessage | Exception],
        frames: MemoryObjectSendStream[tuple[bytes, str | None]],
    ) -> None:
        chunks_send, chunks = anyio.create_memory_object_stream[bytes](4)
        token = anyio.lowlevel.current_token()
        # A daemon thread, not a worker thread: a read blocked on stdin must never keep the
        # process alive at exit (SIGTERM, SIGINT) the way a joined executor thread would.
        threading.Thread(target=self._pump_stdin, args=(chunks_send, token), daemon=True).start()
        async with in_send, frames, chunks:
            async for chunk in chunks:
                if self.draining:
                    continue  # shutting down: input after SIGTERM is not served
                await self._dispatch_chunk(chunk, in_send, frames)
        self.eof.set()

    def _pump_stdin(
        self, chunks: MemoryObjectSendStream[bytes], token: anyio.lowlevel.EventLoopToken
    ) -> None:
        try:
            while chunk := os.read(self._in, _READ_CHUNK):
                anyio.from_thread.run(chunks.send, chunk, token=token)
        except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError, RuntimeError):
            pass
        with contextlib.suppress(RuntimeError):
            anyio.from_thread.run_sync(chunks.close, token=token)

    async def _dispatch_chunk(
        self,
        chunk: bytes,
        in_send: MemoryObjectSendStream[SessionMessage | Exception],
        frames: MemoryObjectSendStream[tuple[bytes, str | None]],
    ) -> None:
        for item in self._framer.feed(chunk):
            if isinstance(item, str):
                log.warning("frame_rejected", reason=item)
                await frames.send(
                    (self._frame(_error_frame(types.INVALID_REQUEST, f"Invalid Request: {item}")), None)
                )
                continue
            parsed = _parse(item)
            if isinstance(parsed, SessionMessage):
                reply = self._screen_incoming(parsed)
                if reply is None:
                    await in_send.send(parsed)
                else:
                    await frames.send((reply, None))
            else:
                log.warning("message_rejected", code=parsed["error"]["code"])
                await frames.send((self._frame(parsed), None))

    def _frame(self, payload: dict[str, Any]) -> bytes:
        return self._framer.encode(json.dumps(payload, separators=(",", ":")).encode())

    async def _encode_loop(
        self,
        out_recv: MemoryObjectReceiveStream[SessionMessage],
        frames: MemoryObjectSendStream[tuple[bytes, str | None]],
    ) -> None:
        async with out_recv, frames:
            async for message in out_recv:
                body = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                frame = self._framer.encode(body)
                await frames.send((frame, self._track_outgoing(message.message, frame)))

    async def _write_loop(self, frames: MemoryObjectReceiveStream[tuple[bytes, str | None]]) -> None:
        async with frames:
            async for frame, answered_key in frames:
                try:
                    await anyio.to_thread.run_sync(self._write_all, frame)
                    if answered_key is not None:
                        self._settle(answered_key)
                except OSError:
                    log.warning("stdout_closed")
                    self.eof.set()
                    return

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._out, view) :]
