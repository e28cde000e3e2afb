"""Result cache: a repeat of a call on the same bytes costs no parse.

Keyed by (the generation of the answers, the caller's partition, document sha256, tool,
normalised arguments); inline ``data`` is never part of the key and a password only as a keyed
digest, so neither is ever stored. Only successful results are cached.

- **Generation** (``answer_generation``): this package's version and the versions of the
  libraries that read documents. An entry written by another release, or beside other parsers,
  is never served: its key differs, and the MAC of a disk entry covers the key.
- **Partition**: on HTTP, the principal whose call made the entry (``--cache-scope principal``,
  the default), so that one principal cannot learn from a fast answer that another has read the
  same document; ``--cache-scope shared`` lets every principal's repeat be answered from any
  entry (``docs/security.md``). On stdio and in ``batch`` there is one caller.

- In memory (always, unless ``--cache-mb 0``): bounded by the total size of cached results; least
  recently used entries go first.
- On disk (only with ``--cache-dir``; off by default, and the container's root filesystem is
  read-only): one file per entry in a 0700 directory, written 0600 to a temporary name and
  renamed into place, so a reader sees a whole entry or none. Bounded by ``--cache-disk-mb``:
  past it the least recently used files (by mtime, touched on every hit) are removed.
  Results of calls that carried a password are kept in memory only: decrypted text never lands
  on disk.

Anyone who has a PDF can compute its entry's key (file name), so the directory is not trusted:

- Each entry carries an HMAC-SHA256 over its key and its body, under a secret kept outside the
  directory. An entry that is edited, planted, truncated or copied under another key fails the
  check before it is parsed: it is removed, logged (``cache_entry_rejected``, key prefix and
  reason only) and counts as a miss, so the call parses afresh.
- The secret comes from ``--cache-key-file`` (read, or made 0600 from ``os.urandom`` on first
  use): entries then last across restarts and are shared by every process given the same file.
  A new key file is written whole under a temporary name and linked into place, so processes
  starting together all read the one secret that won (never a file still being written).
  Without it the secret is random per process, and the disk cache lasts as long as the process.
  The password salt is derived from the same secret: nothing secret is stored in the directory.
- The directory is checked and opened once (``O_DIRECTORY|O_NOFOLLOW``) at start-up; every
  later open, rename, unlink, listing and timestamp goes through that descriptor, so swapping
  the path for a symlink afterwards changes nothing. Entry files must be regular files.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import hmac
import importlib.metadata
import json
import os
import secrets
import stat
import time
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import structlog

from pdf_airlock.server import __version__
from pdf_airlock.server.tools.cursors import cursor_cache_key, reissue_cursors

if TYPE_CHECKING:
    import mcp_types as types

__all__ = [
    "KEY_BYTES",
    "CacheDirError",
    "CacheKeyError",
    "DiskStore",
    "ResultCache",
    "answer_generation",
    "prepare_directory",
    "prepare_key_file",
]

log = structlog.get_logger(__name__)

KEY_BYTES: Final = 32  # the secret of --cache-key-file
_PROCESS_KEY: Final = os.urandom(KEY_BYTES)
_ENTRY_LABEL: Final = b"pdf-airlock cache entry"  # the two keys derived from the secret
_SALT_LABEL: Final = b"pdf-airlock password salt"
_MAC_HEX: Final = 2 * hashlib.sha256().digest_size  # an entry's first line
_HEADER_BYTES: Final = _MAC_HEX + 1
_ENTRY_SUFFIX: Final = ".json"
_ENTRY_FORMAT: Final = 3
# The libraries whose versions change answers (the worker's parsers, OCR, text matching, images).
ANSWERING_DISTRIBUTIONS: Final = (
    "pikepdf",
    "pypdfium2",
    "pdfminer.six",
    "pdfplumber",
    "tesserocr",
    "regex",
    "pillow",
)
_KEY_READ_TRIES: Final = 50  # a key file read short is read again (another process writing it)
_KEY_READ_PAUSE_S: Final = 0.01
_NO_LINKS: Final = frozenset({errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS})  # a file system without link()
_DIR_MODE: Final = 0o700
_FILE_MODE: Final = 0o600
_PRIVATE_MODE_BITS: Final = 0o077  # none of these may be set on the key file
_OPEN_DIR: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_READ: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CREATE: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# After an eviction pass the directory holds at most this share of its budget, so a full cache
# does not rescan the directory on every write.
_EVICT_TO: Final = 0.9
# One entry may take at most this share of a budget (the same rule for memory and disk).
_MAX_ENTRY_SHARE: Final = 4


class CacheDirError(Exception):
    """The cache directory cannot be used safely (not ours, not a directory, not writable)."""


class CacheKeyError(Exception):
    """The cache key file cannot be used safely (not ours, readable by others, wrong size...)."""


class _Rejected(Exception):
    """An entry on disk that is not one this cache wrote for its key; the message is the reason."""


def _why(exc: OSError, doing: str) -> str:
    """What went wrong, to follow the path in a start-up error."""
    if exc.errno == errno.ELOOP:
        return "is a symbolic link"
    return f"cannot be {doing}: {exc.strerror or exc}"


def _open_directory(directory: Path) -> int:
    """Create or check the cache directory (0700, ours) and return an open descriptor of it."""
    try:
        directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
        fd = os.open(directory, _OPEN_DIR)
    except OSError as exc:
        why = _why(exc, "created")
        if exc.errno in (errno.ENOTDIR, errno.EEXIST):
            why = "is a symbolic link" if directory.is_symlink() else "is not a directory"
        raise CacheDirError(f"{directory} {why}") from exc
    try:
        info = os.fstat(fd)
        if info.st_uid != os.geteuid():
            raise CacheDirError(f"{directory} belongs to another user")
        if stat.S_IMODE(info.st_mode) != _DIR_MODE:
            os.fchmod(fd, _DIR_MODE)
    except OSError as exc:
        os.close(fd)
        raise CacheDirError(f"cannot make {directory} private: {exc.strerror}") from exc
    except BaseException:
        os.close(fd)
        raise
    return fd


def prepare_directory(directory: Path) -> None:
    """The start-up check of ``--cache-dir``: create it, or check it is a directory of ours."""
    os.close(_open_directory(directory))


@functools.cache
def answer_generation() -> str:
    """What the answers of this installation depend on beyond the document and the call: the
    entry format, this package's version and the versions of ``ANSWERING_DISTRIBUTIONS``."""
    versions = [f"format={_ENTRY_FORMAT}", f"pdf-airlock={__version__}"]
    for name in ANSWERING_DISTRIBUTIONS:
        try:
            versions.append(f"{name}={importlib.metadata.version(name)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{name}=none")
    return ";".join(versions)


