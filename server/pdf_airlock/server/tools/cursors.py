"""Opaque continuation cursors: signed by this process, tied to the document and the arguments.

A cursor is ``base64url(body) "." base64url(tag)``, both unpadded. The body is JSON ``{"v", "d",
"t", "a", "p"}``: version, document digest prefix, tool, a digest of the arguments that define
the selection, and the tool's position. The tag is HMAC-SHA256 of the body under a key drawn at
random when the process starts (or derived from ``--cache-key-file``'s secret, ``share_key``, so
processes started with the same file take each other's cursors: a ``batch`` line's cursor in a
later ``call``), cut to ``_TAG_BYTES``; it is checked (``hmac.compare_digest``)
before the body is parsed. So a client can only hand back positions this process gave out: a
cursor edited (position, tool, document), forged, or issued by another process (an earlier run,
another server) is refused exactly like a malformed one, ``invalid_arguments`` "not one this
server issued". A genuine cursor for a different document (the file changed), tool or
arguments is refused as ``invalid_arguments`` too, saying which.

A result cached on disk (``pdf_airlock.server.app.cache``, with ``--cache-key-file``) may outlive the process
that signed its cursor. ``reissue_cursors`` signs a result's cursor again with this process's
key when the result is read back; ``cursor_cache_key`` is what a cache key holds for a
``cursor`` argument: the position it names, the same in every process, once its tag is checked.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from typing import Any, Final

from pdf_airlock.server.errors import ToolError

__all__ = [
    "cursor_cache_key",
    "decode_cursor",
    "encode_cursor",
    "reissue_cursors",
    "selection_key",
    "share_key",
]

_VERSION: Final = 2  # 1 was unsigned
_DIGEST_CHARS: Final = 32
_KEY_LABEL: Final = b"pdf-airlock cursor key"
_key = secrets.token_bytes(32)  # this process's, until ``share_key``; never stored, never logged
_TAG_BYTES: Final = 16
_SEPARATOR: Final = "."
_NOT_ISSUED: Final = "cursor is not one this server issued"


def selection_key(**selection: object) -> str:
    canonical = json.dumps(selection, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:_DIGEST_CHARS]


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    """Strict base64url: the one unpadded spelling ``_b64`` writes, or ValueError."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(raw) != text:
        raise ValueError("not canonical unpadded base64url")
    return raw


def share_key(secret: bytes) -> None:
    """Sign with a key derived from ``secret`` (the ``--cache-key-file`` secret) from now on."""
    global _key  # noqa: PLW0603 - one key per process, set once at start-up
    _key = hmac.new(secret, _KEY_LABEL, hashlib.sha256).digest()


def _tag(body: bytes) -> bytes:
    return hmac.new(_key, body, hashlib.sha256).digest()[:_TAG_BYTES]


def _signed(body: bytes) -> str:
    return f"{_b64(body)}{_SEPARATOR}{_b64(_tag(body))}"


def _checked_body(token: str) -> bytes:
    """The body of a cursor this process signed; ToolError when it is not one."""
    body_text, separator, tag_text = token.partition(_SEPARATOR)
    try:
        body, tag = _unb64(body_text), _unb64(tag_text)
    except ValueError as exc:  # binascii.Error, a non-ASCII str
        raise ToolError("invalid_arguments", _NOT_ISSUED) from exc
    if not separator or not hmac.compare_digest(tag, _tag(body)):
        raise ToolError("invalid_arguments", _NOT_ISSUED)
    return body


def _valid_position(position: Any) -> bool:
    return isinstance(position, dict) and all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in position.items()
    )


def _fields(body: bytes) -> dict[str, Any] | None:
    """The body's fields when it is a well-formed cursor body of this version, else None."""
    try:
        fields: Any = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(fields, dict) or fields.get("v") != _VERSION or not _valid_position(fields.get("p")):
        return None
    return fields


def encode_cursor(sha256: str, tool: str, key: str, position: dict[str, int]) -> str:
    body = {"v": _VERSION, "d": sha256[:_DIGEST_CHARS], "t": tool, "a": key, "p": position}
    return _signed(json.dumps(body, separators=(",", ":")).encode())


def decode_cursor(token: str, sha256: str, tool: str, key: str) -> dict[str, int]:
    fields = _fields(_checked_body(token))
    if fields is None:
        raise ToolError("invalid_arguments", _NOT_ISSUED)
    if fields.get("t") != tool:
        raise ToolError("invalid_arguments", f"{_NOT_ISSUED} for this tool")
    if fields.get("d") != sha256[:_DIGEST_CHARS]:
        raise ToolError("invalid_arguments", "cursor belongs to a different version of the document")
    if fields.get("a") != key:
        raise ToolError("invalid_arguments", "cursor was issued for different arguments (pages, engine)")
    position: dict[str, int] = fields["p"]
    return position


def cursor_cache_key(token: str) -> str:
    """What a result cache's key holds for a ``cursor`` argument: the body it signs, the same
    whichever process signed it. Its tag is checked first (ToolError as ``decode_cursor``), so
    a cursor this process did not issue is refused before any cache lookup, never served."""
    return _b64(_checked_body(token))


def reissue_cursors(result: dict[str, Any]) -> dict[str, Any] | None:
    """A tool result read back from the disk cache (``CallToolResult`` JSON, by alias) with its
    cursor signed by this process, in ``structuredContent`` and in the text blocks that quote
    it; the same result when it has no cursor; None when its cursor is not a well-formed one
    for the result's document (the entry is then of no use).

    Call it only on an entry whose own MAC ``pdf_airlock.server.app.cache`` has checked: the old tag cannot be
    (its process's key is gone), so the entry's MAC is what vouches for the body, as for every
    other field of the result. The body must still be a well-formed position of the result's
    document, the only kind ``decode_cursor`` lets through."""
    structured = result.get("structuredContent")
    token = structured.get("cursor") if isinstance(structured, dict) else None
    if token is None or not isinstance(structured, dict):
        return result
    if not isinstance(token, str):
        return None
    try:
        body = _unb64(token.partition(_SEPARATOR)[0])
    except ValueError:
        return None
    fields = _fields(body)
    if fields is None or fields.get("d") != str(structured.get("sha256", ""))[:_DIGEST_CHARS]:
        return None
    fresh = _signed(body)
    reissued = result | {"structuredContent": structured | {"cursor": fresh}}
    if isinstance(result.get("content"), list):
        reissued["content"] = [_quoting(block, token, fresh) for block in result["content"]]
    return reissued


def _quoting(block: Any, old: str, new: str) -> Any:
    """A content block with ``old`` replaced by ``new`` in its text (a text block's fallback)."""
    if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
        return block | {"text": block["text"].replace(old, new)}
    return block
