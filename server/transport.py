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
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any, Final

import anyio
import anyio.to_thread
import mcp_types as types
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

__all__ = ["StdioTransport"]

log = structlog.get_logger("pdf_airlock.transport")

_READ_CHUNK: Final = 1 << 16
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

    @contextlib.asynccontextmanager
    async def streams(
        self,
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
    ]:
        in_send, in_recv = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        out_send, out_recv = anyio.create_memory_object_stream[SessionMessage](16)
        frames_send, frames_recv = anyio.create_memory_object_stream[bytes](64)
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
        frames: MemoryObjectSendStream[bytes],
    ) -> None:
        async with in_send, frames:
            while True:
                chunk = await anyio.to_thread.run_sync(os.read, self._in, _READ_CHUNK, abandon_on_cancel=True)
                if not chunk:
                    break
                for item in self._framer.feed(chunk):
                    if isinstance(item, str):
                        log.warning("frame_rejected", reason=item)
                        await frames.send(
                            self._frame(_error_frame(types.INVALID_REQUEST, f"Invalid Request: {item}"))
                        )
                        continue
                    parsed = _parse(item)
                    if isinstance(parsed, SessionMessage):
                        await in_send.send(parsed)
                    else:
                        log.warning("message_rejected", code=parsed["error"]["code"])
                        await frames.send(self._frame(parsed))
        self.eof.set()

    def _frame(self, payload: dict[str, Any]) -> bytes:
        return self._framer.encode(json.dumps(payload, separators=(",", ":")).encode())

    async def _encode_loop(
        self, out_recv: MemoryObjectReceiveStream[SessionMessage], frames: MemoryObjectSendStream[bytes]
    ) -> None:
        async with out_recv, frames:
            async for message in out_recv:
                body = message.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                await frames.send(self._framer.encode(body))

    async def _write_loop(self, frames: MemoryObjectReceiveStream[bytes]) -> None:
        async with frames:
            async for frame in frames:
                try:
                    await anyio.to_thread.run_sync(self._write_all, frame)
                except OSError:
                    log.warning("stdout_closed")
                    self.eof.set()
                    return

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._out, view) :]
