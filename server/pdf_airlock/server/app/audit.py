"""The audit record of one tool call: the ``tool_call`` event on the ``pdf_airlock.audit`` logger.

It names the call (request id, tool), the document by hash and size (never its content), the
outcome, and the jobs the call ran: their ids (each has its own ``job_exit`` event), how many
finished and were cancelled, their summed CPU and longest wall time, and their highest peak
memory. It is logged once, when the call has answered and every task it left running
(``App.start_detached``: a two-ended read's abandoned child, say) has ended, so it counts those
jobs too.

Listeners (``add_listener``) see each record as it is logged: the HTTP transport's Prometheus
metrics (``pdf_airlock.server.http.metrics``) count calls, outcomes and cache hits from them.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from pdf_airlock.server.pool.child_output import JobOutcome

__all__ = ["CallAudit", "Listener", "add_listener", "begin", "current", "remove_listener"]

log = structlog.get_logger(__name__)

Listener = Callable[[dict[str, Any]], None]
_LISTENERS: list[Listener] = []


def add_listener(listener: Listener) -> None:
    """Call ``listener(event)`` with every ``tool_call`` record once it is logged."""
    _LISTENERS.append(listener)


def remove_listener(listener: Listener) -> None:
    if listener in _LISTENERS:
        _LISTENERS.remove(listener)


@dataclass(slots=True)
class CallAudit:
    """One call's record (``event``), and what it still waits for before it is logged."""

    event: dict[str, Any] = field(default_factory=dict)
    running: int = 0
    answered: bool = False

    def job_started(self, job_id: int) -> None:
        self.event.setdefault("job_ids", []).append(job_id)

    def job_cancelled(self) -> None:
        self.event["jobs_cancelled"] = self.event.get("jobs_cancelled", 0) + 1

    def job_finished(self, outcome: JobOutcome) -> None:
        """Summed CPU, and the longest wall time and highest peak over the call's job children."""
        event = self.event
        event["jobs"] = event.get("jobs", 0) + 1
        cpu = outcome.rusage.get("utime", 0) + outcome.rusage.get("stime", 0)
        event["job_cpu_s"] = round(event.get("job_cpu_s", 0) + cpu, 4)
        event["job_wall_ms"] = max(event.get("job_wall_ms", 0), outcome.wall_ms)
        event["job_peak_rss_kb"] = max(
            event.get("job_peak_rss_kb", 0), int(outcome.rusage.get("maxrss_kb", 0))
        )

    def detached_started(self) -> None:
        self.running += 1

    def detached_ended(self) -> None:
        self.running -= 1
        self.settle()

    def answer(self) -> None:
        self.answered = True
        self.settle()

    def settle(self) -> None:
        if self.answered and self.running == 0:
            log.info("tool_call", **self.event)
            for listener in _LISTENERS:
                listener(self.event)


_CURRENT: contextvars.ContextVar[CallAudit | None] = contextvars.ContextVar("pdf_airlock_audit", default=None)


def begin(request_id: object, tool: str) -> CallAudit:
    """The record of the call the current task starts now."""
    audit = CallAudit({"request_id": request_id, "tool": tool})
    _CURRENT.set(audit)
    return audit


def current() -> CallAudit:
    """The current call's record; a record nobody logs outside a call (a job run directly)."""
    return _CURRENT.get() or CallAudit()
