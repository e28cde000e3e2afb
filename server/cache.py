"""Result cache: a repeat of a call on the same bytes costs no parse.

Keyed by (document sha256, tool, normalised arguments); inline ``data`` is never part of the key
and a password only as a salted digest, so neither is ever stored. Only successful results are
cached.

- In memory (always, unless ``--cache-mb 0``): bounded by the total size of cached results; least
  recently used entries go first.
- On disk (only with ``--cache-dir``; off by default, and the container's root filesystem is
  read-only): one JSON file per entry in a 0700 directory, written 0600 to a temporary name and
  renamed into place, so a reader sees a whole entry or none. An entry that fails to read, parse
  or validate is removed and counts as a miss. Bounded by ``--cache-disk-mb``: past it the least
  recently used files (by mtime, touched on every hit) are removed. The password salt is a
  random 0600 file in the directory, so keys are stable across restarts and still secret.
  Results of calls that carried a password are kept in memory only: decrypted text never lands
  on disk.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import structlog

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["CacheDirError", "ResultCache", "prepare_directory"]

log = structlog.get_logger("pdf_airlock.cache")

_PROCESS_SALT: Final = os.urandom(16)
_SALT_FILE: Final = "salt"
_SALT_BYTES: Final = 16
_ENTRY_SUFFIX: Final = ".json"
_ENTRY_FORMAT: Final = 1
_DIR_MODE: Final = 0o700
_FILE_MODE: Final = 0o600
# After an eviction pass the directory holds at most this share of its budget, so a full cache
# does not rescan the directory on every write.
_EVICT_TO: Final = 0.9
# One entry may take at most this share of a budget (the same rule for memory and disk).
_MAX_ENTRY_SHARE: Final = 4


class CacheDirError(Exception):
    """The cache directory cannot be used safely (not ours, not a directory, not writable)."""


def prepare_directory(directory: Path) -> bytes:
    """Create or check the cache directory (0700, ours) and return its salt (made on first use)."""
    try:
        directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        info = os.stat(directory, follow_symlinks=False)
    except OSError as exc:
        raise CacheDirError(f"cannot create {directory}: {exc.strerror}") from exc
    if not stat.S_ISDIR(info.st_mode):
        raise CacheDirError(f"{directory} is not a directory")
    if info.st_uid != os.geteuid():
        raise CacheDirError(f"{directory} belongs to another user")
    if stat.S_IMODE(info.st_mode) != _DIR_MODE:
        os.chmod(directory, _DIR_MODE)
    salt_path = directory / _SALT_FILE
    try:
        fd = os.open(salt_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, _FILE_MODE)
    except FileExistsError:
        return _read_salt(salt_path)
    except OSError as exc:
        raise CacheDirError(f"cannot write to {directory}: {exc.strerror}") from exc
    salt = os.urandom(_SALT_BYTES)
    with os.fdopen(fd, "wb") as out:
        out.write(salt)
    return salt


def _read_salt(path: Path) -> bytes:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError as exc:
        raise CacheDirError(f"cannot read the cache salt {path}: {exc.strerror}") from exc
    with os.fdopen(fd, "rb") as salt_file:
        info = os.fstat(salt_file.fileno())
        salt = salt_file.read(_SALT_BYTES + 1)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid() or len(salt) != _SALT_BYTES:
        raise CacheDirError(f"the cache salt {path} is damaged; remove the directory to start afresh")
    return salt


class _DiskStore:
    """One file per entry; every failure to read an entry is a miss, never an error."""

    def __init__(self, directory: Path, max_bytes: int) -> None:
        self.directory = directory
        self.max_bytes = max_bytes
        self.salt = prepare_directory(directory)
        self.used = sum(size for _, size, _ in self._entries())

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}{_ENTRY_SUFFIX}"

    def _entries(self) -> list[tuple[float, int, Path]]:
        found = []
        with os.scandir(self.directory) as scan:
            for entry in scan:
                if entry.name.endswith(_ENTRY_SUFFIX) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(FileNotFoundError):
                        info = entry.stat(follow_symlinks=False)
                        found.append((info.st_mtime, info.st_size, Path(entry.path)))
        return found

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except OSError:
            return None
        try:
            with os.fdopen(fd, "rb") as entry_file:
                entry = json.loads(entry_file.read(self.max_bytes + 1))
            if not isinstance(entry, dict) or (entry.get("format"), entry.get("key")) != (_ENTRY_FORMAT, key):
                raise ValueError("not an entry for this key")
            result = entry["result"]
            if not isinstance(result, dict):
                raise ValueError("no result")
            os.utime(path)  # least recently used goes first
            return result
        except (OSError, ValueError, KeyError, RecursionError):
            self.discard(key)
            return None

    def put(self, key: str, result: dict[str, Any]) -> None:
        body = json.dumps({"format": _ENTRY_FORMAT, "key": key, "result": result}, ensure_ascii=False)
        data = body.encode()
        if len(data) > self.max_bytes // _MAX_ENTRY_SHARE:
            return
        path = self._path(key)
        temporary = self.directory / f".{key}.{os.getpid()}.tmp"
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, _FILE_MODE)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            with contextlib.suppress(FileNotFoundError):
                self.used -= os.stat(path, follow_symlinks=False).st_size
            os.replace(temporary, path)
        except OSError as exc:
            log.warning("cache_write_failed", reason=exc.strerror)
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            return
        self.used += len(data)
        if self.used > self.max_bytes:
            self._evict()

    def discard(self, key: str) -> None:
        with contextlib.suppress(OSError):
            size = os.stat(self._path(key), follow_symlinks=False).st_size
            os.unlink(self._path(key))
            self.used -= size

    def _evict(self) -> None:
        entries = sorted(self._entries())
        self.used = sum(size for _, size, _ in entries)
        for _, size, path in entries:
            if self.used <= self.max_bytes * _EVICT_TO:
                break
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                self.used -= size


class ResultCache:
    def __init__(self, max_bytes: int, directory: Path | None = None, disk_max_bytes: int = 0) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self._entries: OrderedDict[str, tuple[types.CallToolResult, int]] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.disk_hits = 0
        self._disk = _DiskStore(directory, disk_max_bytes) if directory and disk_max_bytes > 0 else None
        self._salt = self._disk.salt if self._disk is not None else _PROCESS_SALT

    def key(self, sha256: str, tool: str, arguments: dict[str, Any]) -> str:
        normalised = {k: v for k, v in arguments.items() if k not in ("data", "password")}
        password = arguments.get("password")
        if password:
            normalised["password"] = hashlib.sha256(self._salt + str(password).encode()).hexdigest()
        body = json.dumps([sha256, tool, normalised], sort_keys=True, default=str)
        digest = hashlib.sha256(body.encode()).hexdigest()
        # Entries of calls with a password stay in memory: the letter marks them.
        return ("p" if password else "k") + digest

    def get(self, key: str) -> types.CallToolResult | None:
        entry = self._entries.get(key)
        if entry is not None:
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[0]
        result = self._from_disk(key)
        if result is None:
            self.misses += 1
            return None
        self.hits += 1
        self.disk_hits += 1
        log.debug("cache_disk_hit", key=key[:12])
        return result

    def _from_disk(self, key: str) -> types.CallToolResult | None:
        if self._disk is None:
            return None
        untrusted = self._disk.get(key)
        if untrusted is None:
            return None
        import mcp_types as types
        from pydantic import ValidationError

        try:
            result = types.CallToolResult.model_validate(untrusted)
        except ValidationError:
            self._disk.discard(key)
            return None
        if result.is_error or result.structured_content is None:
            self._disk.discard(key)
            return None
        self._remember(key, result, len(json.dumps(untrusted)))
        return result

    def put(self, key: str, result: types.CallToolResult, size: int) -> None:
        self._remember(key, result, size)
        if self._disk is not None and key.startswith("k"):
            self._disk.put(key, result.model_dump(mode="json", by_alias=True, exclude_none=True))

    def _remember(self, key: str, result: types.CallToolResult, size: int) -> None:
        if self.max_bytes <= 0 or size > self.max_bytes // _MAX_ENTRY_SHARE:
            return
        if key in self._entries:
            self.used -= self._entries.pop(key)[1]
        self._entries[key] = (result, size)
        self.used += size
        while self.used > self.max_bytes:
            _, (_, evicted) = self._entries.popitem(last=False)
            self.used -= evicted