def prepare_key_file(path: Path, directory: Path | None) -> bytes:
    """Read the cache's secret from ``path``, or make it (random, 0600) if there is none yet.

    A new file is written whole under a temporary name and ``link()``-ed into place: of
    processes starting at once, one link wins and every other process reads its secret. A read
    that comes up short (a file made by a writer without this care, still being written) is
    tried again for half a second before the file is refused."""
    if directory is not None and path.resolve().is_relative_to(directory.resolve()):
        raise CacheKeyError(f"{path} is inside the cache directory {directory}; keep it elsewhere")
    try:
        return _read_key_file(path)
    except FileNotFoundError:
        pass
    secret = os.urandom(KEY_BYTES)
    if not _link_new_key(path, secret):
        try:
            return _read_key_file(path)  # another process made it first: its secret is the one
        except FileNotFoundError as exc:
            raise CacheKeyError(f"{path} vanished while it was being made") from exc
    log.info("cache_key_created", key_file=str(path))
    return secret


def _link_new_key(path: Path, secret: bytes) -> bool:
    """Put ``secret`` at ``path`` if nothing is there; False if something already is."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(8)}.tmp")
    try:
        fd = os.open(temporary, _CREATE, _FILE_MODE)
    except OSError as exc:
        raise CacheKeyError(f"{path} {_why(exc, 'created')}") from exc
    try:
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(secret)
                out.flush()
                os.fsync(out.fileno())
        except OSError as exc:
            raise CacheKeyError(f"{path} cannot be written: {exc.strerror}") from exc
        try:
            os.link(temporary, path, follow_symlinks=False)
        except FileExistsError:
            return False
        except OSError as exc:
            if exc.errno not in _NO_LINKS:
                raise CacheKeyError(f"{path} {_why(exc, 'created')}") from exc
            return _create_new_key(path, secret)
        return True
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


def _create_new_key(path: Path, secret: bytes) -> bool:
    """Where ``link()`` is not supported: create exclusively and write (a reader racing the
    write reads it short, and tries again)."""
    try:
        fd = os.open(path, _CREATE, _FILE_MODE)
    except FileExistsError:
        return False
    except OSError as exc:
        raise CacheKeyError(f"{path} {_why(exc, 'created')}") from exc
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(secret)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise CacheKeyError(f"{path} cannot be written: {exc.strerror}") from exc
    return True


def _read_key_file(path: Path) -> bytes:
    """The secret in ``path``; ``FileNotFoundError`` if there is none, ``CacheKeyError`` if the
    file is not one to trust."""
    for attempt in range(_KEY_READ_TRIES):
        secret, size = _read_key_once(path)
        if len(secret) >= KEY_BYTES or attempt == _KEY_READ_TRIES - 1:
            break
        time.sleep(_KEY_READ_PAUSE_S)
    if len(secret) != KEY_BYTES:
        raise CacheKeyError(
            f"{path} holds {size} bytes, not {KEY_BYTES}; remove it to make a new one "
            "(the disk cache then starts afresh)"
        )
    return secret


def _read_key_once(path: Path) -> tuple[bytes, int]:
    try:
        fd = os.open(path, _OPEN_READ)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CacheKeyError(f"{path} {_why(exc, 'read')}") from exc
    try:  # the raw descriptor: os.fdopen would refuse a directory with its own error
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CacheKeyError(f"{path} is not a regular file")
        if info.st_uid != os.geteuid():
            raise CacheKeyError(f"{path} belongs to another user (uid {info.st_uid})")
        if stat.S_IMODE(info.st_mode) & _PRIVATE_MODE_BITS:
            mode = stat.S_IMODE(info.st_mode)
            raise CacheKeyError(f"{path} has mode {mode:04o}; it must be 0600 or stricter")
        return _read_at_most(fd, KEY_BYTES + 1), info.st_size  # never the whole of a huge file
    finally:
        os.close(fd)


def _derived(secret: bytes, label: bytes) -> bytes:
    return hmac.new(secret, label, hashlib.sha256).digest()


def _mac(mac_key: bytes, generation: str, key: str, body: bytes) -> bytes:
    """Covers the entry's key and the generation of answers too: an entry copied under another
    key, or written by another release, fails."""
    signed = generation.encode() + b"\n" + key.encode() + b"\n" + body
    return hmac.new(mac_key, signed, hashlib.sha256).hexdigest().encode()


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, left)):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class DiskStore:
    """One file per entry, each checked by its HMAC; every failure to read one is a miss (also
    the store of answers delivered as resources, ``pdf_airlock.server.app.resources``)."""

    def __init__(self, directory: Path, max_bytes: int, secret: bytes, generation: str | None = None) -> None:
        self.directory = directory  # for messages: every operation goes through ``self._fd``
        self.generation = answer_generation() if generation is None else generation
        self.max_bytes = max_bytes
        self.max_entry = max_bytes // _MAX_ENTRY_SHARE
        self._mac_key = _derived(secret, _ENTRY_LABEL)
        self._fd = _open_directory(directory)
        self._close = weakref.finalize(self, os.close, self._fd)
        self.used = sum(size for _, size, _ in self._entries())

    def close(self) -> None:
        self._close()

    def _entries(self) -> list[tuple[float, int, str]]:
        found = []
        with os.scandir(self._fd) as scan:
            for entry in scan:
                if entry.name.endswith(_ENTRY_SUFFIX) and entry.is_file(follow_symlinks=False):
                    with contextlib.suppress(FileNotFoundError):
                        info = entry.stat(follow_symlinks=False)
                        found.append((info.st_mtime, info.st_size, entry.name))
        return found

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            fd = os.open(key + _ENTRY_SUFFIX, _OPEN_READ, dir_fd=self._fd)
        except FileNotFoundError:
            return None
        except OSError:  # ELOOP: a symlink under the entry's name
            self.reject(key, "not_a_file")
            return None
        try:
            return self._read(key, fd)
        except _Rejected as rejected:
            self.reject(key, str(rejected))
            return None
        except OSError:
            self.reject(key, "unreadable")
            return None
        finally:
            os.close(fd)

    def _read(self, key: str, fd: int) -> dict[str, Any]:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _Rejected("not_a_file")
        data = _read_at_most(fd, _HEADER_BYTES + self.max_entry + 1)
        if len(data) > _HEADER_BYTES + self.max_entry:
            raise _Rejected("too_large")
        untrusted_mac, body = data[:_MAC_HEX], data[_HEADER_BYTES:]
        if data[_MAC_HEX:_HEADER_BYTES] != b"\n" or not hmac.compare_digest(
            untrusted_mac, _mac(self._mac_key, self.generation, key, body)
        ):
            raise _Rejected("mac")
        try:
            entry = json.loads(body)
        except (ValueError, RecursionError):
            raise _Rejected("malformed") from None
        if not isinstance(entry, dict) or entry.get("format") != _ENTRY_FORMAT:
            raise _Rejected("format")
        result = entry.get("result")
        if not isinstance(result, dict):
            raise _Rejected("malformed")
        with contextlib.suppress(OSError):
            os.utime(fd)  # least recently used goes first
        return result

    def put(self, key: str, result: dict[str, Any]) -> None:
        body = json.dumps({"format": _ENTRY_FORMAT, "result": result}, ensure_ascii=False).encode()
        if len(body) > self.max_entry:
            return
        data = _mac(self._mac_key, self.generation, key, body) + b"\n" + body
        name = key + _ENTRY_SUFFIX
        temporary = f".{key}.{os.getpid()}.tmp"
        try:
            fd = os.open(temporary, _CREATE, _FILE_MODE, dir_fd=self._fd)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            with contextlib.suppress(FileNotFoundError):
                self.used -= os.stat(name, dir_fd=self._fd, follow_symlinks=False).st_size
            os.replace(temporary, name, src_dir_fd=self._fd, dst_dir_fd=self._fd)
        except OSError as exc:
            log.warning("cache_write_failed", reason=exc.strerror)
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=self._fd)
            return
        self.used += len(data)
        if self.used > self.max_bytes:
            self._evict()

    def reject(self, key: str, reason: str) -> None:
        """An entry this cache did not write as it is: removed, and logged without its content."""
        log.warning("cache_entry_rejected", key=key[:12], reason=reason)
        self.discard(key)

    def discard(self, key: str) -> None:
        name = key + _ENTRY_SUFFIX
        with contextlib.suppress(OSError):
            size = os.stat(name, dir_fd=self._fd, follow_symlinks=False).st_size
            os.unlink(name, dir_fd=self._fd)
            self.used -= size

    def _evict(self) -> None:
        entries = sorted(self._entries())
        self.used = sum(size for _, size, _ in entries)
        for _, size, name in entries:
            if self.used <= self.max_bytes * _EVICT_TO:
                break
            try:
                os.unlink(name, dir_fd=self._fd)
            except FileNotFoundError:
                continue
            except OSError as exc:  # a full disk cache must never fail the call that wrote to it
                log.warning("cache_evict_failed", reason=exc.strerror)
                return
            self.used -= size


class ResultCache:
    def __init__(
        self,
        max_bytes: int,
        directory: Path | None = None,
        disk_max_bytes: int = 0,
        key_file: Path | None = None,
        generation: str | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.generation = answer_generation() if generation is None else generation
        self.used = 0
        self._entries: OrderedDict[str, tuple[types.CallToolResult, int]] = OrderedDict()
        self.hits = 0
        self.misses = 0
        self.disk_hits = 0
        secret = _PROCESS_KEY
        self._disk: DiskStore | None = None
        if directory is not None and disk_max_bytes > 0:
            if key_file is not None:
                secret = prepare_key_file(key_file, directory)
            self._disk = DiskStore(directory, disk_max_bytes, secret, self.generation)
            log.info(
                "cache_disk",
                directory=str(directory),
                key="file" if key_file is not None else "process",
                key_file=None if key_file is None else str(key_file),
                lasts="across restarts" if key_file is not None else "this process only",
            )
        self._salt = _derived(secret, _SALT_LABEL)

    def close(self) -> None:
        """Close the directory's descriptor (also done when the cache is garbage collected)."""
        if self._disk is not None:
            self._disk.close()

    def key(self, sha256: str, tool: str, arguments: dict[str, Any], partition: str = "") -> str:
        """The entry of a call: ``partition`` names whose calls it may answer (the principal,
        or "" for everyone's)."""
        normalised = {k: v for k, v in arguments.items() if k not in ("data", "password")}
        if isinstance(normalised.get("cursor"), str):  # its position, whichever process signed it
            normalised["cursor"] = cursor_cache_key(normalised["cursor"])
        password = arguments.get("password")
        if password:
            normalised["password"] = hashlib.sha256(self._salt + str(password).encode()).hexdigest()
        body = json.dumps([self.generation, partition, sha256, tool, normalised], sort_keys=True, default=str)
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
        untrusted = reissue_cursors(untrusted)  # signed by the process that wrote the entry
        if untrusted is None:
            self._disk.reject(key, "invalid_cursor")
            return None
        import mcp_types as types
        from pydantic import ValidationError

        try:
            result = types.CallToolResult.model_validate(untrusted)
        except ValidationError:
            self._disk.reject(key, "invalid_result")
            return None
        if result.is_error or result.structured_content is None:
            self._disk.reject(key, "not_a_success")
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
