"""Framing of the stdio transport: the input byte stream cut into JSON-RPC messages, and
messages encoded for the output, with no I/O of its own (``pdf_airlock.server.stdio.transport`` reads
and writes the fds).

- Framing is newline-delimited JSON (the MCP stdio standard). LSP-style ``Content-Length:``
  framing is detected from the first bytes and answered in kind.
- A frame over ``max_message_bytes`` is discarded with a -32600 error, which carries the
  request's id when the frame's first bytes show it beyond doubt (else ``id: null``); invalid
  UTF-8 or JSON gets -32700 with ``id: null``; a JSON array (batch) gets -32600.
- Linear in the input, and a frame costs about its size in memory (``bench/studies/framer.py``).
"""

from __future__ import annotations

import codecs
import contextlib
import json
import re
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "INVALID_REQUEST",
    "PARSE_ERROR",
    "Body",
    "Framer",
    "Rejected",
    "decode",
    "error_frame",
    "is_request",
    "valid_id",
]

_HEADER_LIMIT: Final = 8192
_HEADER_END: Final = b"\r\n\r\n"
_CONTENT_LENGTH: Final = b"content-length:"
# How much of an oversized frame's start is read for its request id (``_leading_id``).
_ID_PREFIX_BYTES: Final = 4096
_SPACE: Final = re.compile(rb"[ \t\n\r\x0b\x0c]*")  # what bytes.strip() strips
_JSON_SPACE: Final = re.compile(r"[ \t\n\r]*")
_JSON: Final = json.JSONDecoder()
# JSON-RPC error codes (mcp_types has them too; this module must not import it at load time).
PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
# A message body as the framer cuts it: a long one is the read buffer itself, handed over.
Body = bytes | bytearray


