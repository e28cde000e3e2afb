"""Result cache: a repeat of a call on the same bytes costs no parse.

Keyed by (document sha256, tool, normalised arguments); the password is part of the key only as
a salted digest, never stored. Bounded by total bytes of cached results (``--cache-mb``); least
recently used entries go first. Only successful results are cached. In memory only: nothing is
written to disk (the container's root filesystem is read-only).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import OrderedDict
from typing import Any, Final

import mcp_types as types

__all__ = ["ResultCache"]

_KEY_SALT: Final = os.urandom(16)


class ResultCache:
    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self._entries: OrderedDict[str, tuple[types.CallToolResult, int]] = OrderedDict()
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(sha256: str, tool: str, arguments: dict[str, Any]) -> str:
        normalised = {k: v for k, v in arguments.items() if k not in ("data", "password")}
        password = arguments.get("password")
        if password:
            normalised["password"] = hashlib.sha256(_KEY_SALT + str(password).encode()).hexdigest()
        body = json.dumps([sha256, tool, normalised], sort_keys=True, default=str)
        return hashlib.sha256(body.encode()).hexdigest()

    def get(self, key: str) -> types.CallToolResult | None:
        entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        self._entries.move_to_end(key)
        self.hits += 1
        return entry[0]

    def put(self, key: str, result: types.CallToolResult, size: int) -> None:
        if self.max_bytes <= 0 or size > self.max_bytes // 4:
            return
        if key in self._entries:
            self.used -= self._entries.pop(key)[1]
        self._entries[key] = (result, size)
        self.used += size
        while self.used > self.max_bytes:
            _, (_, evicted) = self._entries.popitem(last=False)
            self.used -= evicted
