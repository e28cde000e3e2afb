"""CPU the supervisor spends per line a child writes, by way of reading.

    python -m bench.studies.wake_cost


A forked writer sends 12 lines of 3 KB, 1 ms apart (like a job child's page lines); the reader's
thread CPU time is divided by the lines. Three ways, taking turns:

- ``anyio.wait_readable`` in a loop (register, wake the task, unregister: one wait per line);
- the fd kept registered, its callback draining the pipe and waking the task per line;
- the fd kept registered, the lines handled in the callback itself (``pdf_airlock.server.pool.readiness``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable

import anyio

LINES = 12
LINE = b'{"page":' + b"x" * 3000 + b"}\n"


def start_writer(gap_s: float = 0.001) -> tuple[int, int]:
    """(pid, read end) of a child writing ``LINES`` lines ``gap_s`` apart, then closing."""
    read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        for _ in range(LINES):
            time.sleep(gap_s)
            os.write(write_fd, LINE)
        os._exit(0)
    os.close(write_fd)
    os.set_blocking(read_fd, False)
    return pid, read_fd


async def wait_readable_loop(fd: int) -> int:
    lines, ready = 0, False
    while True:
        if not ready:
            await anyio.wait_readable(fd)
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            ready = False
            continue
        ready = True
        if not chunk:
            return lines
        lines += chunk.count(b"\n")


async def callback_wakes_task(fd: int) -> int:
    loop = asyncio.get_running_loop()
    buffer, state = bytearray(), {"eof": False}
    woke = [anyio.Event()]

    def on_readable() -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                break
            if not chunk:
                loop.remove_reader(fd)
                state["eof"] = True
                break
            buffer.extend(chunk)
        woke[0].set()

    loop.add_reader(fd, on_readable)
    lines = 0
    while not state["eof"]:
        await woke[0].wait()
        woke[0] = anyio.Event()
        lines += buffer.count(b"\n")
        del buffer[:]
    return lines


async def handled_in_callback(fd: int) -> int:
    loop = asyncio.get_running_loop()
    done, counted = anyio.Event(), [0]

    def on_readable() -> None:
        while True:
            try:
                chunk = os.read(fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                loop.remove_reader(fd)
                done.set()
                return
            counted[0] += chunk.count(b"\n")

    loop.add_reader(fd, on_readable)
    await done.wait()
    return counted[0]


async def measure(rounds: int) -> dict[str, float]:
    ways: dict[str, Callable[[int], Awaitable[int]]] = {
        "anyio.wait_readable per line": wait_readable_loop,
        "fd kept registered, task woken per line": callback_wakes_task,
        "fd kept registered, lines handled in the callback": handled_in_callback,
    }
    cpu: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, way in ways.items():
            pid, fd = start_writer()
            started = time.thread_time()
            assert await way(fd) == LINES
            cpu[name].append((time.thread_time() - started) / LINES * 1e6)
            os.close(fd)
            os.waitpid(pid, 0)
    return {name: statistics.median(values) for name, values in cpu.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=40)
    medians = anyio.run(measure, parser.parse_args().rounds)
    for name, us in medians.items():
        sys.stdout.write(f"{name}: {us:.0f} us of CPU per line\n")


if __name__ == "__main__":
    main()
