"""The pool: one zygote process, kept alive, that forks a sandboxed child per job.

Invariants:
- The zygote is spawned from the event-loop thread (its parent-death signal is tied to the
  spawning thread) and lives in its own session; if the supervisor dies, it dies.
- At most ``workers`` jobs run at once; at most ``queue_depth`` more wait; beyond that a call
  fails fast with ``overloaded``.
- A job's result pipe is read concurrently with its run, with a hard byte cap; passing the cap
  kills the job. Everything read is returned as untrusted bytes for ``server.jobs`` to judge.
- A job is answered as soon as its pipe reaches EOF holding one complete JSON envelope (the
  child closes the pipe right after writing it), without waiting for the zygote to reap the
  child: ``status`` is then None. The exit report arrives later and is logged (``job_exit``,
  with CPU and peak RSS; a warning if the child then died abnormally). Anything else (no
  output, truncated or unparseable output, over the cap) waits for the exit status, which
  ``server.jobs`` classifies exactly as before.
- The zygote keeps ``spares`` (default: ``workers``) children pre-forked and sandboxed.
- If the zygote dies, every job in flight fails with ``worker_unavailable`` and a new zygote is
  started with exponential backoff.
"""

from __future__ import annotations

import array
import contextlib
import itertools
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import structlog

from server.errors import ToolError
from server.joboutput import JobOutcome, ProgressFn, ProgressLines, complete_envelope, exit_summary
from server.sanitize import clean_text

__all__ = ["JobOutcome", "Pool", "ProgressFn"]

log = structlog.get_logger("pdf_airlock.pool")
audit_log = structlog.get_logger("pdf_airlock.audit")

_MAX_CONTROL_MESSAGE: Final = 1 << 16
_READ_CHUNK: Final = 1 << 16
_BACKOFF_FIRST_S: Final = 0.1
_BACKOFF_MAX_S: Final = 5.0
_HEALTHY_UPTIME_S: Final = 10.0
_MAX_STDERR_LINE: Final = 2000
ZYGOTE_ENV_KEYS: Final = ("LANG", "LC_ALL", "TZ", "PYTHONPATH", "PDF_AIRLOCK_TEST_HOOKS")


_SEND_ATTEMPTS: Final = 2


class _NotDelivered(Exception):
    """The job could not be handed to the zygote (it is gone); the job never started."""


@dataclass(slots=True)
class _Pending:
    kind: str
    exited: anyio.Event = field(default_factory=anyio.Event)
    exit_message: dict[str, Any] | None = None
    pid: int | None = None
    failure: str | None = None
    refused: bool = False
    answered: bool = False  # answered before its exit report; the report is only logged


@dataclass(slots=True)
class _Zygote:
    process: anyio.abc.Process
    sock: socket.socket
    started: float
    ready: anyio.Event = field(default_factory=anyio.Event)
    pending: dict[int, _Pending] = field(default_factory=dict)
    alive: bool = True

    def send(self, message: dict[str, Any], fds: list[int] | None = None) -> None:
        payload = json.dumps(message, separators=(",", ":")).encode()
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        self.sock.sendmsg([payload], ancillary)


