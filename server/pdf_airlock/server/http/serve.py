"""``pdf-airlock serve --transport streamable-http``: the pool, the ASGI app and uvicorn.

Start-up: the options are checked (a bad flag, policy file or JWKS file is a usage error, exit
status 2), the zygote spawned, and uvicorn listens at once; ``/readyz`` says ready once the
zygote is warm and the sandbox self-test has passed. With ``--require-sandbox`` the probe runs
before listening and a missing layer stops the server. SIGTERM stops accepting connections and
lets in-flight calls finish (``--shutdown-grace``); SIGINT stops at once (exit status 130).
Signals are handled here, not by uvicorn, so the pool always shuts down in order. The event loop
is uvloop's (uvicorn's own choice where it is installed): its C transports and loop cost the
server less CPU a call (row "Streamable HTTP beside stdio", ``bench/perf/http_load.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from typing import Final

import anyio
import structlog
import uvicorn

from pdf_airlock.server import __version__
from pdf_airlock.server.app.calls import App
from pdf_airlock.server.app.policy import Policy, PolicyError, load_policy
from pdf_airlock.server.config import DEFAULTS, KIB, Settings
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.http.connections import ListenerLimits, connection_budget, guarded_protocol
from pdf_airlock.server.http.health import Health
from pdf_airlock.server.http.metrics import Metrics
from pdf_airlock.server.http.options import HttpOptions, UsageError, http_options
from pdf_airlock.server.http.routes import build_asgi
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.probe import missing_layers, probe_layers, summary

__all__ = ["main", "serve_http"]

log = structlog.get_logger(__name__)

EXIT_USAGE: Final = 2
EXIT_SANDBOX: Final = 1
EXIT_NOT_LISTENING: Final = 1  # uvicorn could not listen (the address is taken, say); it logged why
EXIT_INTERRUPTED: Final = 130


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers (``_handle_signals`` below sets ``should_exit``)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _self_test(pool: Pool, settings: Settings, health: Health) -> bool:
    """Probe the sandbox; ``health.self_test`` says whether every required layer is active."""
    try:
        layers = await probe_layers(pool, settings)
    except ToolError as error:
        log.error("sandbox_probe_failed", code=error.code)
        return False
    missing = missing_layers(layers, settings.require_layers)
    log.info("sandbox_layers", layers=summary(layers), missing=missing)
    health.self_test = not missing
    return not missing


async def _handle_signals(server: _Server, pool: Pool) -> None:
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            if signum == signal.SIGINT:
                log.warning("interrupted")
                pool.kill_now()
                os._exit(EXIT_INTERRUPTED)
            log.info("terminating")
            server.should_exit = True


def listener_limits(settings: Settings) -> ListenerLimits:
    """The listener's limits; the open-file limit is raised (or the connection cap lowered) so
    that ``--fd-reserve`` descriptors stay free of connections."""
    return ListenerLimits(
        max_head_bytes=settings.http_max_head_kb * KIB,
        head_timeout_s=settings.http_head_timeout_s,
        keepalive_timeout_s=settings.http_keepalive_timeout_s,
        max_connections=connection_budget(settings.http_max_connections, settings.http_fd_reserve),
    )


async def serve_http(settings: Settings, options: HttpOptions, policy: Policy) -> int:
    """Serve until SIGTERM; the exit status."""
    limits = listener_limits(settings)  # before the zygote starts: it inherits the limit
    pool = Pool(
        settings.workers,
        settings.queue_depth,
        DEFAULTS.zygote_start_timeout_s,
        settings.kill_grace_s,
        resident_idle_s=settings.child_idle_s,
    )
    async with pool:
        health = Health(pool)
        if settings.require_layers and not await _self_test(pool, settings, health):
            sys.stderr.write("pdf-airlock: a required sandbox layer is not active\n")
            return EXIT_SANDBOX
        app = App(settings, pool)
        metrics = Metrics(pool)
        asgi = build_asgi(app, options, policy, health, metrics, settings=settings)
        config = uvicorn.Config(
            asgi,
            host=options.host,
            port=options.port,
            http=guarded_protocol(limits),
            ws="none",
            timeout_keep_alive=max(1, round(limits.keepalive_timeout_s)),
            log_config=None,
            access_log=False,
            server_header=False,
            lifespan="on",
            timeout_graceful_shutdown=max(1, int(settings.shutdown_grace_s)),
        )
        server = _Server(config)
        log.info(
            "http_server_starting",
            version=__version__,
            host=options.host,
            port=options.port,
            auth=options.auth is not None,
            policy=str(options.policy_file) if options.policy_file else None,
            workers=settings.workers,
            max_connections=limits.max_connections,
        )
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_handle_signals, server, pool)
                if not settings.require_layers:
                    tg.start_soon(_self_test, pool, settings, health)
                await server.serve()
                tg.cancel_scope.cancel()
        finally:
            metrics.close()
    log.info("server_stopped")
    return 0 if server.started else EXIT_NOT_LISTENING


def main(settings: Settings, ns: argparse.Namespace) -> int:
    """``serve --transport streamable-http``: check the options, then serve; the exit status."""
    try:
        options = http_options(ns, settings)
        policy = load_policy(options.policy_file, settings.roots, settings.max_file_bytes)
        if options.auth is not None:
            from pdf_airlock.server.http.auth import JwtVerifier

            JwtVerifier(options.auth)  # a bad JWKS file stops the server here
    except (UsageError, PolicyError, ValueError) as exc:
        sys.stderr.write(f"pdf-airlock: {exc}\n")
        return EXIT_USAGE
    return anyio.run(serve_http, settings, options, policy, backend_options={"use_uvloop": True})
