"""The zygote: a warmed interpreter that forks one sandboxed child per job.

Started by the supervisor as ``python -I -m pdf_airlock.worker.zygote FD SPARES [cold]``
(isolated mode, working directory ``/``, an allowlisted environment: only installed code loads)
where FD is its end of a SOCK_SEQPACKET control socket. It never parses a document itself.
The messages are ``pdf_airlock.worker.contract``'s (one JSON object per datagram, fds by
SCM_RIGHTS): the supervisor sends ``Job`` (with the input and the result pipe), ``Assigned``,
``Kill``, ``Released``, ``Drop`` and ``Retire``; the zygote answers ``Ready`` once, then
``Spare`` (with the spare's socket), ``Started`` or ``Refused``, ``Lost`` and ``Exit``. A message
that does not have its shape is dropped (a ``Job`` with a readable id is refused).

Spares: the zygote keeps up to SPARES children forked ahead of time, each already sandboxed for
the limits and sandbox request of the last ``job`` seen (and warmed by a tiny parse), blocked on
its own socketpair. It passes its end of that socket to the supervisor at once and keeps no copy,
so the supervisor sends a matching job straight to the spare, then reports ``assigned``; the
zygote takes the child over from there. A spare the supervisor closes reads EOF and exits. A
``job`` (the supervisor had no matching spare) goes to a child forked on the spot without the
warm-up parse; if its limits, sandbox request or generation (the supervisor's number for its
current spec) differ from the spares', every idle spare is killed first. A spare serves exactly
one job; a replacement is forked off the critical path: right after a hand-over when no other
spare is idle, else once the running jobs have exited.

Residents (``--documents-per-child`` > 1, opt-in): a child whose limits allow several jobs keeps
its socket after a job (``pdf_airlock.worker.child``), and the supervisor may keep it for the
next job of the same client and root. It then sends ``released``: the child's job deadline stops
and it waits as a resident, for at most ``idle_s`` (the zygote's own idle deadline: past it the
resident is killed, whatever the supervisor does); a later ``assigned`` naming it starts the next
job's deadline as for a spare. A resident the supervisor closes (expired, evicted, of an old
spec) is killed at once on ``drop``, and a child that answered but gets no other job (its Nth,
one that grew, no room) is killed ``grace_s`` after ``retire`` unless it has exited by then: a
child that ignores its hang-up (one a document took control of) never outlives what the
supervisor counts. A resident reaped between jobs is remembered like a reaped spare.

``cold`` (``batch``: CPU per document, not the latency of one call) forks spares without the
warm-up parse and without the heap kept for the job (``pdf_airlock.worker.child``): both move
first-touch costs off a call's critical path, and both cost CPU that a job which finds its
spare waiting does not get back (bench/perf/cpu_per_doc.py, "CPU per document" in
docs/performance.md). The sandbox is the same.

The zygote enforces each job's wall deadline from hand-over (``job``) or ``assigned`` (SIGKILL to
the child's process group; the child is unreaped until then, so its pid cannot be recycled under
us). A spare reaped before its ``assigned`` arrived (it ran its job that fast, or died idle) is
remembered, so the late ``assigned`` still gets the child's real exit report. EOF on the control
socket means the supervisor is gone: every child and spare is killed and the zygote exits.
"""

from __future__ import annotations

import array
import contextlib
import os
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from pdf_airlock.worker.child import run_spare
from pdf_airlock.worker.contract import (
    PROBE_KIND,
    TEST_HOOKS_ENV,
    TEST_KINDS,
    Assigned,
    Drop,
    Exit,
    Job,
    Kill,
    Limits,
    Lost,
    Order,
    ProtocolError,
    Ready,
    Refused,
    Released,
    Report,
    Retire,
    Spare,
    Started,
    decode_order,
)
from pdf_airlock.worker.parsers import TOOL_KINDS
from pdf_airlock.worker.sandbox.layers import SPARE_SOCKET_FD, SandboxPolicy
from pdf_airlock.worker.sandbox.process import fork_bare

