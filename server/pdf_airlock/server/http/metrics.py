"""Prometheus metrics of the HTTP service (``GET /metrics``), with ``prometheus_client``.

Calls are counted from the audit records (``pdf_airlock.server.app.audit.add_listener``), so every
call is counted once whichever way it ended; the pool's occupancy is read when scraped.

- ``pdf_airlock_calls_total{tool, outcome}``: outcome ``ok``, the error code, ``cancelled``, or
  ``input_required`` (a 2026-07-28 round that asked a human);
- ``pdf_airlock_call_duration_seconds{tool}``: a histogram of call latency;
- ``pdf_airlock_job_kills_total{limit}``: calls whose job child was stopped by a limit
  (timeout, cpu_limit, memory_limit, output_limit, sandbox_violation);
- ``pdf_airlock_cache_hits_total{tool}``: answers from the result cache;
- ``pdf_airlock_workers``, ``pdf_airlock_workers_busy``, ``pdf_airlock_idle_spares``: the pool;
- ``pdf_airlock_http_refusals_total{status}``: requests refused before MCP (401, 403, 413, 421,
  429).

Nothing here names a document, its hash or a principal, and with the result cache kept per
principal (``--cache-scope principal``) no principal can cause a cache hit another's call would
count.
"""

from __future__ import annotations

from typing import Any, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.requests import Request
from starlette.responses import Response

from pdf_airlock.server.app.audit import add_listener, remove_listener
from pdf_airlock.server.pool.pool import Pool

__all__ = ["KILL_LIMITS", "Metrics"]

KILL_LIMITS: Final = frozenset({"timeout", "cpu_limit", "memory_limit", "output_limit", "sandbox_violation"})
# Seconds: a cached answer is well under a millisecond, a 1-page parse a few, a long one up to --timeout.
LATENCY_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


class Metrics:
    """One registry per server; ``close()`` stops listening to audit records."""

    def __init__(self, pool: Pool) -> None:
        self.registry = CollectorRegistry()
        self.calls = Counter(
            "pdf_airlock_calls",
            "Tool calls by tool and outcome.",
            ["tool", "outcome"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "pdf_airlock_call_duration_seconds",
            "Tool call latency.",
            ["tool"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.kills = Counter(
            "pdf_airlock_job_kills",
            "Calls whose job child a limit stopped.",
            ["limit"],
            registry=self.registry,
        )
        self.cache_hits = Counter(
            "pdf_airlock_cache_hits",
            "Answers served from the result cache.",
            ["tool"],
            registry=self.registry,
        )
        self.refusals = Counter(
            "pdf_airlock_http_refusals",
            "HTTP requests refused before MCP.",
            ["status"],
            registry=self.registry,
        )
        workers = Gauge("pdf_airlock_workers", "Worker slots.", registry=self.registry)
        workers.set_function(lambda: pool.workers)
        busy = Gauge("pdf_airlock_workers_busy", "Worker slots taken.", registry=self.registry)
        busy.set_function(lambda: pool.workers - pool.free_workers())
        spares = Gauge("pdf_airlock_idle_spares", "Pre-forked job children ready.", registry=self.registry)
        spares.set_function(lambda: len(pool.idle_spares()))
        add_listener(self.record)

    def record(self, event: dict[str, Any]) -> None:
        """One audit record (``tool_call``) counted."""
        tool = str(event.get("tool", ""))[:64]
        outcome = str(event.get("outcome", "internal"))
        self.calls.labels(tool, outcome).inc()
        duration_ms = event.get("duration_ms")
        if isinstance(duration_ms, int | float):
            self.latency.labels(tool).observe(duration_ms / 1000)
        if outcome in KILL_LIMITS:
            self.kills.labels(outcome).inc()
        if event.get("cache") == "hit":
            self.cache_hits.labels(tool).inc()

    def refused(self, status: int) -> None:
        self.refusals.labels(str(status)).inc()

    async def endpoint(self, request: Request) -> Response:
        return Response(generate_latest(self.registry), media_type=CONTENT_TYPE_LATEST)

    def close(self) -> None:
        remove_listener(self.record)
