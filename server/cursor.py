"""Opaque continuation cursors, tied to the document's sha256 and the call's arguments.

A cursor is base64url JSON ``{"v", "d", "t", "a", "p"}``: version, document digest prefix, tool,
a digest of the arguments that define the selection, and the tool's position. A cursor from a
different document (the file changed) or different arguments is refused as invalid.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any, Final

from server.errors import ToolError

__all__ = ["decode_cursor", "encode_cursor", "selection_key"]

_VERSION: Final = 1
_DIGEST_CHARS: Final = 32


def selection_key(**selection: object) -> str:
    canonical = json.dumps(selection, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:_DIGEST_CHARS]


def encode_cursor(sha256: str, tool: str, key: str, position: dict[str, int]) -> str:
    body = {"v": _VERSION, "d": sha256[:_DIGEST_CHARS], "t": tool, "a": key, "p": position}
    raw = json.dumps(body, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(token: str, sha256: str, tool: str, key: str) -> dict[str, int]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        body: Any = json.loads(raw)
    except (binascii.Error, ValueError) as exc:
        raise ToolError("invalid_arguments", "cursor is not one this server issued") from exc
    if not isinstance(body, dict) or body.get("v") != _VERSION or body.get("t") != tool:
        raise ToolError("invalid_arguments", "cursor is not one this server issued for this tool")
    if body.get("d") != sha256[:_DIGEST_CHARS]:
        raise ToolError("invalid_arguments", "cursor belongs to a different version of the document")
    if body.get("a") != key:
        raise ToolError("invalid_arguments", "cursor was issued for different arguments (pages, engine)")
    position = body.get("p")
    if not isinstance(position, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in position.items()
    ):
        raise ToolError("invalid_arguments", "cursor position is malformed")
    return position
