"""The idle pre-forked spares one zygote handed to the supervisor, and the direct job hand-over.

The zygote forks each spare already sandboxed for one spec (a job's limits and sandbox
request) and passes its end of the spare's socketpair here over the control socket (SCM_RIGHTS,
``contract.Spare``), keeping no copy. A job whose spec matches is sent straight to an idle
spare: the job datagram with [input fd, result pipe], after which the socket is closed;
``pdf_airlock.server.pool.pool`` then tells the zygote (``contract.Assigned``), which takes the
child over (deadline, kill, reap, exit report). This saves the two hops through the zygote.

Invariants:
- A spare socket is write-only. It is shut down for reading when it arrives and never read,
  and every send is non-blocking, so neither a spare nor the job child it becomes can stall
  the supervisor or hand it anything to parse.
- A failed send means the spare died idle (EPIPE, ECONNREFUSED...): it is dropped and the next
  idle spare is tried. Nothing is killed here; the zygote reaps its own children.
- All idle spares are of the current generation. The supervisor numbers each distinct spec it
  sends the zygote on the fallback path (a job with no matching spare goes through the zygote,
  as before); a new spec closes every idle spare first, and a spare of an older generation is
  closed on arrival. The zygote kills its spares of an old generation when it sees the new one.
- Closing a spare's socket discards it: an idle spare that reads EOF exits.

Residents (opt-in, ``--documents-per-child`` > 1): a child whose spec allows several jobs keeps
its socket open after its job (``pdf_airlock.worker.child``). The supervisor then keeps the
socket of a child that answered well, under the key of the job's spec *and* its share (the
client and the root of its document, ``pdf_airlock.server.app.calls``), and sends it the next job of
that same key only; never a job of another client or root. A resident closes its own socket
before its answer's EOF when it will not go on (its last document, a failed job), so a send to
it fails at once (EPIPE) and the job goes to the next resident or a spare; no job is ever queued
for a child that will not read it. At most ``capacity`` residents are kept, oldest closed first;
a new spec closes them all, and a resident that has waited ``idle_s`` for its next job is closed
(``expire_idle``; ``hand_over`` skips it too): no child keeps a client's documents in its memory
past that. A child that a document took control of may ignore the hang-up, so every resident
closed here is also named to ``dropped`` (the pool tells the zygote, which kills it), and the
documents each child has served are counted here, not taken from the child's word.
"""

from __future__ import annotations

import array
import json
import os
import socket
import time
from collections.abc import Callable
from typing import Any, NamedTuple, NoReturn

import anyio
import structlog

from pdf_airlock.worker.contract import Limits

__all__ = ["Residents", "Spares", "spec_key"]

log = structlog.get_logger(__name__)


def spec_key(limits: Limits, sandbox: dict[str, Any]) -> str:
    """What a spare is made for, as a value that later edits of the caller's dict cannot change."""
    wire = {"limits": limits.to_wire(), "sandbox": sandbox}
    return json.dumps(wire, sort_keys=True, separators=(",", ":"))


class Spares:
    """Idle spares of one zygote, oldest first (the oldest has finished its warm-up parse)."""

    def __init__(self) -> None:
        self._idle: dict[int, socket.socket] = {}
        self._spec: str | None = None
        self.generation = 0

    def pids(self) -> list[int]:
        return list(self._idle)

    def offer(self, pid: object, generation: object, fd: int) -> None:
        """Keep a spare the zygote passed over (it is only half-trusted: the message is checked),
        unless it was made for an older spec."""
        try:
            sock = socket.socket(fileno=fd)
        except OSError:  # not a socket
            os.close(fd)
            return
        if (
            (sock.family, sock.type) != (socket.AF_UNIX, socket.SOCK_SEQPACKET)
            or not isinstance(pid, int)
            or generation != self.generation
            or pid in self._idle
        ):
            sock.close()
            return
        try:
            sock.setblocking(False)
            sock.shutdown(socket.SHUT_RD)  # whatever the peer sends is refused, never queued here
        except OSError as exc:
            # Not a dead spare (that fails the send later): this host refuses the call itself,
            # for instance a seccomp profile without shutdown. Every job then forks on demand.
            log.warning("spare_refused", pid=pid, errno=exc.errno)
            sock.close()
            return
        self._idle[pid] = sock

    def hand_over(
        self, spec: str, payload: bytes, fds: list[int], *, keep: bool = False
    ) -> tuple[int, socket.socket | None] | None:
        """Send the job to an idle spare made for ``spec``: (its pid, its socket if ``keep``,
        else None: closed), or None if none took it."""
        if spec != self._spec:
            return None
        while self._idle:
            pid = next(iter(self._idle))
            sock = self._idle.pop(pid)
            if not _send_job(sock, payload, fds):  # it died idle (or its queue is somehow full)
                sock.close()
                continue
            if keep:
                return pid, sock
            sock.close()  # the datagram stays queued for the spare; it reads it, then EOF
            return pid, None
        return None

    def use_spec(self, spec: str) -> int:
        """The generation to send with a job on the fallback path; a new spec is a new
        generation, and the idle spares of the old one are discarded first."""
        if spec != self._spec:
            self.close()
            self._spec = spec
            self.generation += 1
        return self.generation

    def close(self) -> None:
        """Discard every idle spare (each reads EOF and exits)."""
        for sock in self._idle.values():
            sock.close()
        self._idle.clear()