def error_frame(code: int, message: str, request_id: Any = None, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


def valid_id(value: Any) -> bool:
    return isinstance(value, (str, int)) and not isinstance(value, bool)


@dataclass(frozen=True, slots=True)
class Rejected:
    """A frame the framer refused, with the request id read from its start (None when unsure)."""

    reason: str
    request_id: str | int | None = None


def _skip_space(text: str, index: int) -> int:
    match = _JSON_SPACE.match(text, index)
    return match.end() if match else index


def _whole_members(text: str) -> list[tuple[str, Any]]:
    """The members of the JSON object ``text`` starts, in order, as far as each is whole (parsed
    by the json module and followed by its ``,`` or the closing ``}``); [] when ``text`` does
    not start an object."""
    index = _skip_space(text, 0)
    if text[index : index + 1] != "{":
        return []
    members: list[tuple[str, Any]] = []
    try:
        index += 1
        while True:
            name, index = _JSON.raw_decode(text, _skip_space(text, index))
            index = _skip_space(text, index)
            if not isinstance(name, str) or text[index] != ":":
                return []
            value, index = _JSON.raw_decode(text, _skip_space(text, index + 1))
            index = _skip_space(text, index)
            if text[index] not in ",}":
                return []
            members.append((name, value))
            if text[index] == "}":
                return members
            index += 1
    except (ValueError, RecursionError, IndexError):
        return members  # the start ends inside a member (or is not JSON from there on)


def _leading_id(head: bytes | bytearray) -> str | int | None:
    """The id of the request whose frame starts with ``head``; None when unsure: the whole
    top-level members in ``head`` must hold exactly one ``"id"`` (a string or an integer) and
    one string ``"method"``, so a response, a notification or a non-object gets None."""
    try:
        text = codecs.getincrementaldecoder("utf-8")().decode(head)  # a cut last character waits
    except UnicodeDecodeError:
        return None
    members = _whole_members(text)
    ids = [value for name, value in members if name == "id"]
    methods = [value for name, value in members if name == "method"]
    if len(ids) != 1 or len(methods) != 1 or not isinstance(methods[0], str) or not valid_id(ids[0]):
        return None
    request_id: str | int = ids[0]
    return request_id


def _content_length(header: bytes | bytearray) -> int | None:
    """The body length a frame header announces; None when it has no valid Content-Length."""
    length = None
    for field in header.decode("ascii", "replace").split("\r\n"):
        name, _, value = field.partition(":")
        if name.strip().lower() == "content-length" and value.strip().isdigit():
            with contextlib.suppress(ValueError):  # more digits than int() takes: not valid
                length = int(value.strip())
    return length


class Framer:
    """Splits the input byte stream into message bodies; detects the framing once.

    Linear in its input: every byte is searched for a delimiter once (``searched`` counts
    them), and a body that fills the read buffer is the buffer itself, handed over uncopied,
    so a frame costs about its own size in memory. A body sharing the buffer with others is
    copied out; the rest kept after a handed-over body is never longer than it. Serves
    ``bench/studies/framer.py`` (16/64/128 MiB lines)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.mode: str | None = None
        self.searched = 0  # bytes searched for a delimiter, over the framer's life
        self._buffer = bytearray()
        self._scanned = 0  # the buffer's first bytes, searched already: no delimiter among them
        self._lead = 0  # while the framing is unknown: the leading whitespace seen
        self._discarding = False  # ndjson: inside an oversized line, dropped up to its newline
        self._expected: int | None = None  # lsp: the length the current header announced
        self._skip = 0  # lsp: bytes of an oversized body still to drop
        self._head: bytearray | None = None  # lsp: an oversized body's start, for its id
        self._head_size = 0

    def feed(self, chunk: bytes) -> list[Body | Rejected]:
        """Return complete bodies and refused frames, in order."""
        if self.mode is None:
            self._buffer += chunk
            self.mode = self._detect()
            if self.mode is None:
                return []
            chunk = b""
        return self._lsp(chunk) if self.mode == "lsp" else self._ndjson(chunk)

    def finish(self) -> list[Body | Rejected]:
        """At the end of input: the refusal of an oversized frame whose start never came whole."""
        head, self._head = self._head, None
        return [] if head is None else [self._oversized(head)]

    def _detect(self) -> str | None:
        """The framing, from the first bytes that are not whitespace; None while they may still
        begin a ``Content-Length:`` header (whitespace alone past ``max_bytes`` is taken as
        newline-delimited: its oversized line is then refused like any other)."""
        match = _SPACE.match(self._buffer, self._lead)
        self._lead = match.end() if match else self._lead
        start = bytes(self._buffer[self._lead : self._lead + len(_CONTENT_LENGTH)]).lower()
        if len(start) < len(_CONTENT_LENGTH) and _CONTENT_LENGTH.startswith(start):
            return None if len(self._buffer) <= self.max_bytes else "ndjson"
        return "lsp" if start == _CONTENT_LENGTH else "ndjson"

    def _find(self, data: bytes | bytearray, delimiter: bytes, start: int) -> int:
        """``data.find(delimiter, start)``, counting the bytes searched."""
        found = data.find(delimiter, start)
        self.searched += (found + len(delimiter) if found >= 0 else len(data)) - start
        return found

    def _ndjson(self, chunk: bytes) -> list[Body | Rejected]:
        out: list[Body | Rejected] = []
        if self._discarding:
            newline = self._find(chunk, b"\n", 0)
            if newline < 0:
                return out
            self._discarding = False
            chunk = chunk[newline + 1 :]
        self._buffer += chunk
        start = 0
        while (newline := self._find(self._buffer, b"\n", max(start, self._scanned))) >= 0:
            if newline - start > self.max_bytes:
                out.append(self._oversized(self._buffer[start : start + _ID_PREFIX_BYTES]))
                start = newline + 1
            elif _SPACE.fullmatch(self._buffer, start, newline):
                start = newline + 1  # a blank line
            else:
                body, start = self._cut(start, newline, newline + 1)
                out.append(body)
        self._keep(start)
        if len(self._buffer) > self.max_bytes:
            out.append(self._oversized(self._buffer[:_ID_PREFIX_BYTES]))
            self._discarding = True
            self._buffer = bytearray()
        self._scanned = len(self._buffer)
        return out

    def _lsp(self, chunk: bytes) -> list[Body | Rejected]:
        out: list[Body | Rejected] = []
        chunk = self._drop(chunk, out)
        if self._skip:
            return out
        self._buffer += chunk
        start = 0
        while True:
            if self._expected is None:
                since = max(start, self._scanned - len(_HEADER_END) + 1)  # a delimiter may straddle
                end = self._find(self._buffer, _HEADER_END, since)
                if end < 0:
                    if len(self._buffer) - start > _HEADER_LIMIT:
                        out.append(Rejected("frame header too long"))
                        start = len(self._buffer)
                    break
                length = _content_length(self._buffer[start:end])
                start = end + len(_HEADER_END)
                if length is None:
                    out.append(Rejected("frame header has no valid Content-Length"))
                    continue
                if length > self.max_bytes:
                    rest = self._drop_from(length, bytes(self._buffer[start:]), out)
                    self._buffer, start, self._scanned = bytearray(rest), 0, 0
                    if self._skip:
                        break
                    continue
                self._expected = length
            if len(self._buffer) - start < self._expected:
                break
            end = start + self._expected
            body, start = self._cut(start, end, end)
            self._expected = None
            out.append(body)
        self._keep(start)
        self._scanned = len(self._buffer)
        return out

    def _drop_from(self, length: int, data: bytes, out: list[Body | Rejected]) -> bytes:
        """Start dropping an oversized body of ``length`` bytes; what of ``data`` is past it."""
        self._skip, self._head, self._head_size = length, bytearray(), min(length, _ID_PREFIX_BYTES)
        return self._drop(data, out)

    def _drop(self, chunk: bytes, out: list[Body | Rejected]) -> bytes:
        """Drop what is left of an oversized body from ``chunk``, its first bytes kept until
        the refusal (with the id read from them) is out; the rest of ``chunk``."""
        if not self._skip:
            return chunk
        taken = min(self._skip, len(chunk))
        self._skip -= taken
        if self._head is not None:
            self._head += chunk[: min(taken, self._head_size - len(self._head))]
            if len(self._head) >= self._head_size:
                out += self.finish()
        return chunk[taken:]

    def _cut(self, start: int, end: int, resume: int) -> tuple[Body, int]:
        """The body ``buffer[start:end]`` and where to go on: ``resume``, or 0 in a new buffer.

        A body at the buffer's start at least as long as what follows it is the buffer itself,
        cut to size; the rest, copied to a new buffer, is never longer than the body."""
        buffer = self._buffer
        if start == 0 and end >= len(buffer) - resume:
            self._buffer, self._scanned = buffer[resume:], 0
            del buffer[end:]
            return buffer, 0
        with memoryview(buffer) as view:
            return bytes(view[start:end]), resume

    def _keep(self, start: int) -> None:
        """Drop the buffer's first ``start`` bytes (consumed); an emptied buffer is let go."""
        if start >= len(self._buffer):
            self._buffer = bytearray()
        elif start:
            del self._buffer[:start]

    def _oversized(self, head: bytes | bytearray) -> Rejected:
        return Rejected(f"message exceeds the {self.max_bytes}-byte limit", _leading_id(head))

    def encode(self, message: bytes) -> bytes:
        if self.mode == "lsp":
            return b"Content-Length: %d\r\n\r\n" % len(message) + message
        return message + b"\n"


def decode(body: Body) -> tuple[Any, dict[str, Any] | None]:
    """The decoded JSON value, or an error frame to send back instead."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return None, error_frame(PARSE_ERROR, "Parse error: message is not valid UTF-8")
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError):
        return None, error_frame(PARSE_ERROR, "Parse error: message is not valid JSON")
    if isinstance(obj, list):
        return None, error_frame(INVALID_REQUEST, "Invalid Request: JSON-RPC batches are not supported")
    return obj, None


def is_request(obj: Any) -> bool:
    return isinstance(obj, dict) and "id" in obj and isinstance(obj.get("method"), str)
