"""The ``--out`` file of a ``batch`` run: JSON Lines, appended, resumable, one run at a time.

It must be a regular file (or not exist yet): a device, a FIFO or a directory is refused before
anything is read from it (``/dev/full`` reads zeros forever). The run holds an exclusive
``flock`` on it to the end, so a second run on the same file is refused instead of mixing its
lines in or cutting this run's line in progress short. Each line is written whole with
``os.write`` (no buffer left to flush at exit); a line the system refuses (a full disk, a file
size limit) raises ``OSError`` and ends the run.
"""

from __future__ import annotations

import fcntl
import json
import os
import stat
from pathlib import Path
from typing import Any, Final

__all__ = ["Output", "OutputLocked", "OutputRefused"]

_TAIL_CHUNK: Final = 1 << 16


class OutputRefused(Exception):
    """The output cannot be opened or is not a regular file; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class OutputLocked(Exception):
    """Another run holds the output's lock."""


class Output:
    def __init__(self, path: Path) -> None:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
        try:  # non-blocking: a FIFO nobody reads fails here instead of waiting for a reader
            self.fd = os.open(path, flags, 0o666)
        except OSError as exc:
            raise OutputRefused(exc.strerror or type(exc).__name__) from exc
        try:
            if not stat.S_ISREG(os.fstat(self.fd).st_mode):
                raise OutputRefused("not a regular file")
            os.set_blocking(self.fd, True)
            try:  # held to the end: a second run on the same file would cut this one's line short
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise OutputLocked from None
            except OSError as exc:  # a filesystem without locks: one run at a time is not sure
                raise OutputRefused(f"cannot lock it ({exc.strerror})") from exc
        except BaseException:
            os.close(self.fd)
            raise

    def __enter__(self) -> Output:
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)

    def append(self, line: dict[str, Any]) -> None:
        self.append_all([line])

    def append_all(self, lines: list[dict[str, Any]]) -> None:
        """The lines in one write loop (a document's chunks land together)."""
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)
        data = memoryview(text.encode("utf-8", errors="replace"))
        while data:
            data = data[os.write(self.fd, data) :]

    def done_digests(self, tool: str) -> set[str]:
        """The sha256 of every document with a line of ``tool`` that settles it: a result, or an
        error that is not ``retryable`` (``overloaded``, ``worker_unavailable``, ``cancelled`` run
        again). A line without ``tool`` (written before lines named theirs) counts for any tool.
        Read a line at a time: an output of rendered pages can be far larger than memory."""
        digests = set()
        with open(os.dup(self.fd), "rb") as lines:
            lines.seek(0)
            for line in lines:
                try:
                    record = json.loads(line)
                    digest, error, by = record["sha256"], record.get("error"), record.get("tool", tool)
                except (ValueError, KeyError, TypeError, AttributeError):
                    continue  # not one of our lines (or a torn one mid-file): nothing to skip
                retry = isinstance(error, dict) and error.get("retryable") is True
                if isinstance(digest, str) and by == tool and not retry:
                    digests.add(digest)
        return digests

    def cut_torn_tail(self) -> int:
        """Bytes cut from the end: a last line without its newline (the run that wrote it was
        killed mid-write) that is not whole JSON. Appending after it would fuse the next line
        with it; cut off, its document runs again. A whole last line only gets its newline.
        Reads the last line only."""
        size = os.fstat(self.fd).st_size
        if size == 0 or os.pread(self.fd, 1, size - 1) == b"\n":
            return 0
        start = _last_line_start(self.fd, size)
        try:
            json.loads(os.pread(self.fd, size - start, start))
        except ValueError:
            os.ftruncate(self.fd, start)
            return size - start
        os.write(self.fd, b"\n")
        return 0


def _last_line_start(fd: int, size: int) -> int:
    end = size
    while end > 0:
        begin = max(0, end - _TAIL_CHUNK)
        newline = os.pread(fd, end - begin, begin).rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0
