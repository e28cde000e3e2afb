"""Answers delivered as resources: kept for the principal that asked, read back in parts.

A text tool called with ``deliver: "resource"`` (``pdf_airlock.server.app.delivery``) keeps its whole
answer here and answers with a ``resource_link`` to ``pdf-airlock://result/<id>``;
``resources/read`` of that URI returns the first part, ``...?part=N`` the N-th (each at most
``--resource-part-chars`` characters, cut at a line end where one is near). The id is 128 random
bits; a read finds an answer only for the principal that made it and before it expires
(``--resource-ttl``). A read that finds nothing (no such id, expired, another principal's) is
the same error whichever it is, so a URI tells nobody else whether it exists.

Bounded like the result cache (``pdf_airlock.server.app.cache``) and under its integrity rules:

- In memory, up to ``--resource-mb`` of text, least recently used first out; one answer may take
  at most a quarter of it (a larger one is refused with ``output_limit``).
- On disk only with ``--cache-dir``: in its ``resources/`` folder (0700, opened once, every
  operation through that descriptor, regular files only), up to ``--resource-disk-mb``, one file
  per answer under a name derived from its id, each carrying an HMAC over its name and body
  under the cache's secret (``--cache-key-file``, or random per process): an entry edited,
  planted or renamed is removed and read as missing. Answers from documents opened with a
  password stay in memory: decrypted text never lands on disk. The owner is kept as a keyed
  digest, never as a name.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Final

import structlog

from pdf_airlock.server.app.cache import DiskStore

__all__ = ["PART_CUT_SHARE", "RESOURCE_URI", "Delivered", "ResourceStore", "parse_uri"]

log = structlog.get_logger("pdf_airlock.resources")

RESOURCE_URI: Final = "pdf-airlock://result/"
RESOURCE_TEMPLATE: Final = RESOURCE_URI + "{id}{?part}"
_ID_BYTES: Final = 16
_URI_PATTERN: Final = re.compile(r"pdf-airlock://result/([A-Za-z0-9_-]{22})(?:\?part=([1-9][0-9]{0,6}))?")
_OWNER_LABEL: Final = b"pdf-airlock resource owner"
_NAME_LABEL: Final = b"pdf-airlock resource name"
_DISK_FOLDER: Final = "resources"
_MAX_SHARE: Final = 4  # one answer may take at most this share of the memory budget
PART_CUT_SHARE: Final = 0.5  # a part ends at the last line end in its second half, if any
INDEX_ENTRIES: Final = 4096  # answers resources/list can name (newest kept)
MAX_LISTED: Final = 100


def parse_uri(uri: str) -> tuple[str, int] | None:
    """(id, part) of a ``pdf-airlock://result/`` URI; part 1 when it names none; None otherwise."""
    matched = _URI_PATTERN.fullmatch(uri)
    if matched is None:
        return None
    return matched.group(1), int(matched.group(2) or 1)


def _cuts(text: str, part_chars: int) -> list[int]:
    """Where each part after the first starts: at most ``part_chars`` characters a part, cut
    after the last line end in a part's second half when there is one."""
    starts: list[int] = []
    at = 0
    while len(text) - at > part_chars:
        end = at + part_chars
        newline = text.rfind("\n", at + int(part_chars * PART_CUT_SHARE), end)
        at = newline + 1 if newline >= 0 else end
        starts.append(at)
    return starts


@dataclass(slots=True)
class Delivered:
    """One delivered answer: what its link says, and its text."""

    id: str
    owner: str  # keyed digest of the principal
    tool: str
    source: str
    sha256: str
    mime_type: str
    title: str
    text: str
    pages: int
    headings: list[tuple[int, str]]
    complete: bool
    cursor: str | None
    expires: float  # Unix seconds
    cuts: list[int] = field(default_factory=list)
    private: bool = False  # from a document opened with a password: never on disk

    @property
    def uri(self) -> str:
        return RESOURCE_URI + self.id

    @property
    def parts(self) -> int:
        return len(self.cuts) + 1

    @property
    def size_bytes(self) -> int:
        return len(self.text.encode("utf-8", "replace"))

    def part_uri(self, part: int) -> str:
        return self.uri if part == 1 else f"{self.uri}?part={part}"

    def part(self, part: int) -> str:
        """The text of part ``part`` (1-based; the caller checks the range)."""
        bounds = [0, *self.cuts, len(self.text)]
        return self.text[bounds[part - 1] : bounds[part]]