__all__ = ["main"]

MAX_MESSAGE_BYTES: Final = 1 << 16
_MAX_FDS: Final = 2
_FD_ITEM_SIZE: Final = array.array("i").itemsize
_SPARES_ARG: Final = 2
_COLD_ARG: Final = 3
_COLD: Final = "cold"
_WARM_TEXT: Final = "pdf-airlock spare warm-up line"
_WARM_LINES: Final = 40
_MAX_UNASSIGNED: Final = 64  # reaped spares kept for a late ``assigned`` (normally 0 or 1)
# A child that got less than this share of one CPU over its wall time was starved by a busy
# machine, not slow: its deadline is extended (``_Child.due``), by at least _MIN_EXTENSION_S.
_STARVED_SHARE: Final = 0.5
_MIN_EXTENSION_S: Final = 0.25
_UTIME_FIELD: Final = 11  # /proc/PID/stat after the command name: utime, then stime (man 5 proc)
_CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
_PAGE_KB: Final = os.sysconf("SC_PAGE_SIZE") // 1024
_STATM_BYTES: Final = 256  # seven decimal page counts


def _anonymous_rss_kb() -> int:
    """The zygote's anonymous resident memory, kB (``/proc/self/statm``: resident less file and
    shared pages). A forked child starts with exactly these pages resident (fork copies the
    page tables of anonymous memory, not of files), so a child's peak RSS less this is what its
    own work made resident: what the verdict compares with the job's memory budget."""
    fd = os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC)
    try:
        resident, shared = (int(field) for field in os.read(fd, _STATM_BYTES).split()[1:3])
    finally:
        os.close(fd)
    return (resident - shared) * _PAGE_KB


@dataclass(slots=True)
class _Spare:
    pid: int
    sock: socket.socket


@dataclass(slots=True)
class _Child:
    """A job's child. Its wall deadline is ``started + budget``, pushed back while a busy machine
    starves it (it got under ``_STARVED_SHARE`` of a CPU so far), never past ``hard``. The CPU
    budget itself is the child's RLIMIT_CPU, whatever the wall clock says."""

    job_id: int
    pid: int
    started: float
    deadline: float
    budget: float = 0.0
    hard: float = 0.0
    deadline_hit: bool = False
    killed: bool = False
    stretched: bool = False

    def due(self, now: float, cpu_seconds: Callable[[int], float | None] | None = None) -> bool:
        """At its deadline: extend it if the child was starved and may wait longer, else True.
        ``now`` is the monotonic clock, ``cpu_seconds(pid)`` the CPU the child has used
        (``_cpu_seconds``, from /proc, unless given)."""
        if now < self.deadline:
            return False
        if now >= self.hard:
            return True
        used = (cpu_seconds or _cpu_seconds)(self.pid)
        if used is None or used >= _STARVED_SHARE * (now - self.started):
            return True
        self.stretched = True
        self.deadline = min(self.hard, now + max(_MIN_EXTENSION_S, self.budget - used))
        return False


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a (not yet reaped) child, from /proc; None if it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[_UTIME_FIELD]) + int(fields[_UTIME_FIELD + 1])) / _CLOCK_TICKS


_SpareKey = tuple[int, Limits, frozenset[str], frozenset[str], bool]
# Every tool's job kind and the sandbox self-test; the test-only kinds join only with the test hooks.
_KINDS: Final = frozenset(TOOL_KINDS) | {PROBE_KIND}


