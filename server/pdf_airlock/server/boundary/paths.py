"""Input policy: which documents a tool call may read, opened safely as an fd for the job.

Paths (native or ``file://``) must resolve, through symlinks, inside one of the configured
roots. The file is opened ``O_RDONLY|O_NOFOLLOW|O_NONBLOCK``, the opened fd is checked again
(``/proc/self/fd`` must still point inside a root, which closes the race between resolving and
opening), and ``fstat`` must show a regular file under the size cap. Its bytes are then copied
into a memfd, hashed as they are copied, and the memfd sealed, as inline base64
input is decoded into one: every job of the call (a triage, the two children of a two-ended
read) reads exactly the bytes whose sha256 the answer carries and the cache keys, whatever a
writer does to the file meanwhile. The copies of the last few files opened are kept, by the
file's identity (device, inode, size, modification and change times): an unchanged file is
neither copied nor hashed again. A writer may change a file without changing its identity (within
one tick of the clock, or through a shared mapping); what is then read is the copy, so the
answer is about the bytes it names, if no longer the file's. The job child only ever receives
the memfd, never a path.
Error messages show paths as the caller gave them or relative to their root, never document
bytes.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import os
import stat
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit

import anyio

from pdf_airlock.server.errors import ToolError

__all__ = ["Document", "PathPolicy", "within"]

_OPEN_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_PSEUDO_FILESYSTEMS: Final = ("/proc", "/sys", "/dev")
_HASH_INLINE_MAX: Final = 4 << 20  # larger files are copied and hashed in a worker thread
_COPY_CHUNK: Final = 1 << 20
# Copies kept for unchanged files, per policy (a served root set): a document read again, page by
# page or after a first look at its facts, is not copied and hashed again
# (bench/studies/ab_servers.py on a 90 MB file).
_COPIES_KEPT: Final = 16
_COPIES_KEPT_BYTES: Final = 128 << 20
_MAX_SHOWN_PATH: Final = 200
# Inline base64 is decoded this many characters at a time (a multiple of 4) straight into the
# memfd and the hash: never a whole decoded copy, nor a whole ASCII copy, of a large document.
_DECODE_CHARS: Final = 4 << 20
_SEALS: Final = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


@dataclass(slots=True)
class Document:
    """An open, checked input: the fd is owned by this object until ``close``."""

    fd: int
    size: int
    sha256: str
    display: str
    root: str = ""  # the root it lies under; "" for inline data (``pdf_airlock.server.app.calls``)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def _shown(raw: str) -> str:
    return raw if len(raw) <= _MAX_SHOWN_PATH else raw[:_MAX_SHOWN_PATH] + "..."


def within(path: str, root: str) -> bool:
    """``path`` is ``root`` or lies under it (both real paths)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def _copy_sealed(fd: int, limit: int, expected: int) -> tuple[int, str, int]:
    """(memfd, sha256, size): the file's bytes, at most ``limit`` (a file someone keeps
    appending to cannot keep this copying for ever), copied into a memfd that is then sealed,
    and hashed as they are copied: read once into memory, hashed there, written. A writer that
    changes the file meanwhile changes what is copied, never the agreement between the copy and
    its hash. ``expected`` (the size ``fstat`` saw) sizes the first read. (``sendfile`` into
    the memfd, then hashing it through a mapping, measured slower: the mapping's page faults.)"""
    memfd = os.memfd_create("pdf-airlock-document", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        digest = hashlib.sha256()
        copied = 0
        want = min(expected + 1, limit, _COPY_CHUNK)
        while copied < limit and (chunk := os.pread(fd, want, copied)):
            digest.update(chunk)  # hashlib lets go of the GIL over a large buffer
            view = memoryview(chunk)
            while view:
                view = view[os.write(memfd, view) :]
            copied += len(chunk)
            want = min(limit - copied, _COPY_CHUNK)
        fcntl.fcntl(memfd, fcntl.F_ADD_SEALS, _SEALS)
        return memfd, digest.hexdigest(), copied
    except BaseException:
        os.close(memfd)
        raise


class PathPolicy:
    """Resolves and opens inputs for tool calls; one instance per server."""

    def __init__(self, roots: Sequence[Path], max_bytes: int) -> None:
        self.roots = tuple(os.path.realpath(root) for root in roots)
        self.max_bytes = max_bytes
        # A file's identity -> its sealed copy (memfd, sha256, size), oldest first.
        self._copies: OrderedDict[tuple[int, ...], tuple[int, str, int]] = OrderedDict()

    def _to_path(self, raw: str) -> str:
        if "\x00" in raw:
            raise ToolError("invalid_arguments", "path contains a NUL character")
        if raw.startswith("file:"):
            parts = urlsplit(raw)
            if parts.netloc not in ("", "localhost"):
                raise ToolError("path_denied", "file:// URIs must not name a remote host")
            raw = unquote(parts.path)
        if not raw:
            raise ToolError("invalid_arguments", "path is empty")
        return raw

    def _candidates(self, path: str) -> list[tuple[str, str]]:
        """(root, realpath) pairs to try: absolute paths once, relative paths under each root."""
        if os.path.isabs(path):
            return [("", os.path.realpath(path))]
        return [(root, os.path.realpath(os.path.join(root, path))) for root in self.roots]

    def _relative(self, real: str) -> tuple[str, str]:
        """(root, path under it) of a real path; ("", "?") outside every root."""
        for root in self.roots:
            if within(real, root):
                return root, os.path.relpath(real, root)
        return "", "?"

    def resolve(self, raw: str) -> str:
        """The real path of ``raw`` if it lies inside a root; raises path_denied/not_found."""
        path = self._to_path(raw)
        inside = [real for _root, real in self._candidates(path) if any(within(real, r) for r in self.roots)]
        if not inside:
            raise ToolError("path_denied", f"{_shown(raw)!r} is outside the allowed roots")
        for real in inside:
            if os.path.lexists(real):
                return real
        raise ToolError("not_found", f"{_shown(raw)!r} does not exist")

    def open_path(self, raw: str) -> Document:
        """Open and check ``raw``, then copy and hash it, on this thread."""
        fd, info, where = self._open_checked(raw)
        try:
            copy = self._kept(info) or self._remember(
                fd, info, _copy_sealed(fd, self.max_bytes + 1, info.st_size)
            )
        finally:
            os.close(fd)
        return self._document(copy, where)

    async def open_path_async(self, raw: str) -> Document:
        """As ``open_path``, but a file over ``_HASH_INLINE_MAX`` is copied and hashed in a
        worker thread (reads, writes and hashlib let go of the GIL): the event loop, so every other
        call and the protocol itself, would otherwise wait about a millisecond a megabyte."""
        fd, info, where = self._open_checked(raw)
        try:
            copy = self._kept(info)
            if copy is None:
                limit = self.max_bytes + 1  # one byte over the cap is enough to refuse it
                if info.st_size <= _HASH_INLINE_MAX:
                    copied = _copy_sealed(fd, limit, info.st_size)
                else:
                    copied = await anyio.to_thread.run_sync(_copy_sealed, fd, limit, info.st_size)
                copy = self._remember(fd, info, copied)
        finally:
            os.close(fd)
        return self._document(copy, where)

    def _kept(self, info: os.stat_result) -> tuple[int, str, int] | None:
        """A new descriptor of the copy kept for this unchanged file, with its sha256 and size."""
        kept = self._copies.get(_identity(info))
        if kept is None:
            return None
        self._copies.move_to_end(_identity(info))
        memfd, digest, size = kept
        return fcntl.fcntl(memfd, fcntl.F_DUPFD_CLOEXEC, 0), digest, size

    def _remember(self, fd: int, info: os.stat_result, copy: tuple[int, str, int]) -> tuple[int, str, int]:
        """Keep a duplicate of ``copy`` for the file, if the file did not change while it was
        copied and the copy is one to keep (within the cap, within the copies' budget)."""
        memfd, digest, size = copy
        if size != info.st_size or size > _COPIES_KEPT_BYTES or _identity(os.fstat(fd)) != _identity(info):
            return copy
        self._copies[_identity(info)] = (fcntl.fcntl(memfd, fcntl.F_DUPFD_CLOEXEC, 0), digest, size)
        while (
            len(self._copies) > _COPIES_KEPT
            or sum(kept[2] for kept in self._copies.values()) > _COPIES_KEPT_BYTES
        ):
            os.close(self._copies.popitem(last=False)[1][0])
        return copy

    def _open_checked(self, raw: str) -> tuple[int, os.stat_result, tuple[str, str]]:
        """An fd of ``raw`` inside a root, a regular file under the cap: (fd, its fstat, (its
        root, its path as shown))."""
        real = self.resolve(raw)
        if any(within(real, pseudo) for pseudo in _PSEUDO_FILESYSTEMS):
            raise ToolError("not_a_file", f"{_shown(raw)!r} is on a pseudo filesystem")
        try:
            fd = os.open(real, _OPEN_FLAGS)
        except FileNotFoundError as exc:
            raise ToolError("not_found", f"{_shown(raw)!r} does not exist") from exc
        except OSError as exc:
            raise ToolError("path_denied", f"{_shown(raw)!r} cannot be opened ({exc.strerror})") from exc
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
            if not any(within(opened, root) for root in self.roots):
                raise ToolError(
                    "path_denied", f"{_shown(raw)!r} moved outside the allowed roots while opening"
                )
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise ToolError("not_a_file", f"{_shown(raw)!r} is not a regular file")
            self._check_size(info.st_size)
        except BaseException:
            os.close(fd)
            raise
        return fd, info, self._relative(opened)

    def _document(self, copy: tuple[int, str, int], where: tuple[str, str]) -> Document:
        memfd, digest, size = copy
        try:
            self._check_size(size)  # the file may have grown while it was copied
        except BaseException:
            os.close(memfd)
            raise
        root, display = where
        return Document(fd=memfd, size=size, sha256=digest, display=display, root=root)

    def _check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise ToolError(
                "too_large",
                f"the document is {size} bytes, over the {self.max_bytes}-byte cap (--max-file-mb)",
                {"size": size, "max_bytes": self.max_bytes},
            )

    async def open_inline_async(self, encoded: str) -> Document:
        """As ``open_inline``; over ``_HASH_INLINE_MAX`` of base64, decoded, written and hashed
        in a worker thread."""
        if len(encoded) <= _HASH_INLINE_MAX:
            return self.open_inline(encoded)
        return await anyio.to_thread.run_sync(self.open_inline, encoded)

    def open_inline(self, encoded: str) -> Document:
        self._check_size(len(encoded) * 3 // 4 - encoded[-2:].count("="))  # padding is not data
        fd = os.memfd_create("pdf-airlock-inline", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        digest = hashlib.sha256()
        size = 0
        try:
            for start in range(0, len(encoded), _DECODE_CHARS):
                piece = encoded[start : start + _DECODE_CHARS]
                if start + _DECODE_CHARS < len(encoded) and "=" in piece:  # padding ends the data
                    raise ToolError("invalid_arguments", "data is not valid base64")
                try:
                    data = base64.b64decode(piece, validate=True)
                except (binascii.Error, ValueError) as exc:
                    raise ToolError("invalid_arguments", "data is not valid base64") from exc
                size += len(data)
                self._check_size(size)
                digest.update(data)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
        except BaseException:
            os.close(fd)
            raise
        return Document(fd=fd, size=size, sha256=digest.hexdigest(), display="<inline data>")
