"""``pdf_airlock.server.pool.readiness.reading``: the callback runs while the fd is readable, until it says it
is done, fails, or the block exits; the fd is never left registered with the event loop."""

from __future__ import annotations

import asyncio
import os

import anyio
import pytest

from pdf_airlock.server.pool.readiness import reading

pytestmark = pytest.mark.anyio


def _registered(fd: int) -> bool:
    selector = asyncio.get_running_loop()._selector  # type: ignore[attr-defined]
    try:
        selector.get_key(fd)
    except KeyError:
        return False
    return True


async def test_callback_reads_until_it_is_done() -> None:
    read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    got, calls, finished = bytearray(), [0], anyio.Event()

    def on_readable() -> bool:
        calls[0] += 1
        while True:
            try:
                chunk = os.read(read_fd, 4)
            except BlockingIOError:
                return False
            if not chunk:
                finished.set()
                return True
            got.extend(chunk)

    try:
        with reading(read_fd, on_readable, pytest.fail):
            for part in (b"first line\n", b"second\n"):
                os.write(write_fd, part)
                await anyio.sleep(0.02)
            os.close(write_fd)
            await finished.wait()
            assert not _registered(read_fd)  # done: removed at once, not at the block's end
            await anyio.sleep(0.02)
        assert got == b"first line\nsecond\n" and 2 <= calls[0] <= 3  # no call once it was done
    finally:
        os.close(read_fd)


async def test_a_failing_callback_is_removed_and_its_error_reported() -> None:
    read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    calls, errors = [0], []

    def on_readable() -> bool:
        calls[0] += 1
        raise ValueError("a bug in the handler")

    try:
        with reading(read_fd, on_readable, errors.append):
            os.write(write_fd, b"data that is never read\n")
            await anyio.sleep(0.05)  # still readable: a registered callback would run again
            assert not _registered(read_fd)
        assert calls[0] == 1 and [type(error) for error in errors] == [ValueError]
    finally:
        os.close(read_fd)
        os.close(write_fd)


async def test_leaving_the_block_unregisters_the_fd() -> None:
    read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        with reading(read_fd, lambda: False, pytest.fail):
            assert _registered(read_fd)
        assert not _registered(read_fd)
        with anyio.move_on_after(0.01), reading(read_fd, lambda: False, pytest.fail):
            await anyio.sleep(1)  # cancelled inside the block
        assert not _registered(read_fd)
    finally:
        os.close(read_fd)
        os.close(write_fd)
