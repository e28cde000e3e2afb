"""Input policy: which documents a tool call may read, opened safely as an fd for the job.

Paths (native or ``file://``) must resolve, through symlinks, inside one of the configured
roots. The file is opened ``O_RDONLY|O_NOFOLLOW|O_NONBLOCK``, the opened fd is checked again
(``/proc/self/fd`` must still point inside a root, which closes the race between resolving and
opening), and ``fstat`` must show a regular file under the size cap. Inline base64 input goes
into a sealed memfd. The job child only ever receives the fd, never a path. Error messages
show paths as the caller gave them or relative to their root, never document bytes.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import os
import stat
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
_HASH_CHUNK: Final = 1 << 20
_HASH_INLINE_MAX: Final = 4 << 20  # larger files not hashed before: in a worker thread
_DIGEST_MEMO: Final = 4096
_MAX_SHOWN_PATH: Final = 200
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


def _hash_fd(fd: int, limit: int) -> tuple[str, int]:
    """(sha256, size) of the file's bytes, reading at most ``limit``: a file someone keeps
    appending to cannot keep this reading for ever."""
    digest = hashlib.sha256()
    offset = 0
    while offset < limit and (chunk := os.pread(fd, min(_HASH_CHUNK, limit - offset), offset)):
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest(), offset


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


class PathPolicy:
    """Resolves and opens inputs for tool calls; one instance per server."""

    def __init__(self, roots: Sequence[Path], max_bytes: int) -> None:
        self.roots = tuple(os.path.realpath(root) for root in roots)
        self.max_bytes = max_bytes
        # (dev, inode, size, mtime_ns, ctime_ns) -> sha256: an unchanged file is not re-hashed.
        self._digests: dict[tuple[int, ...], str] = {}

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
        """Open, check and hash ``raw`` on this thread."""
        fd, info, where = self._open_checked(raw)
        try:
            return self._document(fd, info, where, self._known(info) or _hash_fd(fd, self.max_bytes + 1))
        except BaseException:
            os.close(fd)
            raise

    async def open_path_async(self, raw: str) -> Document:
        """As ``open_path``, but a file over ``_HASH_INLINE_MAX`` not hashed before is hashed in
        a worker thread (hashlib lets go of the GIL): the event loop, so every other call and the
        protocol itself, would otherwise wait about a millisecond a megabyte."""
        fd, info, where = self._open_checked(raw)
        try:
            hashed = self._known(info)
            if hashed is None:
                limit = self.max_bytes + 1  # one byte over the cap is enough to refuse it
                if info.st_size <= _HASH_INLINE_MAX:
                    hashed = _hash_fd(fd, limit)
                else:
                    hashed = await anyio.to_thread.run_sync(_hash_fd, fd, limit)
            return self._document(fd, info, where, hashed)
        except BaseException:
            os.close(fd)
            raise

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

    def _known(self, info: os.stat_result) -> tuple[str, int] | None:
        """(sha256, size) of an unchanged file hashed before."""
        digest = self._digests.get(_identity(info))
        return None if digest is None else (digest, info.st_size)

    def _document(
        self, fd: int, info: os.stat_result, where: tuple[str, str], hashed: tuple[str, int]
    ) -> Document:
        digest, size = hashed
        self._check_size(size)  # the file may have grown while it was read
        if size == info.st_size:
            self._remember(_identity(info), digest)
        root, display = where
        return Document(fd=fd, size=size, sha256=digest, display=display, root=root)

    def _remember(self, identity: tuple[int, ...], digest: str) -> None:
        self._digests[identity] = digest
        while len(self._digests) > _DIGEST_MEMO:
            self._digests.pop(next(iter(self._digests)))

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
        try:
            data = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise ToolError("invalid_arguments", "data is not valid base64") from exc
        self._check_size(len(data))
        fd = os.memfd_create("pdf-airlock-inline", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, _SEALS)
        except BaseException:
            os.close(fd)
            raise
        return Document(
            fd=fd, size=len(data), sha256=hashlib.sha256(data).hexdigest(), display="<inline data>"
        )
