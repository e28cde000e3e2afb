"""The supervisor's end of one zygote: its control socket, the jobs in flight on it, the idle
spares it handed over, and what its reports mean for a job.

The zygote is half-trusted (it never parses a document): its messages are read with a size
cap and checked against their shape (``contract.decode_report``: ``Ready``, ``Spare``,
``Started``, ``Lost``, ``Refused``, ``Exit``), and the only fd it may pass is a spare's socket,
which ``pdf_airlock.server.pool.spares`` treats as write-only.
"""

from __future__ import annotations

import array
import os
import socket
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import structlog

from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.child_output import JobOutcome, exit_summary
from pdf_airlock.server.pool.spares import Residents, Spares
from pdf_airlock.worker.contract import Exit, Lost, Order, Ready, Refused, Report, Spare, Started

__all__ = ["NotDelivered", "Pending", "ZygoteLink", "reaped_outcome"]

audit_log = structlog.get_logger(__name__)

_MAX_CONTROL_MESSAGE: Final = 1 << 16
_FD_SPACE: Final = socket.CMSG_SPACE(array.array("i").itemsize)  # a ``spare`` brings one fd


class NotDelivered(Exception):
    """The zygote never took the job over (it is gone, or the spare was); it may be sent again."""


@dataclass(slots=True)
class Pending:
    kind: str
    exited: anyio.Event = field(default_factory=anyio.Event)
    exit_message: Exit | None = None
    pid: int | None = None
    started: bool = False  # the zygote acknowledged the job: from here a zygote death fails it
    failure: str | None = None
    refused: bool = False
    answered: bool = False  # answered before its exit report; the report is only logged
    abandoned: bool = False  # killed unanswered (cancelled, not needed, bad output): only logged


@dataclass(slots=True)
class ZygoteLink:
    process: anyio.abc.Process
    sock: socket.socket
    started: float
    ready: anyio.Event = field(default_factory=anyio.Event)
    pending: dict[int, Pending] = field(default_factory=dict)
    spares: Spares = field(default_factory=Spares)
    residents: Residents = field(default_factory=lambda: Residents(0, 0.0))  # set by the pool
    kinds: frozenset[str] = frozenset()  # the job kinds it runs, from ``ready``
    layers: dict[str, Any] = field(default_factory=dict)
    alive: bool = True

    def send(self, message: Order, fds: list[int] | None = None) -> None:
        payload = message.to_wire()
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        self.sock.sendmsg([payload], ancillary)

    def receive(self) -> tuple[bytes, list[int]]:
        """One datagram and the fds that came with it, close-on-exec (no spawn inherits them)."""
        data, ancdata, _flags, _addr = self.sock.recvmsg(
            _MAX_CONTROL_MESSAGE, _FD_SPACE, socket.MSG_CMSG_CLOEXEC
        )
        fds = array.array("i")
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
        return data, list(fds)

    def on_message(self, message: Report, fds: list[int]) -> None:
        if isinstance(message, Spare) and len(fds) == 1:
            self.spares.offer(message.pid, message.generation, fds.pop())
        for fd in fds:
            os.close(fd)
        if isinstance(message, Ready):
            self.kinds = frozenset(message.kinds)
            self.layers = dict(message.layers)
            self.ready.set()
            return
        if isinstance(message, Spare):
            return
        pending = self.pending.get(message.id)
        if pending is None:
            return
        if isinstance(message, Started):
            pending.pid = message.pid
            pending.started = True
        elif isinstance(message, (Lost, Refused)):  # the job never ran: no exit report will come for it
            if isinstance(message, Lost):
                pending.failure = "the spare exited before the zygote took the job over"
            pending.refused = isinstance(message, Refused)
            pending.exited.set()
            if pending.abandoned:
                self.pending.pop(message.id, None)
        else:
            pending.exit_message = message
            pending.exited.set()
            if pending.answered or pending.abandoned:
                self.pending.pop(message.id, None)
                _log_late_exit(pending, message)

    def retire(self, reason: str) -> int:
        """Fail every job in flight and discard the idle spares; the jobs that failed (neither
        answered nor abandoned: those only awaited an exit report for the audit log)."""
        self.alive = False
        self.ready.set()  # wake waiters; they see it is dead
        for pending in self.pending.values():
            pending.failure = reason
            pending.exited.set()
        self.spares.close()
        self.residents.close()
        self.sock.close()
        return sum(1 for pending in self.pending.values() if not (pending.answered or pending.abandoned))


def _log_late_exit(pending: Pending, message: Exit) -> None:
    """The exit report of a job already answered or abandoned: its usage for the audit trail,
    and a warning if an answered job died abnormally after writing a complete result."""
    usage = message.rusage
    fields = {
        "job": message.id,
        "kind": pending.kind,
        "pid": pending.pid,
        "exit": exit_summary(message.status),
        "job_cpu_s": round(usage.get("utime", 0.0) + usage.get("stime", 0.0), 4),
        "job_peak_rss_kb": int(usage.get("maxrss_kb", 0)),
        "job_wall_ms": message.wall_ms,
    }
    if pending.abandoned:
        audit_log.info("job_exit", abandoned=True, **fields)
    elif message.status != 0 or message.deadline_hit or message.killed:
        audit_log.warning("job_exit_after_answer", deadline_hit=message.deadline_hit, **fields)
    else:
        audit_log.info("job_exit", **fields)


def reaped_outcome(pending: Pending, output: bytes, overflow: bool) -> JobOutcome:
    """The outcome of a job whose exit report arrived (or whose zygote died) before its answer."""
    if pending.refused:
        raise ToolError(
            "internal", f"the worker refused a job of kind {pending.kind!r} (unknown, or test-only)"
        )
    if pending.failure is not None and not pending.started:
        raise NotDelivered
    if pending.failure is not None or pending.exit_message is None:
        raise ToolError("worker_unavailable", "the worker process exited during the job; retry")
    message = pending.exit_message
    return JobOutcome(
        untrusted_output=output,
        output_overflow=overflow,
        status=message.status,
        deadline_hit=message.deadline_hit,
        killed=message.killed,
        wall_ms=message.wall_ms,
        rusage=dict(message.rusage),
    )
