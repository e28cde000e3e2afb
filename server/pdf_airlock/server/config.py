"""Runtime settings of the supervisor: roots, limits, timeouts, concurrency.

Every limit is named here with its default and documented in docs/configuration.md. The CLI
fills a ``Settings`` from flags and ``PDF_AIRLOCK_*`` environment variables.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pdf_airlock.worker.contract import Limits, OcrLimits

__all__ = ["BATCH_PROGRESS_MODES", "CACHE_SCOPES", "DEFAULTS", "SERVE_LIMITS", "Limit", "Settings"]

MIB: Final = 1 << 20
KIB: Final = 1 << 10


@dataclass(frozen=True, slots=True)
class _Defaults:
    max_file_mb: int = 100
    timeout_s: float = 30.0
    memory_mb: int = 1024
    max_result_mb: int = 16
    max_chars: int = 100_000
    max_chars_ceiling: int = 2_000_000
    queue_depth: int = 64
    kill_grace_s: float = 2.0
    shutdown_grace_s: float = 10.0
    cache_mb: int = 64
    cache_disk_mb: int = 256
    zygote_start_timeout_s: float = 60.0
    job_nice: int = 10
    busy_stretch: float = 3.0  # a starved job's wall deadline may grow to this multiple
    batch_max_document_mb: int = 64
    documents_per_child: int = 1  # a fresh job child per document, unless opted into more
    max_documents_per_child: int = 1000
    child_idle_s: float = 60.0  # a child between two documents of its key waits this long at most
    max_child_idle_s: float = 3600.0
    batch_progress_s: float = 10.0  # between ``batch_progress`` events (``pdf_airlock.server.batch.report``)
    # A 2026-07-28 approval's signed requestState counts this long (``pdf_airlock.server.app.approval_state``)
    approval_state_ttl_s: float = 300.0
    approval_state_ttl_range: tuple[float, float] = (10.0, 3600.0)
    # Answers delivered as resources (``pdf_airlock.server.app.resources``)
    resource_ttl_s: float = 3600.0
    resource_ttl_range: tuple[float, float] = (60.0, 7 * 86400.0)
    resource_mb: int = 64
    resource_mb_range: tuple[int, int] = (0, 65_536)
    resource_disk_mb: int = 256
    resource_disk_mb_range: tuple[int, int] = (0, 1_048_576)
    resource_part_chars: int = 100_000
    resource_part_chars_range: tuple[int, int] = (1_000, 2_000_000)


DEFAULTS: Final = _Defaults()
BATCH_PROGRESS_MODES: Final = ("auto", "bar", "json", "none")  # ``pdf_airlock.server.batch.report``
# Whose calls one result-cache entry answers (``pdf_airlock.server.cache``): only the principal's
# that made it (the default), or every principal's (``--cache-scope shared``).
CACHE_SCOPES: Final = ("principal", "shared")


@dataclass(frozen=True, slots=True)
class Limit:
    """A ``serve`` setting with a range: the flag ``--<flag>``, the variable
    ``PDF_AIRLOCK_<FLAG>``, the default and the bounds, in the flag's unit."""

    flag: str
    default: float
    low: float
    high: float
    help: str
    integer: bool = True

    @property
    def env(self) -> str:
        return "PDF_AIRLOCK_" + self.flag.replace("-", "_").upper()


# The HTTP service's limits (``serve --transport streamable-http``; docs/configuration.md, "The
# HTTP service"): the ``Settings`` field of each, its flag, default and range.
SERVE_LIMITS: Final[dict[str, Limit]] = {
    "http_max_head_kb": Limit(
        "max-head-kb", 64, 1, 1024, "largest request head (request line and headers), KiB: 431 past it"
    ),
    "http_head_timeout_s": Limit(
        "head-timeout",
        5.0,
        0.1,
        300,
        "seconds a connection has to send a whole request head (from opening, or from a later "
        "request's first byte); then 408 and closed",
        integer=False,
    ),
    "http_keepalive_timeout_s": Limit(
        "keepalive-timeout",
        5.0,
        0.1,
        3600,
        "seconds a connection may stay open between two requests",
        integer=False,
    ),
    "http_max_connections": Limit(
        "max-connections",
        1000,
        1,
        1_000_000,
        "connections open at once; at the cap a new one closes the oldest that has no request in flight",
    ),
    "http_fd_reserve": Limit(
        "fd-reserve",
        256,
        16,
        65_536,
        "file descriptors kept free of connections for the pool, documents and the JWKS fetch "
        "(--max-connections is lowered to fit the open-file limit)",
    ),
    "http_body_timeout_s": Limit(
        "body-timeout",
        60.0,
        1,
        3600,
        "seconds a request's body has to arrive whole, from the end of its head; then 408 and closed",
        integer=False,
    ),
    "http_max_body_mb": Limit(
        "max-body-mb",
        16,
        0.01,
        4096,
        "largest request body, MiB (inline documents are base64: 4/3 of their size)",
        integer=False,
    ),
    "http_sessions_per_principal": Limit(
        "sessions-per-principal", 100, 1, 100_000, "MCP sessions one principal may hold open"
    ),
    "http_bodies_per_principal": Limit(
        "bodies-per-principal",
        4,
        1,
        1000,
        "request bodies over 64 KiB one principal may send at once when its policy sets no "
        "concurrency (otherwise its concurrency); 429 past it",
    ),
    "auth_jwks_refresh_s": Limit(
        "auth-jwks-refresh",
        300,
        1,
        86_400,
        "seconds a JWKS fetched from a URL is used before it is fetched again (a withdrawn key "
        "stops verifying then)",
        integer=False,
    ),
    "auth_jwks_cooldown_s": Limit(
        "auth-jwks-cooldown",
        30,
        1,
        3600,
        "least seconds between two fetches of a JWKS URL, after a success or a failure",
        integer=False,
    ),
}