class Pool:
    """Owns the zygote's lifecycle and runs jobs on it. Use inside ``async with``."""

    def __init__(
        self,
        workers: int,
        queue_depth: int,
        start_timeout_s: float,
        kill_grace_s: float,
        *,
        command_prefix: tuple[str, ...] = (),
        spares: int | None = None,
    ) -> None:
        """``command_prefix`` wraps the zygote's command (the syscall tracer uses strace);
        ``spares`` is how many pre-forked children the zygote keeps (default: one per worker)."""
        self.command_prefix = command_prefix
        self.spares = workers if spares is None else spares
        self.workers = workers
        self.queue_depth = queue_depth
        self.start_timeout_s = start_timeout_s
        self.kill_grace_s = kill_grace_s
        self._limiter = anyio.CapacityLimiter(workers)
        self._admitted = 0
        self._ids = itertools.count(1)
        self._zygote: _Zygote | None = None
        self._zygote_changed = anyio.Event()
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closing = False
        self.restarts = 0
        self.start_failures = 0
        self.layers: dict[str, Any] = {}

    async def __aenter__(self) -> Pool:
        self._task_group = anyio.create_task_group()
        await self._task_group.__aenter__()
        self._task_group.start_soon(self._maintain)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self._closing = True
        assert self._task_group is not None
        self._task_group.cancel_scope.cancel()
        await self._task_group.__aexit__(None, None, None)

    # -- zygote lifecycle -------------------------------------------------------------

    async def _maintain(self) -> None:
        backoff = _BACKOFF_FIRST_S
        while not self._closing:
            zygote = await self._spawn()
            try:
                await self._serve(zygote)
            finally:
                self.start_failures = 0 if zygote.ready.is_set() else self.start_failures + 1
                self._retire(zygote)
                with anyio.CancelScope(shield=True):
                    await zygote.process.aclose()
            if time.monotonic() - zygote.started > _HEALTHY_UPTIME_S:
                backoff = _BACKOFF_FIRST_S
            await anyio.sleep(backoff)
            backoff = min(backoff * 2, _BACKOFF_MAX_S)
            self.restarts += 1

    async def _spawn(self) -> _Zygote:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {key: os.environ[key] for key in ZYGOTE_ENV_KEYS if key in os.environ}
        try:
            process = await anyio.open_process(
                [
                    *self.command_prefix,
                    sys.executable,
                    "-m",
                    "worker.zygote",
                    str(theirs.fileno()),
                    str(self.spares),
                ],
                stdin=None,
                stdout=None,
                stderr=-1,
                pass_fds=(theirs.fileno(),),
                env=env,
                start_new_session=True,
            )
        finally:
            theirs.close()
        ours.setblocking(False)
        zygote = _Zygote(process=process, sock=ours, started=time.monotonic())
        self._zygote = zygote
        self._zygote_changed.set()
        self._zygote_changed = anyio.Event()
        log.info("zygote_spawned", pid=process.pid)
        return zygote

    async def _serve(self, zygote: _Zygote) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._relay_stderr, zygote)
            await self._read_control(zygote)
            tg.cancel_scope.cancel()

    async def _relay_stderr(self, zygote: _Zygote) -> None:
        stream = zygote.process.stderr
        if stream is None:
            return
        buffer = b""
        async for chunk in stream:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                text, _ = clean_text(line[:_MAX_STDERR_LINE].decode("utf-8", "replace"))
                log.warning("zygote_stderr", line=text)
            buffer = buffer[-_MAX_STDERR_LINE:]

    async def _read_control(self, zygote: _Zygote) -> None:
        while True:
            await anyio.wait_readable(zygote.sock)
            try:
                data = zygote.sock.recv(_MAX_CONTROL_MESSAGE)
            except BlockingIOError:
                continue
            except OSError:
                return
            if not data:
                return
            self._on_message(zygote, json.loads(data))

    def _on_message(self, zygote: _Zygote, message: dict[str, Any]) -> None:
        op = message.get("op")
        if op == "ready":
            self.layers = dict(message.get("layers") or {})
            log.info(
                "zygote_ready", pid=message.get("pid"), warm_ms=message.get("warm_ms"), layers=self.layers
            )
            zygote.ready.set()
            return
        pending = zygote.pending.get(int(message.get("id", -1)))
        if pending is None:
            return
        if op == "started":
            pending.pid = int(message["pid"])
        elif op == "refused":
            pending.refused = True
            pending.exited.set()
        elif op == "exit":
            pending.exit_message = message
            pending.exited.set()
            if pending.answered:
                zygote.pending.pop(int(message["id"]), None)
                self._log_late_exit(int(message["id"]), pending, message)

    def _log_late_exit(self, job_id: int, pending: _Pending, message: dict[str, Any]) -> None:
        """The exit report of a job already answered: its usage for the audit trail, and a
        warning if it died abnormally after writing a complete result."""
        untrusted_usage = dict(message.get("rusage") or {})
        status = int(message["status"])
        fields = {
            "job": job_id,
            "kind": pending.kind,
            "pid": pending.pid,
            "exit": exit_summary(status),
            "job_cpu_s": round(
                float(untrusted_usage.get("utime", 0)) + float(untrusted_usage.get("stime", 0)), 4
            ),
            "job_peak_rss_kb": int(untrusted_usage.get("maxrss_kb", 0)),
            "job_wall_ms": float(message.get("wall_ms", 0)),
        }
        if status != 0 or message.get("deadline_hit") or message.get("killed"):
            audit_log.warning(
                "job_exit_after_answer", deadline_hit=bool(message.get("deadline_hit")), **fields
            )
        else:
            audit_log.info("job_exit", **fields)

    def _retire(self, zygote: _Zygote) -> None:
        zygote.alive = False
        zygote.ready.set()  # wake waiters; they see it is dead
        self._kill_zygote(zygote)
        for pending in zygote.pending.values():
            pending.failure = "the worker zygote exited during the job"
            pending.exited.set()
        failed = sum(1 for pending in zygote.pending.values() if not pending.answered)
        if failed:
            log.warning("zygote_lost", pid=zygote.process.pid, jobs_failed=failed)
        zygote.sock.close()

    def _kill_zygote(self, zygote: _Zygote) -> None:
        if zygote.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                zygote.process.kill()

    async def _ready_zygote(self) -> _Zygote:
        with anyio.move_on_after(self.start_timeout_s):
            while True:
                zygote = self._zygote
                if zygote is not None and zygote.alive:
                    await zygote.ready.wait()
                    if zygote.alive:
                        return zygote
                if self.start_failures:
                    break  # crash-looping at start-up: fail fast, do not queue behind the backoff
                await self._zygote_changed.wait()
        raise ToolError("worker_unavailable", "the worker process is not available; retry shortly")

    # -- jobs ---------------------------------------------------------------------------

    async def run(
        self,
        kind: str,
        args: dict[str, Any],
        input_fd: int,
        *,
        limits: dict[str, int],
        deadline_s: float,
        sandbox: dict[str, Any] | None = None,
        on_progress: ProgressFn | None = None,
    ) -> JobOutcome:
        """Run one job to completion; raises ToolError for overload or a lost worker."""
        if self._admitted >= self.workers + self.queue_depth:
            raise ToolError(
                "overloaded",
                f"{self._admitted} calls are already running or queued; retry later",
                {"workers": self.workers, "queue_depth": self.queue_depth},
            )
        self._admitted += 1
        try:
            async with self._limiter:
                for _attempt in range(_SEND_ATTEMPTS - 1):
                    zygote = await self._ready_zygote()
                    try:
                        return await self._run_on(
                            zygote, kind, args, input_fd, limits, deadline_s, sandbox or {}, on_progress
                        )
                    except _NotDelivered:
                        # The zygote died before it saw the job; nothing ran, so a retry is safe.
                        zygote.alive = False
                        await anyio.sleep(0)
                zygote = await self._ready_zygote()
                try:
                    return await self._run_on(
                        zygote, kind, args, input_fd, limits, deadline_s, sandbox or {}, on_progress
                    )
                except _NotDelivered as exc:
                    raise ToolError(
                        "worker_unavailable", "the worker process is not reachable; retry"
                    ) from exc
        finally:
            self._admitted -= 1

    async def _run_on(  # noqa: PLR0917 - private; mirrors run() plus the zygote
        self,
        zygote: _Zygote,
        kind: str,
        args: dict[str, Any],
        input_fd: int,
        limits: dict[str, int],
        deadline_s: float,
        sandbox: dict[str, Any],
        on_progress: ProgressFn | None,
    ) -> JobOutcome:
        job_id = next(self._ids)
        pending = _Pending(kind)
        read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(read_fd, False)
        zygote.pending[job_id] = pending
        try:
            try:
                job = {
                    "op": "job",
                    "id": job_id,
                    "kind": kind,
                    "args": args,
                    "limits": limits,
                    "sandbox": sandbox,
                }
                zygote.send(job | {"deadline_s": deadline_s}, [input_fd, write_fd])
            except OSError as exc:
                raise _NotDelivered from exc
            finally:
                os.close(write_fd)
            max_bytes = int(limits["max_result_bytes"])
            sent = time.monotonic()
            envelope = None
            with anyio.move_on_after(deadline_s + 2 * self.kill_grace_s) as scope:
                output, overflow = await self._read_output(zygote, job_id, read_fd, max_bytes, on_progress)
                envelope = None if overflow or pending.exited.is_set() else complete_envelope(output)
                if envelope is None:
                    await pending.exited.wait()
                else:
                    pending.answered = True
            if scope.cancelled_caught:
                log.error("zygote_unresponsive", pid=zygote.process.pid, job=job_id)
                self._kill_zygote(zygote)
                raise ToolError("timeout", f"the job did not finish within {deadline_s:g} s")
        except _NotDelivered:
            raise
        except BaseException:
            if pending.exit_message is None and zygote.alive:
                self._send_kill(zygote, job_id)
            raise
        finally:
            os.close(read_fd)
            if not pending.answered or pending.exited.is_set():
                zygote.pending.pop(job_id, None)
        if envelope is not None:
            return JobOutcome(
                untrusted_output=output,
                output_overflow=False,
                status=None,
                deadline_hit=False,
                killed=False,
                wall_ms=round((time.monotonic() - sent) * 1000, 3),
                rusage={},
                untrusted_envelope=envelope,
                job=job_id,
            )
        outcome = _reaped_outcome(pending, output, overflow)
        outcome.job = job_id
        return outcome

    def kill_now(self) -> None:
        """Kill the zygote (its children die with it); for an immediate exit."""
        if self._zygote is not None:
            self._kill_zygote(self._zygote)

    def _send_kill(self, zygote: _Zygote, job_id: int) -> None:
        try:
            zygote.send({"op": "kill", "id": job_id})
        except OSError:
            self._kill_zygote(zygote)

    async def _read_output(
        self, zygote: _Zygote, job_id: int, fd: int, max_bytes: int, on_progress: ProgressFn | None
    ) -> tuple[bytes, bool]:
        """Everything the child wrote, up to ``max_bytes``; leading progress lines are consumed.

        After a chunk the pipe is read again at once: the child closes it right after its last
        write, so the EOF is usually already there and one event-loop round trip is saved (the
        loop without a wait is bounded by ``max_bytes``)."""
        buffer = bytearray()
        total = 0
        progress = ProgressLines(on_progress)
        ready = False
        while True:
            if not ready:
                await anyio.wait_readable(fd)
            try:
                chunk = os.read(fd, _READ_CHUNK)
            except BlockingIOError:
                ready = False
                continue
            ready = True
            if not chunk:
                return bytes(buffer), False
            total += len(chunk)
            if total > max_bytes:
                self._send_kill(zygote, job_id)
                return b"", True
            buffer += chunk
            await progress.consume(buffer)


def _reaped_outcome(pending: _Pending, output: bytes, overflow: bool) -> JobOutcome:
    """The outcome of a job whose exit report arrived (or whose zygote died) before its answer."""
    if pending.refused:
        raise ToolError("internal", f"the worker does not run jobs of kind {pending.kind!r}")
    if pending.failure is not None and pending.pid is None:
        raise _NotDelivered
    if pending.failure is not None or pending.exit_message is None:
        raise ToolError("worker_unavailable", "the worker process exited during the job; retry")
    message = pending.exit_message
    return JobOutcome(
        untrusted_output=output,
        output_overflow=overflow,
        status=int(message["status"]),
        deadline_hit=bool(message["deadline_hit"]),
        killed=bool(message["killed"]),
        wall_ms=float(message["wall_ms"]),
        rusage={key: float(value) for key, value in dict(message["rusage"]).items()},
    )
