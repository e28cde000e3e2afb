"""The pool: one zygote process, kept alive, that forks a sandboxed child per job.

Invariants:
- The zygote is spawned from the event-loop thread (its parent-death signal is tied to the
  spawning thread) and leads its own process group in the supervisor's session (not a session
  of its own: see ``pdf_airlock.worker.sandbox.process.detach``); if the supervisor dies, it dies.
- At most ``workers`` jobs run at once; at most ``queue_depth`` more wait; beyond that a call
  fails fast with ``overloaded``.
- A job's result pipe is read concurrently with its run, with a hard byte cap; passing the cap
  kills the job. Everything read is returned as untrusted bytes for ``pdf_airlock.server.pool.verdict`` to
  judge.
- A job is answered as soon as its pipe reaches EOF holding one complete JSON envelope (the
  child closes the pipe right after writing it), without waiting for the zygote to reap the
  child: ``status`` is then None. The exit report arrives later and is logged (``job_exit``,
  with CPU and peak RSS; a warning if the child then died abnormally). Anything else (no
  output, truncated or unparseable output, over the cap) waits for the exit status, which
  ``pdf_airlock.server.pool.verdict`` classifies exactly as before.
- The zygote keeps ``spares`` (default: ``workers + 1``) children pre-forked and sandboxed, and
  hands each one's socket to the supervisor (``pdf_airlock.server.pool.spares``): a job whose limits and
  sandbox request match an idle spare is sent straight to it, and the zygote is told afterwards
  (``assigned``); any other job goes through the zygote as before. Either way the zygote owns the child:
  deadline, kill, reap, exit report.
- With ``--documents-per-child`` > 1 (opt-in), a job that comes with a ``share`` (its client
  and root, ``pdf_airlock.server.app.calls``) goes first to a resident child of the same spec and
  share (``pdf_airlock.server.pool.spares.Residents``); a child that answered well and has not
  grown its address space by more than a quarter of the memory budget over the zygote's, nor
  served its ``documents``-th job (counted here), is kept as such a resident (the zygote is told
  ``released``: no job deadline while it waits, only its idle deadline); else its socket is
  closed and the zygote is told ``retire`` (it kills the child if it has not exited within the
  kill grace). A resident closed later (expired, evicted, of an old spec) is named to the zygote
  (``drop``), which kills it: a child that ignores its hang-up outlives nothing the supervisor
  counts.
- If the zygote dies, every job it had acknowledged (``started``) fails with
  ``worker_unavailable``, a job it had not is sent again once, and a new zygote is started with
  exponential backoff.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc
import anyio.lowlevel
import structlog

from pdf_airlock.server.boundary.sanitize import clean_text
from pdf_airlock.server.config import DEFAULTS
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.child_output import (
    JobOutcome,
    LineFn,
    ProgressFn,
    ProgressLines,
    complete_envelope,
)
from pdf_airlock.server.pool.readiness import reading
from pdf_airlock.server.pool.spares import spec_key
from pdf_airlock.server.pool.zygote_link import NotDelivered, Pending, ZygoteLink, reaped_outcome
from pdf_airlock.worker.contract import (
    STRICT_LOADS_ENV,
    TEST_HOOKS_ENV,
    ZYGOTE_MODULE,
    Assigned,
    Drop,
    Job,
    Kill,
    Limits,
    Order,
    ProtocolError,
    Ready,
    Released,
    Report,
    Retire,
    decode_report,
)

__all__ = ["JobOutcome", "Pool", "ProgressFn"]

log = structlog.get_logger(__name__)

_READ_CHUNK: Final = 1 << 16
_BACKOFF_FIRST_S: Final = 0.1
_BACKOFF_MAX_S: Final = 5.0
_HEALTHY_UPTIME_S: Final = 10.0
_MAX_STDERR_LINE: Final = 2000
# The zygote's whole environment: locale and time zone, and the test-only switch (docs/security.md).
# Nothing else of the caller's environment reaches it; PYTHON* variables are ignored anyway (-I).
ZYGOTE_ENV_KEYS: Final = ("LANG", "LC_ALL", "TZ", TEST_HOOKS_ENV, STRICT_LOADS_ENV)
# Isolated mode: neither the working directory nor the script's folder on sys.path, no PYTHON*
# variables, no user site-packages. Only the installed package and its dependencies can load.
ZYGOTE_INTERPRETER_FLAGS: Final = ("-I",)
ZYGOTE_COLD_ARG: Final = "cold"  # spares without warm-up (``pdf_airlock.worker.zygote``)
# A fixed working directory: nothing relative resolves inside the folder the server started in.
ZYGOTE_CWD: Final = "/"


_SEND_ATTEMPTS: Final = 2
# A resident child is kept only while its address space exceeds the zygote's by less than this
# share of the memory budget: every later document still gets at least the rest of its budget.
_RESIDENT_GROWTH_SHARE: Final = 4


@dataclass(slots=True)
class _Hand:
    """How a job reaches its child: the spec, the resident key (spec and share; None: a child
    of its own), the memory budget and the documents a child may serve, and the child's socket
    while it may serve another job, with the documents it served before this one."""

    spec: str
    key: str | None
    memory_bytes: int
    documents: int
    sock: socket.socket | None = None
    served: int = 0


@dataclass(slots=True)
class _Output:
    """A job's result pipe as read so far (``Pool._read_output``)."""

    buffer: bytearray = field(default_factory=bytearray)
    total: int = 0
    end: bool = False  # EOF, over the cap, or a failure
    failure: BaseException | None = None
    woke: anyio.Event = field(default_factory=anyio.Event)


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
        warm_spares: bool = True,
        resident_idle_s: float = DEFAULTS.child_idle_s,
    ) -> None:
        """``command_prefix`` wraps the zygote's command (the syscall tracer uses strace);
        ``spares`` is how many pre-forked children the zygote keeps (default: one per worker plus one, so a
        two-ended read (``pdf_airlock.server.tools.read_two_ended``) can take two at once and still leave one
        idle: the zygote then refills after the jobs, not beside them); ``warm_spares`` False makes them
        cold (no warm-up parse, no kept heap: ``batch``, where CPU per document counts, not one call's
        latency; see ``pdf_airlock.worker.zygote``); ``resident_idle_s``: how long a child kept for
        the next job of its key (``--documents-per-child``) waits for it before it is closed."""
        self.command_prefix = command_prefix
        self.spares = workers + 1 if spares is None else spares
        self.warm_spares = warm_spares
        self.resident_idle_s = resident_idle_s
        self.workers = workers
        self.queue_depth = queue_depth
        self.start_timeout_s = start_timeout_s
        self.kill_grace_s = kill_grace_s
        self._limiter = anyio.CapacityLimiter(workers)
        self._admitted = 0
        self._ids = itertools.count(1)
        self._zygote: ZygoteLink | None = None
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

    def start_soon(self, fn: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """Run ``fn`` in the pool's own task group: it may outlive the call that started it, and
        is cancelled when the pool stops. It must not raise (an exception would stop the pool)."""
        assert self._task_group is not None, "the pool is not running"
        self._task_group.start_soon(fn)

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

    async def _spawn(self) -> ZygoteLink:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {key: os.environ[key] for key in ZYGOTE_ENV_KEYS if key in os.environ}
        if env.get(TEST_HOOKS_ENV) == "1":
            log.warning("test_hooks_enabled", detail="escape and fault job kinds are available")
        try:
            process = await anyio.open_process(
                [
                    *self.command_prefix,
                    sys.executable,
                    *ZYGOTE_INTERPRETER_FLAGS,
                    "-m",
                    ZYGOTE_MODULE,
                    str(theirs.fileno()),
                    str(self.spares),
                    *(() if self.warm_spares else (ZYGOTE_COLD_ARG,)),
                ],
                # Only the control socket and a stderr pipe: never the protocol's stdin/stdout.
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=(theirs.fileno(),),
                cwd=ZYGOTE_CWD,
                env=env,
            )
        finally:
            theirs.close()
        ours.setblocking(False)
        zygote = ZygoteLink(process=process, sock=ours, started=time.monotonic())
        zygote.residents.capacity = self.workers
        zygote.residents.idle_s = self.resident_idle_s
        zygote.residents.dropped = lambda pid: self._tell(zygote, Drop(pid))
        self._zygote = zygote
        self._zygote_changed.set()
        self._zygote_changed = anyio.Event()
        log.info("zygote_spawned", pid=process.pid)
        return zygote

    async def _serve(self, zygote: ZygoteLink) -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._relay_stderr, zygote)
            tg.start_soon(zygote.residents.expire_idle)
            await self._read_control(zygote)
            tg.cancel_scope.cancel()

    async def _relay_stderr(self, zygote: ZygoteLink) -> None:
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

    async def _read_control(self, zygote: ZygoteLink) -> None:
        """Until the control socket closes or fails. Messages are handled in the event loop's
        callback as they come (``pdf_airlock.server.pool.readiness``), without waking this task."""
        closed = anyio.Event()
        failure: list[BaseException] = []

        def on_readable() -> bool:
            while True:
                try:
                    data, fds = zygote.receive()
                except BlockingIOError:
                    return False
                except OSError:
                    closed.set()
                    return True
                if not data:
                    for fd in fds:
                        os.close(fd)
                    closed.set()
                    return True
                try:
                    message = decode_report(data)
                except ProtocolError as exc:  # half-trusted: a zygote that says nonsense is replaced
                    for fd in fds:
                        os.close(fd)
                    log.error("zygote_protocol_error", pid=zygote.process.pid, error=str(exc))
                    self._kill_zygote(zygote)
                    closed.set()
                    return True
                self._on_control(zygote, message, fds)

        def on_error(exc: BaseException) -> None:
            failure.append(exc)
            closed.set()

        with reading(zygote.sock.fileno(), on_readable, on_error):
            await closed.wait()
        if failure:
            raise failure[0]

    def _on_control(self, zygote: ZygoteLink, message: Report, fds: list[int]) -> None:
        zygote.on_message(message, fds)
        if isinstance(message, Ready):
            self.layers = zygote.layers
            log.info("zygote_ready", pid=message.pid, warm_ms=message.warm_ms, layers=self.layers)

    def _retire(self, zygote: ZygoteLink) -> None:
        self._kill_zygote(zygote)
        failed = zygote.retire("the worker zygote exited during the job")
        if failed:
            log.warning("zygote_lost", pid=zygote.process.pid, jobs_failed=failed)

    def _kill_zygote(self, zygote: ZygoteLink) -> None:
        if zygote.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                zygote.process.kill()

    async def _ready_zygote(self) -> ZygoteLink:
        zygote = self._zygote
        if zygote is not None and zygote.alive and zygote.ready.is_set():
            return zygote  # without the timer and the round of the event loop of the wait below
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

    def ready(self) -> bool:
        """A zygote is up and warm: a job sent now would not wait for a (re)start."""
        zygote = self._zygote
        return zygote is not None and zygote.alive and zygote.ready.is_set()

    def free_workers(self) -> int:
        """Worker slots a job admitted now would get at once, without queueing."""
        return max(0, self.workers - self._admitted)

    def idle_spares(self) -> list[int]:
        """Pids of the idle spares the supervisor holds for the current zygote."""
        zygote = self._zygote
        return zygote.spares.pids() if zygote is not None and zygote.alive else []

    def room_for_optional(self, jobs: int = 1, *, last_spare: bool = False) -> bool:
        """Whether ``jobs`` optional jobs (jobs that only speed a call up, such as a two-ended
        read's second child) may start now: a worker slot free for each, so none queues or causes
        ``overloaded``, and an idle spare for each that leaves the pool's idle reserve (the spares
        beyond ``workers``) idle, so the zygote does not fork refills beside them; ``last_spare``
        may take the reserve too. Nothing awaits between this answer and the admission of a job
        started on it."""
        reserve = 0 if last_spare else max(0, self.spares - self.workers)
        return self.free_workers() >= jobs and len(self.idle_spares()) >= jobs + reserve

    async def slots_free(self, jobs: int) -> bool:
        """Whether ``jobs`` worker slots are free now. Jobs cancelled just before (a call made as
        soon as the previous one has its answer) give their slots back on their next turn: one
        round of the event loop lets them, then this judges."""
        if self.free_workers() >= jobs:
            return True
        await anyio.lowlevel.checkpoint()
        return self.free_workers() >= jobs

    async def run(
        self,
        kind: str,
        args: dict[str, Any],
        input_fd: int,
        *,
        limits: Limits,
        deadline_s: float,
        max_wall_s: float | None = None,
        sandbox: dict[str, Any] | None = None,
        share: str | None = None,
        on_progress: ProgressFn | None = None,
        on_line: LineFn | None = None,
        on_start: Callable[[int], None] | None = None,
    ) -> JobOutcome:
        """Run one job to completion; raises ToolError for overload or a lost worker.
        ``on_progress`` gets the child's progress lines, ``on_line`` its stream lines (see
        ``pdf_airlock.server.pool.child_output.ProgressLines``), both before the envelope. ``on_start`` gets
        the job's id once a child has the job: a job the caller abandons (cancelled, or not needed any more)
        is killed, and its exit report is still logged under that id (``job_exit``). ``deadline_s`` is the
        job's wall budget; the zygote extends it while the job is starved of
        CPU by a busy machine, up to ``max_wall_s`` (default: no extension). ``share`` (with
        ``limits.documents`` > 1): the job may run on a child that served jobs of the same
        share before, and its child may serve the next one."""
        if self._admitted >= self.workers + self.queue_depth:
            raise ToolError(
                "overloaded",
                f"{self._admitted} calls are already running or queued; retry later",
                {"workers": self.workers, "queue_depth": self.queue_depth},
            )
        self._admitted += 1
        try:
            await self._take_slot()
            try:
                undelivered: NotDelivered | None = None
                for _attempt in range(_SEND_ATTEMPTS):
                    zygote = await self._ready_zygote()
                    try:
                        return await self._run_on(
                            zygote,
                            kind,
                            args,
                            input_fd,
                            limits=limits,
                            deadline_s=deadline_s,
                            max_wall_s=max(deadline_s, max_wall_s or deadline_s),
                            sandbox=sandbox or {},
                            share=share if limits.documents > 1 else None,
                            on_progress=on_progress,
                            on_line=on_line,
                            on_start=on_start,
                        )
                    except NotDelivered as exc:
                        # Nothing ran under a zygote, so a retry is safe.
                        undelivered = exc
                        await anyio.sleep(0)
                raise ToolError(
                    "worker_unavailable", "the worker process is not reachable; retry"
                ) from undelivered
            finally:
                self._limiter.release()
        finally:
            self._admitted -= 1

    async def _take_slot(self) -> None:
        """A worker slot: at once when one is free and nobody waits (``async with`` on the
        limiter always yields a round of the event loop first), else in turn."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        try:
            self._limiter.acquire_nowait()
        except anyio.WouldBlock:
            await self._limiter.acquire()

    async def _run_on(
        self,
        zygote: ZygoteLink,
        kind: str,
        args: dict[str, Any],
        input_fd: int,
        *,
        limits: Limits,
        deadline_s: float,
        max_wall_s: float,
        sandbox: dict[str, Any],
        share: str | None,
        on_progress: ProgressFn | None,
        on_line: LineFn | None,
        on_start: Callable[[int], None] | None,
    ) -> JobOutcome:
        job_id = next(self._ids)
        spec = spec_key(limits, sandbox)
        key = None if share is None else f"{spec}\n{share}"
        hand = _Hand(spec, key, limits.memory_bytes, limits.documents)
        envelope: dict[str, Any] | None = None
        pending = Pending(kind)
        read_fd, write_fd = os.pipe2(os.O_CLOEXEC)
        os.set_blocking(read_fd, False)
        zygote.pending[job_id] = pending
        try:
            try:
                job = Job(job_id, kind, args, limits, sandbox, deadline_s, max_wall_s)
                self._deliver(zygote, job, hand, [input_fd, write_fd])
            except OSError as exc:
                zygote.alive = False  # a zygote we cannot talk to is restarted
                self._kill_zygote(zygote)
                raise NotDelivered from exc
            finally:
                os.close(write_fd)
            if on_start is not None:
                on_start(job_id)
            max_bytes = limits.max_result_bytes
            sent = time.monotonic()
            with anyio.move_on_after(max_wall_s + 2 * self.kill_grace_s) as scope:
                output, overflow = await self._read_output(
                    zygote, job_id, read_fd, max_bytes, ProgressLines(on_progress, on_line)
                )
                envelope = None if overflow or pending.exited.is_set() else complete_envelope(output)
                if envelope is None:
                    await pending.exited.wait()
                else:
                    pending.answered = True
            if scope.cancelled_caught:
                log.error("zygote_unresponsive", pid=zygote.process.pid, job=job_id)
                self._kill_zygote(zygote)
                raise ToolError("timeout", f"the job did not finish within {deadline_s:g} s")
        except NotDelivered:
            raise
        except BaseException:
            if pending.exit_message is None and zygote.alive:
                self._send_kill(zygote, job_id)
                pending.abandoned = True  # its exit report is logged when it comes
            raise
        finally:
            os.close(read_fd)
            self._settle(zygote, job_id, pending, hand, envelope)
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
            )
        return reaped_outcome(pending, output, overflow)

    def _deliver(
        self,
        zygote: ZygoteLink,
        job: Job,
        hand: _Hand,
        fds: list[int],
    ) -> None:
        """Straight to a resident child of ``hand.key`` or an idle spare made for ``hand.spec``
        (then tell the zygote), else through the zygote. Synchronous: no other job's hand-over
        or spec change can come in between. ``hand.sock``: the child's socket when it may serve
        another job."""
        taken: tuple[int, socket.socket | None] | None = None
        if job.kind in zygote.kinds:
            payload = dataclasses.replace(job, generation=zygote.spares.generation).to_wire()
            resident = zygote.residents.hand_over(hand.key, payload, fds) if hand.key is not None else None
            if resident is not None:
                pid, sock, hand.served = resident
                taken = pid, sock
            else:
                taken = zygote.spares.hand_over(hand.spec, payload, fds, keep=hand.key is not None)
        if taken is None:
            generation = zygote.spares.generation
            if zygote.spares.use_spec(hand.spec) != generation:
                zygote.residents.close()  # children of the old spec: never used again
            zygote.send(dataclasses.replace(job, generation=zygote.spares.generation), fds)
            return
        pid, hand.sock = taken
        zygote.pending[job.id].pid = pid
        zygote.send(Assigned(job.id, pid, job.deadline_s, job.max_wall_s))

    def _settle(
        self, zygote: ZygoteLink, job_id: int, pending: Pending, hand: _Hand, envelope: dict[str, Any] | None
    ) -> None:
        """After the job: keep its child as a resident, or close its socket (it exits); forget
        the job unless its exit report is still to come (to be logged)."""
        if hand.sock is not None and self._keep_resident(zygote, job_id, pending, hand, envelope):
            zygote.pending.pop(job_id, None)  # it lives on: no exit report comes for this job
        elif pending.exited.is_set() or not (pending.answered or pending.abandoned):
            zygote.pending.pop(job_id, None)

    def _keep_resident(
        self, zygote: ZygoteLink, job_id: int, pending: Pending, hand: _Hand, envelope: dict[str, Any] | None
    ) -> bool:
        """Keep the child of a job answered well as a resident of ``hand.key`` (and tell the
        zygote), or close its socket and have the zygote retire it. True if kept."""
        sock, pid = hand.sock, pending.pid
        assert sock is not None
        hand.sock = None
        served = hand.served + 1
        answered_ok = envelope is not None and envelope.get("ok") is True and not pending.exited.is_set()
        if (
            not answered_ok
            or hand.key is None
            or pid is None
            or served >= hand.documents
            or not zygote.alive
            or _grown(pid, zygote.process.pid, hand.memory_bytes // _RESIDENT_GROWTH_SHARE)
            or not zygote.residents.keep(pid, hand.key, sock, served)
        ):
            sock.close()
            if not pending.exited.is_set():  # one that obeys exits now; one that does not is killed
                self._tell(zygote, Retire(job_id, self.kill_grace_s))
            return False
        # The zygote's own idle deadline comes a kill grace after this one's (``expire_idle``).
        self._tell(zygote, Released(job_id, self.resident_idle_s + self.kill_grace_s))
        return True

    def _tell(self, zygote: ZygoteLink, message: Order) -> None:
        """A control message about a child; a zygote that cannot take it is killed (its children
        die with it)."""
        if not zygote.alive:
            return
        try:
            zygote.send(message)
        except OSError:
            self._kill_zygote(zygote)

    def kill_now(self) -> None:
        """Kill the zygote (its children die with it); for an immediate exit."""
        if self._zygote is not None:
            self._kill_zygote(self._zygote)

    def _send_kill(self, zygote: ZygoteLink, job_id: int) -> None:
        try:
            zygote.send(Kill(job_id))
        except OSError:
            self._kill_zygote(zygote)

    async def _read_output(
        self, zygote: ZygoteLink, job_id: int, fd: int, max_bytes: int, progress: ProgressLines
    ) -> tuple[bytes, bool]:
        """Everything the child wrote, up to ``max_bytes``; leading progress and stream lines
        are consumed. The pipe is read in the event loop's callback (``pdf_airlock.server.pool.readiness``),
        to EAGAIN each time: the child closes it right after its last write, so the EOF usually comes with the
        envelope. Stream lines go to their handler from there; this task wakes
        only for progress to pass on and at the end."""
        output = _Output()

        def on_readable() -> bool:
            while True:
                try:
                    chunk = os.read(fd, _READ_CHUNK)
                except BlockingIOError:
                    break
                output.total += len(chunk)
                if not chunk or output.total > max_bytes:
                    output.end = True
                    break
                output.buffer += chunk
                progress.take(output.buffer)
            if output.end or progress.pending:
                output.woke.set()
            return output.end

        def on_error(exc: BaseException) -> None:
            output.failure = exc
            output.end = True
            output.woke.set()

        with reading(fd, on_readable, on_error):
            while not output.end:
                await output.woke.wait()
                output.woke = anyio.Event()
                await progress.flush()
        if output.failure is not None:
            raise output.failure
        await progress.flush()
        if output.total > max_bytes:
            self._send_kill(zygote, job_id)
            return b"", True
        return bytes(output.buffer), False


def _address_space(pid: int) -> int | None:
    """A process's address space in bytes (``/proc/PID/statm``), or None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def _grown(child_pid: int, zygote_pid: int, allowance: int) -> bool:
    """The child's address space exceeds the zygote's by more than ``allowance`` (or either
    cannot be read): it must not take another job."""
    child, zygote = _address_space(child_pid), _address_space(zygote_pid)
    return child is None or zygote is None or child - zygote > allowance
