"""The stdio transport: the only code that reads fd 0 or writes fd 1.

Invariants:
- fd 1 belongs to the protocol. At start the transport takes private duplicates of fds 0 and 1
  and points fd 0 at /dev/null and fd 1 at stderr, so a stray ``print`` or a library writing
  to stdout can never put a partial frame on the wire.
- Exactly one task writes frames, whole frames only, in the order they were queued.
- Framing (``pdf_airlock.server.stdio.framing``) is newline-delimited JSON, or LSP-style
  ``Content-Length:`` answered in kind; a frame it refuses gets an error and the server keeps
  serving.
- Each message goes to the first route that takes it: the handshake and a plain ``tools/list``
  answered before the SDK has loaded, a ``tools/call`` run directly on the app
  (``pdf_airlock.server.mcp.direct_calls``), everything else through the SDK.
- A request whose id repeats an answered request gets the earlier response again, without
  running anything (the last ``ANSWERED_CACHE`` answers are kept); a request whose id is still
  in flight gets -32600.
- ``drain()`` (SIGTERM) stops accepting input; ``idle`` is set when nothing is in flight.
- Two phases. ``running()`` reads and writes from the first moment, without the ``mcp`` SDK
  (it is not imported here at module level): decoded messages are queued, in order, and the
  opening ``initialize``/``server/discover`` is answered at once by ``pdf_airlock.server.mcp.handshake``.
  ``streams()``, entered once the SDK is loaded, validates the queue into SDK messages and
  hands it over; the SDK's own answer to the request answered early is dropped (it is the
  same answer: a mismatch is logged as an error).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Final

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread
import structlog
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from pdf_airlock.server.mcp.early_tools_list import early_tools_list, load_snapshot
from pdf_airlock.server.mcp.handshake import fast_answer, fast_frame
from pdf_airlock.server.stdio.framing import (
    INVALID_REQUEST,
    Body,
    Framer,
    Rejected,
    decode,
    error_frame,
    is_request,
    valid_id,
)

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

    from pdf_airlock.server.mcp.direct_calls import DirectCall, DirectCalls

__all__ = ["StdioTransport"]

log = structlog.get_logger(__name__)

_READ_CHUNK: Final = 1 << 16
ANSWERED_CACHE: Final = 64
_INBOX_DEPTH: Final = 64
_FRAMES_DEPTH: Final = 64
_PIPE_BYTES: Final = 1 << 20  # a bigger stdout pipe: a large answer leaves in one write
_F_SETPIPE_SZ: Final = 1031

# A decoded message waiting for the SDK: (message, in-flight key, answered early).
_Inbound = tuple[Any, str | None, bool]
_Frame = tuple[bytes, str | None]


class StdioTransport:
    """Claims fds 0/1; serves the handshake at once and the MCP SDK's stream pair once loaded."""

    def __init__(
        self, max_message_bytes: int, stdin_fd: int = 0, stdout_fd: int = 1, *, fast_handshake: bool = True
    ) -> None:
        self._framer = Framer(max_message_bytes)
        self._in = os.dup(stdin_fd)
        self._out = os.dup(stdout_fd)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, stdin_fd)
        os.close(devnull)
        os.dup2(2, stdout_fd)
        # A pipe or socket (what an MCP client gives us) is written without blocking, from the
        # event loop; anything else (a terminal, a file) from a worker thread.
        self._out_nonblocking = stat.S_ISFIFO(os.fstat(self._out).st_mode) or stat.S_ISSOCK(
            os.fstat(self._out).st_mode
        )
        if self._out_nonblocking:
            os.set_blocking(self._out, False)
            if stat.S_ISFIFO(os.fstat(self._out).st_mode):
                with contextlib.suppress(OSError):
                    import fcntl

                    fcntl.fcntl(self._out, _F_SETPIPE_SZ, _PIPE_BYTES)
        self.eof = anyio.Event()
        self.idle = anyio.Event()
        self.idle.set()
        self.protocol_ready = anyio.Event()
        self.draining = False
        self._fast_handshake = fast_handshake
        self._seen_request = False
        self._early_key: str | None = None
        self._answered: OrderedDict[str, bytes] = OrderedDict()
        self._in_flight: set[str] = set()
        self.protocol_version: str | None = None  # negotiated by an early-answered initialize
        self._fast: DirectCalls | None = None
        self._fast_group: anyio.abc.TaskGroup | None = None
        self._fast_scopes: dict[str, anyio.CancelScope] = {}
        self._tools_snapshot: dict[str, Any] | None = None  # loaded at the first early tools/list
        self._listed_early = False
        self._unwritten = 0  # frames handed to the write loop and not yet written whole
        self._out_closed = False
        self._frames_send, self._frames_recv = anyio.create_memory_object_stream[_Frame](_FRAMES_DEPTH)
        self._inbox_send, self._inbox_recv = anyio.create_memory_object_stream[_Inbound](_INBOX_DEPTH)

    def drain(self) -> None:
        """Stop taking input (graceful shutdown); in-flight requests still get their answers."""
        self.draining = True

    def _remember(self, key: str, frame: bytes) -> None:
        self._answered[key] = frame
        self._answered.move_to_end(key)
        while len(self._answered) > ANSWERED_CACHE:
            self._answered.popitem(last=False)

    def _settle(self, key: str) -> None:
        self._in_flight.discard(key)
        if not self._in_flight:
            self.idle.set()

    def _screen_incoming(self, obj: Any) -> tuple[bytes | None, str | None]:
        """A frame to answer with instead of forwarding (repeated id), or the in-flight key."""
        if isinstance(obj, dict) and obj.get("method") == "notifications/cancelled" and "id" not in obj:
            params = obj.get("params")
            request_id = params.get("requestId") if isinstance(params, dict) else None
            self._in_flight.discard(json.dumps(request_id))
            scope = self._fast_scopes.get(json.dumps(request_id))
            if scope is not None:
                scope.cancel()  # a direct call: never answered, as the SDK does
            if not self._in_flight:
                self.idle.set()
        if not is_request(obj):
            return None, None
        key = json.dumps(obj["id"])
        if key in self._answered:
            log.info("request_id_replayed", id=obj["id"] if valid_id(obj["id"]) else None)
            return self._answered[key], None
        if key in self._in_flight:
            request_id = obj["id"] if valid_id(obj["id"]) else None
            error = error_frame(INVALID_REQUEST, "Invalid Request: this id is already in flight", request_id)
            return self._frame(error), None
        self._in_flight.add(key)
        self.idle = anyio.Event() if self.idle.is_set() else self.idle
        return None, key

    # -- phase 1: bytes in and out, no SDK -------------------------------------------------

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Read stdin and write stdout until the context exits; input is queued for the SDK."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._read_loop)
            tg.start_soon(self._write_loop)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _read_loop(self) -> None:
        async with self._inbox_send:
            async for chunk in self._input_chunks():
                if self.draining:
                    continue  # shutting down: input after SIGTERM is not served
                await self._dispatch(self._framer.feed(chunk))
            if not self.draining:
                await self._dispatch(self._framer.finish())
        self.eof.set()

    async def _input_chunks(self) -> AsyncIterator[bytes]:
        """Chunks of stdin until EOF. A pipe or socket (what an MCP client gives us) is read
        without blocking, from the event loop (no thread hand-off per message); anything else
        (a terminal, a file: not pollable) from a daemon thread."""
        mode = os.fstat(self._in).st_mode
        if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
            os.set_blocking(self._in, False)
            while True:
                try:
                    chunk = os.read(self._in, _READ_CHUNK)
                except BlockingIOError:
                    await anyio.wait_readable(self._in)
                    continue
                except OSError:
                    return
                if not chunk:
                    return
                yield chunk
        chunks_send, chunks = anyio.create_memory_object_stream[bytes](4)
        token = anyio.lowlevel.current_token()
        # A daemon thread, not a worker thread: a read blocked on stdin must never keep the
        # process alive at exit (SIGTERM, SIGINT) the way a joined executor thread would.
        threading.Thread(target=self._pump_stdin, args=(chunks_send, token), daemon=True).start()
        async with chunks:
            async for chunk in chunks:
                yield chunk

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

    async def _dispatch(self, items: list[Body | Rejected]) -> None:
        for item in items:
            if isinstance(item, Rejected):
                log.warning("frame_rejected", reason=item.reason, id=item.request_id)
                rejected = error_frame(INVALID_REQUEST, f"Invalid Request: {item.reason}", item.request_id)
                await self._queue(self._frame(rejected), None)
                continue
            obj, error = decode(item)
            if error is not None:
                log.warning("message_rejected", code=error["error"]["code"])
                await self._queue(self._frame(error), None)
                continue
            reply, key = self._screen_incoming(obj)
            if reply is not None:
                await self._queue(reply, None)
                continue
            if self._start_fast(obj, key):
                continue
            if key is not None and await self._list_early(obj, key):
                continue
            early = key is not None and await self._answer_early(obj, key)
            await self._inbox_send.send((obj, key, early))

    async def _answer_early(self, obj: Any, key: str) -> bool:
        """Answer the connection's first request here if it is a handshake we can answer."""
        if self._seen_request:
            return False
        self._seen_request = True
        result = fast_answer(obj) if self._fast_handshake else None
        if result is None:
            return False
        frame = self._framer.encode(fast_frame(obj, result))
        self._remember(key, frame)
        self._early_key = key
        if obj.get("method") == "initialize":
            self.protocol_version = str(result.get("protocolVersion"))
        await self._queue(frame, key)
        log.debug("handshake_answered_early", method=obj.get("method"))
        return True

    async def _list_early(self, obj: Any, key: str) -> bool:
        """A plain ``tools/list`` while the SDK is still loading, answered from the snapshot of
        its answer (``pdf_airlock.server.mcp.early_tools_list``); once the SDK is up, the direct
        route or the SDK does."""
        if not self._fast_handshake or self.protocol_ready.is_set():
            return False
        if self._tools_snapshot is None:
            self._tools_snapshot = load_snapshot()
        body = early_tools_list(obj, self.protocol_version, self._tools_snapshot)
        if body is None:
            return False
        frame = self._framer.encode(body)
        self._remember(key, frame)
        self._listed_early = True
        await self._queue(frame, key)
        log.debug("tools_list_answered_early")
        return True

    def _check_tools_snapshot(self, fast: DirectCalls) -> None:
        """Once the SDK is up: the snapshot a ``tools/list`` was answered from must be the
        answer the SDK's rules make now (``tests/protocol/test_handshake.py`` keeps the file current)."""
        version, snapshot = self.protocol_version, self._tools_snapshot
        if not (self._listed_early and snapshot and version):
            return
        if fast.list_result(version) != snapshot.get("result"):
            log.error("early_tools_list_mismatch", version=version)

    def _frame(self, payload: dict[str, Any]) -> bytes:
        return self._framer.encode(json.dumps(payload, separators=(",", ":")).encode())

    def _utf8_frame(self, payload: dict[str, Any]) -> bytes:
        """Serialised as the SDK's path serialises it (pydantic's JSON writer, raw UTF-8, about
        ten times faster than ``json.dumps`` on long text). Loaded with the SDK, so imported
        here. A lone surrogate, never valid on the wire, becomes '?'."""
        from pydantic_core import PydanticSerializationError, to_json

        try:
            body = to_json(payload)
        except PydanticSerializationError:
            text = json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
            body = text.encode("utf-8", "replace")
        return self._framer.encode(body)

    async def _queue(self, frame: bytes, key: str | None) -> None:
        """Write ``frame`` now when nothing is ahead of it, else hand it to the write loop,
        without a round of the event loop when there is room (``send`` always yields first);
        a cancelled caller still raises here.

        Written now, the answer leaves before the tasks its call cancelled unwind (a two-ended read's
        children, ``pdf_airlock.server.tools.read_two_ended``): they were scheduled first and would otherwise
        run before the write loop's turn. What a full pipe does not take goes to the loop."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        if self._out_closed:
            return
        if self._unwritten == 0 and self._out_nonblocking:
            written = self._write_now(frame)
            if written is None:
                return
            if written == len(frame):
                if key is not None:
                    self._settle(key)
                return
            frame = frame[written:]
        self._unwritten += 1
        try:
            self._frames_send.send_nowait((frame, key))  # a cut frame's rest always fits: none queued
        except anyio.WouldBlock:
            try:
                await self._frames_send.send((frame, key))
            except BaseException:
                self._unwritten -= 1
                raise

    def _write_now(self, frame: bytes) -> int | None:
        """As much of ``frame`` as the pipe takes now: the bytes written, or None when stdout
        is closed (then the server stops, as from the write loop)."""
        view = memoryview(frame)
        try:
            while view:
                view = view[os.write(self._out, view) :]
        except BlockingIOError:
            pass
        except OSError:
            self._stdout_closed()
            return None
        return len(frame) - len(view)

    def _stdout_closed(self) -> None:
        log.warning("stdout_closed")
        self._out_closed = True
        self.eof.set()

    async def _write_loop(self) -> None:
        async with self._frames_recv:
            async for frame, answered_key in self._frames_recv:
                try:
                    await self._write_all(frame)
                except OSError:
                    self._stdout_closed()
                    return
                finally:
                    self._unwritten -= 1
                if answered_key is not None:
                    self._settle(answered_key)

    async def _write_all(self, data: bytes) -> None:
        if not self._out_nonblocking:
            await anyio.to_thread.run_sync(self._write_blocking, data)
            return
        view = memoryview(data)
        while view:
            try:
                view = view[os.write(self._out, view) :]
            except BlockingIOError:
                await anyio.wait_writable(self._out)

    def _write_blocking(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._out, view) :]

    # -- phase 2: the SDK's stream pair ----------------------------------------------------

    @contextlib.asynccontextmanager
    async def streams(
        self, fast: DirectCalls | None = None
    ) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]
    ]:
        """The SDK's read/write stream pair; the input queued so far is delivered first, in order.
        ``tools/call`` requests that ``fast`` accepts are run directly
        (``pdf_airlock.server.mcp.direct_calls``).
        Call once the SDK is imported (this imports from it)."""
        from mcp.shared.message import SessionMessage

        in_send, in_recv = anyio.create_memory_object_stream[SessionMessage | Exception](16)
        out_send, out_recv = anyio.create_memory_object_stream[SessionMessage](16)
        if fast is not None:
            self._check_tools_snapshot(fast)
        async with anyio.create_task_group() as tg:
            self._fast, self._fast_group = fast, tg
            tg.start_soon(self._forward_loop, in_send)
            tg.start_soon(self._encode_loop, out_recv)
            self.protocol_ready.set()
            try:
                yield in_recv, out_send
            finally:
                tg.cancel_scope.cancel()

    async def _forward_loop(self, in_send: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        import mcp_types as types
        from mcp.shared.message import SessionMessage
        from pydantic import ValidationError

        async with in_send, self._inbox_recv:
            async for obj, key, _early in self._inbox_recv:
                if self._start_fast(obj, key):
                    continue
                try:
                    message = types.jsonrpc_message_adapter.validate_python(obj, by_name=False)
                except (ValidationError, RecursionError):
                    request_id = obj.get("id") if isinstance(obj, dict) and valid_id(obj.get("id")) else None
                    text = "Invalid Request: not a JSON-RPC 2.0 message"
                    error = error_frame(INVALID_REQUEST, text, request_id)
                    log.warning("message_rejected", code=INVALID_REQUEST)
                    await self._queue(self._frame(error), key)
                    continue
                await in_send.send(SessionMessage(message))

    def _start_fast(self, obj: Any, key: str | None) -> bool:
        """Run ``obj`` on the direct ``tools/call`` route if it takes it (only once the SDK's
        streams are up: queued input reaches here from ``_forward_loop``, later input from
        ``_dispatch`` without the queue)."""
        if self._fast is None or self._fast_group is None or key is None:
            return False
        call = self._fast.route(obj, self.protocol_version)
        if call is None:
            return False
        log.debug(
            "tool_call_direct" if call.method == "tools/call" else "tools_list_direct", id=call.request_id
        )
        # Registered now, not when the task first runs: a cancel that arrives before then
        # (same chunk, or the call is queued) must still find it.
        self._fast_scopes[key] = anyio.CancelScope()
        self._fast_group.start_soon(self._run_fast, call, key)
        return True

    async def _run_fast(self, call: DirectCall, key: str) -> None:
        """One direct ``tools/call``: progress and the answer go out through the frame queue, in
        order; a cancelled call is settled without an answer."""
        progress = None
        if call.progress_token is not None:
            token = call.progress_token

            async def progress(done: int, total: int) -> None:
                params = {"progressToken": token, "progress": done, "total": total}
                params["message"] = f"page {done} of {total}"
                notification = {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
                await self._queue(self._utf8_frame(notification), None)

        with self._fast_scopes[key] as scope:
            try:
                result = await call.run(progress)
            finally:
                del self._fast_scopes[key]
            frame = self._utf8_frame({"jsonrpc": "2.0", "id": call.request_id, "result": result})
            self._remember(key, frame)
            await self._queue(frame, key)
        if scope.cancelled_caught:
            self._settle(key)

    async def _encode_loop(self, out_recv: MemoryObjectReceiveStream[SessionMessage]) -> None:
        import mcp_types as types

        async with out_recv:
            async for message in out_recv:
                inner = message.message
                body = inner.model_dump_json(by_alias=True, exclude_unset=True).encode()
                frame = self._framer.encode(body)
                key = None
                if isinstance(inner, (types.JSONRPCResponse, types.JSONRPCError)) and inner.id is not None:
                    key = json.dumps(inner.id)
                    if key == self._early_key:  # already answered by pdf_airlock.server.mcp.handshake
                        self._early_key = None
                        if frame != self._answered.get(key):
                            failed = isinstance(inner, types.JSONRPCError)
                            log.error("early_handshake_mismatch", sdk_error=failed)
                        continue
                    self._remember(key, frame)
                await self._queue(frame, key)