def _send_job(sock: socket.socket, payload: bytes, fds: list[int]) -> bool:
    """The job datagram with its fds, without blocking; False if the child cannot take it."""
    try:
        sock.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    except OSError:
        return False
    return True


class _Resident(NamedTuple):
    key: str
    sock: socket.socket
    since: float  # when it was kept (monotonic)
    served: int  # documents it has answered


def _no_one(_pid: int) -> None:
    """``Residents.dropped`` until the pool sets it."""


class Residents:
    """Children between two jobs of one key (spec and share), by pid, in the order they were
    kept (oldest first), each with the time it was kept and the documents it has served.
    ``dropped(pid)`` is called for each one closed here (not for one handed a job)."""

    def __init__(self, capacity: int, idle_s: float, dropped: Callable[[int], None] = _no_one) -> None:
        self.capacity = capacity
        self.idle_s = idle_s
        self.dropped = dropped
        self._idle: dict[int, _Resident] = {}
        self._kept = anyio.Event()

    def __len__(self) -> int:
        return len(self._idle)

    def _drop(self, pid: int) -> None:
        self._idle.pop(pid).sock.close()
        self.dropped(pid)

    def hand_over(self, key: str, payload: bytes, fds: list[int]) -> tuple[int, socket.socket, int] | None:
        """Send the job to a resident of ``key`` that has not waited past ``idle_s``: (its pid,
        its socket, still kept, and the documents it served before), or None."""
        now = time.monotonic()
        for pid, resident in list(self._idle.items()):
            if now - resident.since >= self.idle_s:
                self._drop(pid)
                continue
            if resident.key != key:
                continue
            del self._idle[pid]
            if _send_job(resident.sock, payload, fds):
                return pid, resident.sock, resident.served
            resident.sock.close()  # it exited between jobs
            self.dropped(pid)
        return None

    def keep(self, pid: int, key: str, sock: socket.socket, served: int) -> bool:
        """Keep a child that answered its job (its ``served``-th) for the next job of ``key``;
        False (and the socket closed) without room. A child that will take no other job has hung
        up already (before its answer was complete): the next job's send to it fails, and that
        job goes elsewhere."""
        if self.capacity < 1:
            sock.close()
            return False
        while len(self._idle) >= self.capacity:
            self._drop(next(iter(self._idle)))
        self._idle[pid] = _Resident(key, sock, time.monotonic(), served)
        self._kept.set()
        return True

    async def expire_idle(self) -> NoReturn:
        """Forever: close each resident once it has waited ``idle_s`` for its next job (it reads
        EOF and exits, or the zygote kills it; the zygote reaps it). Sleeps while there is none."""
        while True:
            if not self._idle:
                self._kept = anyio.Event()
                await self._kept.wait()
                continue
            oldest = next(iter(self._idle.values())).since
            await anyio.sleep(max(0.0, oldest + self.idle_s - time.monotonic()))
            now = time.monotonic()
            for pid, resident in list(self._idle.items()):
                if now - resident.since >= self.idle_s:
                    self._drop(pid)
                    log.debug("resident_expired", pid=pid, idle_s=round(now - resident.since, 3))

    def close(self) -> None:
        """Discard every resident (each reads EOF and exits, or the zygote kills it)."""
        for pid in list(self._idle):
            self._drop(pid)