def _default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)))


@dataclass(frozen=True, slots=True)
class Settings:
    """Everything the supervisor needs to know; immutable once the server starts."""

    roots: tuple[Path, ...] = field(default_factory=lambda: (Path.cwd(),))
    max_file_bytes: int = DEFAULTS.max_file_mb * MIB
    timeout_s: float = DEFAULTS.timeout_s
    cpu_seconds: int = int(DEFAULTS.timeout_s)
    memory_bytes: int = DEFAULTS.memory_mb * MIB
    max_result_bytes: int = DEFAULTS.max_result_mb * MIB
    workers: int = field(default_factory=_default_workers)
    queue_depth: int = DEFAULTS.queue_depth
    kill_grace_s: float = DEFAULTS.kill_grace_s
    shutdown_grace_s: float = DEFAULTS.shutdown_grace_s
    cache_bytes: int = DEFAULTS.cache_mb * MIB
    cache_dir: Path | None = None
    cache_key_file: Path | None = (
        None  # the HMAC secret of --cache-dir's entries (``pdf_airlock.server.app.cache``)
    )
    cache_disk_bytes: int = DEFAULTS.cache_disk_mb * MIB
    require_layers: tuple[str, ...] = ()
    net_namespace: bool = False
    job_nice: int = DEFAULTS.job_nice
    busy_stretch: float = DEFAULTS.busy_stretch
    # Jobs one child may serve, all of one root and one client (``pdf_airlock.server.pool.spares``)
    documents_per_child: int = DEFAULTS.documents_per_child
    child_idle_s: float = DEFAULTS.child_idle_s
    # OCR's limits (checked in range when made), sent in every job's limits
    ocr: OcrLimits = field(default_factory=OcrLimits)
    approval_state_ttl_s: float = DEFAULTS.approval_state_ttl_s
    # Answers delivered as resources: how long they last, memory, disk (with cache_dir), part size
    resource_ttl_s: float = DEFAULTS.resource_ttl_s
    resource_bytes: int = DEFAULTS.resource_mb * MIB
    resource_disk_bytes: int = DEFAULTS.resource_disk_mb * MIB
    resource_part_chars: int = DEFAULTS.resource_part_chars
    # ``serve``'s HTTP limits (names, defaults and ranges: ``SERVE_LIMITS``)
    http_max_head_kb: int = int(SERVE_LIMITS["http_max_head_kb"].default)
    http_head_timeout_s: float = SERVE_LIMITS["http_head_timeout_s"].default
    http_keepalive_timeout_s: float = SERVE_LIMITS["http_keepalive_timeout_s"].default
    http_max_connections: int = int(SERVE_LIMITS["http_max_connections"].default)
    http_fd_reserve: int = int(SERVE_LIMITS["http_fd_reserve"].default)
    http_body_timeout_s: float = SERVE_LIMITS["http_body_timeout_s"].default
    http_max_body_mb: float = SERVE_LIMITS["http_max_body_mb"].default
    http_sessions_per_principal: int = int(SERVE_LIMITS["http_sessions_per_principal"].default)
    http_bodies_per_principal: int = int(SERVE_LIMITS["http_bodies_per_principal"].default)
    auth_jwks_refresh_s: float = SERVE_LIMITS["auth_jwks_refresh_s"].default
    auth_jwks_cooldown_s: float = SERVE_LIMITS["auth_jwks_cooldown_s"].default
    cache_scope: str = CACHE_SCOPES[0]

    def job_limits(self) -> Limits:
        """The limits every job's child applies to itself (``pdf_airlock.worker.child``)."""
        return Limits(
            memory_bytes=self.memory_bytes,
            cpu_seconds=self.cpu_seconds,
            max_input_bytes=self.max_file_bytes,
            max_result_bytes=self.max_result_bytes,
            nice=self.job_nice,
            documents=self.documents_per_child,
            ocr=self.ocr,
        )

    def sandbox_spec(self) -> dict[str, object]:
        """What every job asks of its child's sandbox."""
        return {"require": list(self.require_layers), "net_namespace": self.net_namespace}

    @property
    def max_message_bytes(self) -> int:
        """A frame may carry a whole file inline as base64 (4/3 of its size) plus the envelope."""
        return self.max_file_bytes * 4 // 3 + MIB