class ResourceStore:
    """The delivered answers of one server process."""

    def __init__(
        self,
        max_bytes: int,
        ttl_s: float,
        part_chars: int,
        secret: bytes,
        *,
        directory: Path | None = None,
        disk_max_bytes: int = 0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.max_bytes = max_bytes
        self.ttl_s = ttl_s
        self.part_chars = part_chars
        self.used = 0
        self._clock = clock
        self._owner_key = hmac.new(secret, _OWNER_LABEL, hashlib.sha256).digest()
        self._name_key = hmac.new(secret, _NAME_LABEL, hashlib.sha256).digest()
        self._memory: OrderedDict[str, Delivered] = OrderedDict()
        self._index: OrderedDict[str, Delivered] = OrderedDict()  # without text: what list shows
        self._reuse: dict[tuple[str, str], str] = {}  # (owner, the call's cache key) -> id
        self._disk: DiskStore | None = None
        if directory is not None and disk_max_bytes > 0:
            self._disk = DiskStore(directory / _DISK_FOLDER, disk_max_bytes, secret)

    @property
    def max_answer_bytes(self) -> int:
        return self.max_bytes // _MAX_SHARE

    def close(self) -> None:
        if self._disk is not None:
            self._disk.close()

    def owner(self, principal: str) -> str:
        return hmac.new(
            self._owner_key, principal.encode("utf-8", "surrogatepass"), hashlib.sha256
        ).hexdigest()

    def _disk_key(self, resource_id: str) -> str:
        return "r" + hmac.new(self._name_key, resource_id.encode(), hashlib.sha256).hexdigest()

    def put(self, principal: str, key: str, fields: dict[str, Any], text: str, *, private: bool) -> Delivered:
        """Keep ``text`` for ``principal`` (``fields``: the rest of ``Delivered``); a live answer
        of the same principal and call (``key``) is handed back instead of a second copy."""
        owner = self.owner(principal)
        known = self._reuse.get((owner, key))
        if known is not None:
            again = self.get(known, principal)
            if again is not None:
                return again
        delivered = Delivered(
            id=secrets.token_urlsafe(_ID_BYTES),
            owner=owner,
            text=text,
            expires=self._clock() + self.ttl_s,
            cuts=_cuts(text, self.part_chars),
            private=private,
            **fields,
        )
        self._remember(delivered)
        self._reuse[owner, key] = delivered.id
        if len(self._reuse) > 2 * INDEX_ENTRIES:  # only answers still listed can be handed back
            self._reuse = {k: rid for k, rid in self._reuse.items() if rid in self._index}
        if self._disk is not None and not private:
            self._disk.put(self._disk_key(delivered.id), asdict(delivered))
        return delivered

    def get(self, resource_id: str, principal: str) -> Delivered | None:
        """The answer ``resource_id`` if ``principal`` made it and it has not expired."""
        self._expire()
        delivered = self._memory.get(resource_id)
        if delivered is not None:
            self._memory.move_to_end(resource_id)
        else:
            delivered = self._from_disk(resource_id)
        if delivered is None or not hmac.compare_digest(delivered.owner, self.owner(principal)):
            return None
        return delivered

    def listed(self, principal: str) -> list[Delivered]:
        """The principal's live answers, newest first (at most ``MAX_LISTED``)."""
        self._expire()
        owner = self.owner(principal)
        found = [entry for entry in reversed(self._index.values()) if entry.owner == owner]
        return found[:MAX_LISTED]

    def _remember(self, delivered: Delivered) -> None:
        self._index[delivered.id] = delivered
        while len(self._index) > INDEX_ENTRIES:
            self._index.popitem(last=False)
        size = delivered.size_bytes
        if size > self.max_answer_bytes:
            return
        self._memory[delivered.id] = delivered
        self.used += size
        while self.used > self.max_bytes:
            _, evicted = self._memory.popitem(last=False)
            self.used -= evicted.size_bytes

    def _expire(self) -> None:
        now = self._clock()
        for entries in (self._memory, self._index):
            for resource_id in [rid for rid, entry in entries.items() if entry.expires <= now]:
                entry = entries.pop(resource_id)
                if entries is self._memory:
                    self.used -= entry.size_bytes
                    if self._disk is not None:
                        self._disk.discard(self._disk_key(resource_id))

    def _from_disk(self, resource_id: str) -> Delivered | None:
        if self._disk is None:
            return None
        key = self._disk_key(resource_id)
        untrusted = self._disk.get(key)  # its MAC checked: an entry this store wrote under this name
        if untrusted is None:
            return None
        try:
            untrusted["headings"] = [(int(level), str(text)) for level, text in untrusted["headings"]]
            delivered = Delivered(**untrusted)
        except (TypeError, ValueError, KeyError):
            self._disk.reject(key, "malformed")
            return None
        if delivered.id != resource_id or delivered.expires <= self._clock():
            self._disk.discard(key)
            return None
        self._remember(delivered)
        return delivered