def warm_pdf() -> bytes:
    """A trusted one-page text document that each spare parses once inside its sandbox."""
    import io

    import pikepdf

    pdf = pikepdf.new()
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
    )
    lines = " ".join(f"({_WARM_TEXT} {n}) Tj T*" for n in range(_WARM_LINES))
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=pdf.make_indirect(font))),
        Contents=pdf.make_stream(f"BT /F1 11 Tf 14 TL 72 720 Td {lines} ET".encode()),
    )
    pdf.pages.append(pikepdf.Page(page))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def probe_layers() -> dict[str, Any]:
    """What this kernel and container allow; computed once, inherited by every child."""
    from pdf_airlock.worker.sandbox import landlock, namespaces, seccomp

    reason = seccomp.unavailable_reason()
    compiled = seccomp.compile_filter(SPARE_SOCKET_FD) if reason is None else None
    renewing = seccomp.compile_filter(SPARE_SOCKET_FD, renew_cpu=True) if reason is None else None
    return {
        "namespaces_unavailable": namespaces.probe(net=False),
        "landlock_abi": landlock.abi_version(),
        "seccomp": compiled,
        "seccomp_renewing_cpu": renewing,
        "seccomp_unavailable": reason,
    }


class Zygote:
    """Single-threaded select loop: control messages, SIGCHLD, deadlines."""

    def __init__(
        self,
        control: socket.socket,
        probed: dict[str, Any],
        kinds: frozenset[str],
        spares: int = 0,
        warm_pdf: bytes | None = None,
        *,
        test_hooks: bool = False,
    ) -> None:
        self.control = control
        self.test_hooks = test_hooks
        self.probed = probed
        self.kinds = kinds
        self.spare_count = spares
        self.warm_pdf = warm_pdf
        self.spares: set[int] = set()  # idle spares handed to the supervisor, by pid
        self.residents: dict[int, float] = {}  # between two jobs of one input: pid -> idle deadline
        self.spare_key: _SpareKey | None = None
        self.spare_spec: tuple[Limits, dict[str, Any]] | None = None
        self.generation = 0
        self.discarded: set[int] = set()  # killed spares not reaped yet
        self.spare_died = False  # an idle spare died on its own: no refill until the next job
        self.unassigned: dict[int, tuple[int, dict[str, float]]] = {}  # reaped idle: status, usage
        self.children: dict[int, _Child] = {}
        self.by_job: dict[int, int] = {}
        self.selector = selectors.DefaultSelector()
        self.wake_read, self.wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    def send(self, message: Report, fds: list[int] | None = None) -> None:
        payload = message.to_wire()
        ancillary = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
        self.control.sendmsg([payload], ancillary)

    def serve(self) -> None:
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_write, warn_on_full_buffer=False)
        self.selector.register(self.control, selectors.EVENT_READ, self.handle_control)
        self.selector.register(self.wake_read, selectors.EVENT_READ, self.handle_wakeup)
        while True:
            for key, _ in self.selector.select(self.next_timeout()):
                key.data()
            self.reap()
            self.enforce_deadlines()
            self.refill_spares()

    def next_timeout(self) -> float | None:
        deadlines = [child.deadline for child in self.children.values()] + list(self.residents.values())
        if not deadlines:
            return None
        return max(0.0, min(deadlines) - time.monotonic())

    def handle_wakeup(self) -> None:
        try:
            while os.read(self.wake_read, 512):
                pass
        except BlockingIOError:
            pass

    def handle_control(self) -> None:
        fds = array.array("i")
        try:
            data, ancdata, _flags, _addr = self.control.recvmsg(
                MAX_MESSAGE_BYTES, socket.CMSG_SPACE(_MAX_FDS * _FD_ITEM_SIZE)
            )
        except (BlockingIOError, InterruptedError):
            return
        for level, kind, payload in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(payload[: len(payload) - len(payload) % _FD_ITEM_SIZE])
        if not data:
            self.shutdown()
        message: Order | Refused | None
        try:
            message = decode_order(data)
        except ProtocolError as exc:
            message = None if exc.job_id is None else Refused(exc.job_id)
        if isinstance(message, Job) and len(fds) == _MAX_FDS and self.accepts(message):
            self.start_job(message, data, fds[0], fds[1])
            return
        for fd in fds:
            os.close(fd)
        if isinstance(message, (Job, Refused)):  # a job it does not run, or a malformed one
            self.send(Refused(message.id))
        elif message is not None:
            self.handle_order(message)

    def handle_order(self, message: Order) -> None:
        """A control message about a child the zygote already has."""
        if isinstance(message, Assigned):
            budget = message.deadline_s
            self.assign(message.id, message.pid, (budget, max(budget, message.max_wall_s)))
        elif isinstance(message, Kill):
            self.kill_job(message.id)
        elif isinstance(message, Released):
            self.release(message.id, message.idle_s)
        elif isinstance(message, Drop):
            self.drop(message.pid)
        elif isinstance(message, Retire):
            self.retire(message.id, message.grace_s)

    def accepts(self, job: Job) -> bool:
        """A known kind, and sandbox layers skipped only with the test hooks on (``main``): the
        supervisor never asks for a skip, the escape table's columns do."""
        return job.kind in self.kinds and (self.test_hooks or not job.sandbox.get("skip"))

    def start_job(self, job: Job, raw: bytes, input_fd: int, result_fd: int) -> None:
        """Run a job the supervisor had no spare for on a child forked now (its spares are all
        with the supervisor). ``started`` goes out before the child can see the job, so the
        supervisor always knows the job ran somewhere if this zygote dies right after."""
        self.use_spec(job)
        self.spare_died = False
        job_id = job.id
        fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [input_fd, result_fd]))]
        try:
            spare = self.fork_spare(warm=False)
            self.send(Started(job_id, spare.pid))
            try:
                spare.sock.sendmsg([raw], fds)
            except OSError:  # it died setting up its sandbox: its exit status is the job's report
                self.kill_child(spare.pid)
        finally:
            os.close(input_fd)
            os.close(result_fd)
        spare.sock.close()  # the message stays queued for the spare; it reads it, then sees EOF
        self.track(job_id, spare.pid, (job.deadline_s, job.max_wall_s))

    def assign(self, job_id: int, pid: int, deadlines: tuple[float, float]) -> None:
        """The supervisor sent an idle spare its job directly: take the child over."""
        self.spare_died = False
        if pid in self.spares or pid in self.residents:
            self.spares.discard(pid)
            self.residents.pop(pid, None)
            self.send(Started(job_id, pid))
            self.track(job_id, pid, deadlines)
        elif pid in self.unassigned:  # reaped already: it ran its job (or died) before this came
            status, usage = self.unassigned.pop(pid)
            self.send(Started(job_id, pid))
            self.report_exit(_Child(job_id, pid, time.monotonic(), 0.0), status, usage)
        else:
            self.send(Lost(job_id))

    def release(self, job_id: int, idle_s: float, now: float | None = None) -> None:
        """The supervisor took the job's answer and keeps its child for another job of the same
        input (``pdf_airlock.worker.child``): no job deadline runs while it waits, only its idle
        deadline ``idle_s`` from now; the next ``assigned`` naming it starts a job's. A child
        already reaped, or killed, is not resident."""
        pid = self.by_job.pop(job_id, None)
        child = self.children.get(pid) if pid is not None else None
        if child is None or child.deadline_hit or child.killed:
            return
        del self.children[child.pid]
        self.residents[child.pid] = (time.monotonic() if now is None else now) + idle_s

    def drop(self, pid: int) -> None:
        """The supervisor closed a resident's socket: kill it (one that obeys has read EOF and is
        exiting anyway). Only a resident: never a spare or a child with a job."""
        if self.residents.pop(pid, None) is not None:
            self.discarded.add(pid)
            self.kill_child(pid)

    def retire(self, job_id: int, grace_s: float, now: float | None = None) -> None:
        """The job's child answered and will get no other job: its deadline (and the limit of
        any extension) becomes ``grace_s`` from now. One that obeys has hung up and exits first."""
        pid = self.by_job.get(job_id)
        child = self.children.get(pid) if pid is not None else None
        if child is not None:
            until = (time.monotonic() if now is None else now) + grace_s
            child.deadline, child.hard = min(child.deadline, until), min(child.hard, until)

    def track(self, job_id: int, pid: int, deadlines: tuple[float, float]) -> None:
        started = time.monotonic()
        budget, max_wall = deadlines
        self.children[pid] = _Child(job_id, pid, started, started + budget, budget, started + max_wall)
        self.by_job[job_id] = pid

    def use_spec(self, job: Job) -> None:
        """Spares are made for the last-seen limits, sandbox request and generation; a change
        kills the idle ones (the supervisor has already closed its ends)."""
        policy = SandboxPolicy.from_job(dict(job.sandbox))
        key = (job.generation, job.limits, policy.require, policy.skip, policy.net_namespace)
        if key != self.spare_key:
            for pid in list(self.spares):
                self.discard(pid)
            self.unassigned.clear()  # no ``assigned`` can name a spare of an older spec now
            self.spare_key, self.generation = key, job.generation
            self.spare_spec = (job.limits, job.sandbox)

    def fork_spare(self, *, warm: bool) -> _Spare:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        parent_pid = os.getpid()
        pid = fork_bare()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                assert self.spare_spec is not None  # forked only once a job has set it
                limits, sandbox = self.spare_spec
                warm_pdf = self.warm_pdf if warm else None
                run_spare(parent_pid, theirs.fileno(), limits, sandbox, probed=self.probed, warm_pdf=warm_pdf)
            finally:
                os._exit(70)
        theirs.close()
        return _Spare(pid, ours)

    def discard(self, pid: int) -> None:
        self.spares.discard(pid)
        self.discarded.add(pid)
        self.kill_child(pid)

    def refill_spares(self) -> None:
        """Top the idle spares up to ``spare_count``. While a job runs and another spare is still
        idle, wait for the job to exit: a fork and a warm-up parse beside a running job slow it
        down on a machine with few cores, and the idle spare serves the next job meanwhile."""
        if (self.children and self.spares) or self.spare_died:
            return
        while self.spare_key is not None and len(self.spares) < self.spare_count:
            self.hand_out(self.fork_spare(warm=self.warm_pdf is not None))

    def hand_out(self, spare: _Spare) -> None:
        """Pass the spare's socket to the supervisor and keep no copy: only the supervisor can
        send it a job, and when the supervisor drops the socket the spare reads EOF."""
        try:
            self.send(Spare(spare.pid, self.generation), [spare.sock.fileno()])
        finally:
            spare.sock.close()
        self.spares.add(spare.pid)

    def kill_child(self, pid: int) -> None:
        """Kill the child's group; before its setpgid() there is no such group, so kill the pid."""
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def kill_job(self, job_id: int) -> None:
        pid = self.by_job.get(job_id)
        if pid is not None and pid in self.children:
            self.children[pid].killed = True
            self.kill_child(pid)

    def enforce_deadlines(self, now: float | None = None) -> None:
        """Kill each child at its job deadline, and each resident at its idle deadline."""
        now = time.monotonic() if now is None else now
        for child in self.children.values():
            if not child.deadline_hit and child.due(now):
                child.deadline_hit = True
                self.kill_child(child.pid)
        for pid, idle_until in list(self.residents.items()):
            if now >= idle_until:
                self.drop(pid)

    def reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.discarded.discard(pid)
            rusage = {"utime": usage.ru_utime, "stime": usage.ru_stime, "maxrss_kb": usage.ru_maxrss}
            if os.WIFSIGNALED(status):  # the verdict may ask how much of the peak was its own
                rusage["base_rss_kb"] = _anonymous_rss_kb()
            child = self.children.pop(pid, None)
            if pid in self.residents:  # it exited between jobs, or after a job not yet ``assigned``
                del self.residents[pid]
                self.remember_unassigned(pid, status, rusage)
                continue
            if child is None and pid not in self.spares:
                continue
            # The group may still hold grandchildren (it should not: NPROC 0, seccomp); clear it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            if child is not None:
                self.by_job.pop(child.job_id, None)
                self.report_exit(child, status, rusage)
                continue
            # An idle spare died (e.g. a required layer failed, or the supervisor dropped it):
            # do not fork in a loop; the next job tries again. Or it ran a job whose
            # ``assigned`` is still on its way: keep its status for that.
            self.spares.discard(pid)
            self.spare_died = True
            self.remember_unassigned(pid, status, rusage)

    def remember_unassigned(self, pid: int, status: int, rusage: dict[str, float]) -> None:
        """An idle child reaped: kept for an ``assigned`` that may still be on its way."""
        self.unassigned[pid] = (status, rusage)
        if len(self.unassigned) > _MAX_UNASSIGNED:
            del self.unassigned[next(iter(self.unassigned))]

    def report_exit(self, child: _Child, status: int, rusage: dict[str, float]) -> None:
        wall_ms = round((time.monotonic() - child.started) * 1000, 3)
        self.send(Exit(child.job_id, status, child.deadline_hit, child.killed, wall_ms, rusage))

    def shutdown(self) -> None:
        for pid in [*self.children, *self.spares, *self.residents, *self.discarded]:
            self.kill_child(pid)
        os._exit(0)


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    control.setblocking(True)
    # A zygote must not outlive its supervisor even if the control socket is somehow kept open.
    from pdf_airlock.worker.sandbox.process import (
        close_leftover_fds,
        make_undumpable,
        scrub_environment,
        set_parent_death_signal,
    )

    set_parent_death_signal()
    # Its own process group, so a terminal's Ctrl-C reaches the supervisor only (which stops
    # the pool in order), but the supervisor's session: see pdf_airlock.worker.sandbox.process.detach.
    os.setpgid(0, 0)
    started = time.monotonic()
    from pdf_airlock.worker import deadline, fonts
    from pdf_airlock.worker.hugepages import collapse_warm_memory
    from pdf_airlock.worker.warmup import warm_up

    warm_up()
    # Before any fork: no child may hold a writable code page (pdf_airlock.worker.memory.closures).
    deadline.seal()
    fonts.seal()
    kinds = _KINDS
    # The test-only switch (docs/security.md): set in the server's environment by the test suite,
    # never by a request or a document. It adds the escape and fault job kinds and lets a job
    # skip sandbox layers; the supervisor logs a warning when it is on.
    test_hooks = os.environ.get(TEST_HOOKS_ENV) == "1"
    if test_hooks:
        import pdf_airlock.worker.testing.escape
        import pdf_airlock.worker.testing.faults  # noqa: F401 - imported now: a sandboxed child cannot import

        kinds = kinds | TEST_KINDS
    probed = probe_layers()
    make_undumpable()  # after the namespace probe: an undumpable process cannot unshare(NEWUSER)
    spares = int(sys.argv[_SPARES_ARG]) if len(sys.argv) > _SPARES_ARG else 0
    cold = len(sys.argv) > _COLD_ARG and sys.argv[_COLD_ARG] == _COLD
    warm_sample = None if cold else warm_pdf()
    # What the warm-up's libraries left open (qpdf's /dev/urandom): the zygote holds only its
    # stdio, its control socket and what ``Zygote`` opens next (its wake-up pipe and selector).
    close_leftover_fds(control.fileno())
    zygote = Zygote(control, probed, kinds, spares, warm_sample, test_hooks=test_hooks)
    # Last, once nothing in the zygote reads its environment any more: children inherit the
    # allowlist in place, and their env_allowlist layer only checks it (``scrub_environment``).
    scrub_environment()
    collapse_warm_memory()  # after every allocation the warm-up keeps: see pdf_airlock.worker.hugepages
    layers = {
        "namespaces": probed["namespaces_unavailable"] or "available",
        "landlock": f"ABI {probed['landlock_abi']}" if probed["landlock_abi"] else "unavailable",
        "seccomp": probed["seccomp_unavailable"] or "available",
    }
    warm_ms = round((time.monotonic() - started) * 1000, 1)
    zygote.send(Ready(os.getpid(), warm_ms, layers, tuple(sorted(kinds))))
    zygote.serve()


if __name__ == "__main__":
    main()
