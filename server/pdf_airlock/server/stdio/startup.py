"""The MCP session: transport, pool and protocol started in the order that serves a client fastest.

Start-up order: the transport claims stdio and starts reading at once; the zygote is spawned and warms in its
own process; the ``mcp`` SDK (most of a second to import) loads in a background thread. Meanwhile the
transport answers the opening ``initialize`` / ``server/discover`` itself
(``pdf_airlock.server.mcp.handshake``) and queues everything else; once the SDK is loaded
(``pdf_airlock.server.mcp.sdk_server``) the queue is handed to it in order. This module imports neither the
SDK nor the tool models. With ``--require-sandbox`` nothing is answered before the probe passes.
"""

from __future__ import annotations

import importlib
import os
import signal
import threading
import time
from types import ModuleType
from typing import TYPE_CHECKING, Final

import anyio
import anyio.to_thread
import structlog

from pdf_airlock.server import __version__
from pdf_airlock.server.config import DEFAULTS, Settings
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.mcp.direct_calls import direct_calls_enabled
from pdf_airlock.server.mcp.handshake import FAST_HANDSHAKE_ENV
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.probe import missing_layers, probe_layers, summary
from pdf_airlock.server.stdio.transport import StdioTransport

if TYPE_CHECKING:
    from pdf_airlock.server.app.policy import Approval

__all__ = ["serve"]

log = structlog.get_logger(__name__)

EXIT_INTERRUPTED: Final = 130
EOF_FLUSH_S: Final = 0.05
# How long input that is already queued at EOF may wait for the SDK to finish loading.
PROTOCOL_LOAD_WAIT_S: Final = 30.0
_PROTOCOL_MODULE: Final = "pdf_airlock.server.mcp.sdk_server"


class _ProtocolLoader:
    """Imports ``pdf_airlock.server.mcp.sdk_server`` (the SDK and the tool models) in a daemon thread."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.module: ModuleType | None = None
        self.error: BaseException | None = None
        self.started = time.perf_counter()
        self.load_ms = 0.0
        threading.Thread(target=self._load, name="protocol-loader", daemon=True).start()

    def _load(self) -> None:
        try:
            self.module = importlib.import_module(_PROTOCOL_MODULE)
        except BaseException as exc:  # re-raised on the event loop by wait()
            self.error = exc
        finally:
            self.load_ms = round((time.perf_counter() - self.started) * 1000, 1)
            self.done.set()

    async def wait(self) -> ModuleType:
        if not self.done.is_set():
            await anyio.to_thread.run_sync(self.done.wait, abandon_on_cancel=True)
        if self.error is not None:
            raise self.error
        assert self.module is not None
        log.info("protocol_loaded", load_ms=self.load_ms)
        return self.module


def _fast_handshake(settings: Settings) -> bool:
    # A server that must refuse to run without its sandbox layers answers nothing before the probe.
    return not settings.require_layers and os.environ.get(FAST_HANDSHAKE_ENV, "1") != "0"


async def serve(settings: Settings, approval: Approval | None = None) -> None:
    """Serve MCP on stdio until the client closes stdin. With ``approval`` (``--policy``'s
    ``[approval]`` table) risky actions ask the human first, so every ``tools/call`` goes through
    the SDK (the direct route cannot send the client a request)."""
    loader = _ProtocolLoader()
    transport = StdioTransport(settings.max_message_bytes, fast_handshake=_fast_handshake(settings))
    log.info(
        "server_starting",
        version=__version__,
        roots=[str(root) for root in settings.roots],
        workers=settings.workers,
        timeout_s=settings.timeout_s,
        max_file_bytes=settings.max_file_bytes,
    )
    pool = Pool(
        settings.workers,
        settings.queue_depth,
        DEFAULTS.zygote_start_timeout_s,
        settings.kill_grace_s,
        resident_idle_s=settings.child_idle_s,
    )
    async with pool:
        if settings.require_layers:
            # Refuse to serve at all if a required layer is missing (costs one probe job at start).
            await _report_layers(pool, settings)
        async with anyio.create_task_group() as tg:
            if not settings.require_layers:
                tg.start_soon(_report_layers, pool, settings)
            tg.start_soon(_handle_signals, transport, pool, settings, tg.cancel_scope)
            tg.start_soon(_stop_on_eof, transport, tg.cancel_scope)
            async with transport.running():
                protocol = await loader.wait()
                app = protocol.build_app(settings, pool)
                direct = direct_calls_enabled() and approval is None
                fast = protocol.direct_calls(app) if direct else None
                async with transport.streams(fast) as (read_stream, write_stream):
                    await protocol.run(app, read_stream, write_stream, approval)
            tg.cancel_scope.cancel()
    log.info("server_stopped")


async def _stop_on_eof(transport: StdioTransport, scope: anyio.CancelScope) -> None:
    """EOF on stdin: the client is gone, so in-flight jobs are killed (by cancellation). Answers
    that are ready within a few milliseconds (initialize, tools/list, ping) still go out."""
    await transport.eof.wait()
    if not transport.draining:
        if not transport.idle.is_set():  # queued requests wait for the SDK to finish loading
            with anyio.move_on_after(PROTOCOL_LOAD_WAIT_S):
                await transport.protocol_ready.wait()
        with anyio.move_on_after(EOF_FLUSH_S):
            await transport.idle.wait()
        log.info("stdin_closed", in_flight_cancelled=not transport.idle.is_set())
        scope.cancel()


async def _handle_signals(
    transport: StdioTransport, pool: Pool, settings: Settings, scope: anyio.CancelScope
) -> None:
    """SIGTERM: stop reading, let in-flight calls finish (up to the grace period), exit 0.
    SIGINT: stop now, killing the zygote and its children, exit 130."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            if signum == signal.SIGINT:
                log.warning("interrupted")
                pool.kill_now()
                os._exit(EXIT_INTERRUPTED)
            log.info("terminating", in_flight=not transport.idle.is_set(), grace_s=settings.shutdown_grace_s)
            transport.drain()
            with anyio.move_on_after(settings.shutdown_grace_s):
                await transport.idle.wait()
            scope.cancel()
            return


class SandboxMissing(SystemExit):
    """A required sandbox layer is not active: the server must not serve."""


async def _report_layers(pool: Pool, settings: Settings) -> None:
    try:
        layers = await probe_layers(pool, settings)
    except ToolError as error:
        log.error("sandbox_probe_failed", code=error.code)
        if settings.require_layers:
            raise SandboxMissing(f"pdf-airlock: sandbox probe failed ({error.code})") from error
        return
    missing = missing_layers(layers, settings.require_layers)
    log.info("sandbox_layers", layers=summary(layers), missing=missing)
    if missing:
        raise SandboxMissing(f"pdf-airlock: required sandbox layer(s) not active: {', '.join(missing)}")
