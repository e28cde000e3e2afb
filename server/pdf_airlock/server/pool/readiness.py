"""Reading a non-blocking fd from the event loop's own readiness callback.

``anyio.wait_readable`` registers the fd with the kernel, wakes the waiting task once, and
removes the fd again, on every wait. For a pipe that brings one line at a time (a job child's
page lines, the zygote's reports) that is two ``epoll_ctl`` calls and a task switch per line.
Handled in the loop's own callback instead, a line costs markedly less CPU (``python
bench/studies/wake_cost.py`` compares the ways), and long reads, whose children stream a line per page,
answer sooner (the text-100 and text-1000 rows of docs/performance.md). ``reading`` keeps
the fd registered for a block and runs a synchronous ``callback`` each time it is readable; the
callback reads what is there and wakes a task only when the task has something to do.

Runs on the asyncio backend (``anyio.run``'s default, the only one the server uses).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterator

__all__ = ["reading"]


@contextlib.contextmanager
def reading(
    fd: int, callback: Callable[[], bool], on_error: Callable[[BaseException], None]
) -> Iterator[None]:
    """``callback`` runs in the event loop whenever ``fd`` is readable, until it returns True
    (done: EOF, say) or the block exits. Readiness is level-triggered: until then it must read
    everything there (to EAGAIN). An exception from it also stops the reading and goes to
    ``on_error``: it must not reach the loop, which would log it and call the callback again."""
    loop = asyncio.get_running_loop()
    registered = True

    def stop() -> None:
        nonlocal registered
        if registered:
            loop.remove_reader(fd)
            registered = False

    def guarded() -> None:
        try:
            if callback():
                stop()
        except BaseException as exc:  # handed to the task that waits, never to the loop
            stop()
            on_error(exc)

    loop.add_reader(fd, guarded)
    try:
        yield
    finally:
        stop()
