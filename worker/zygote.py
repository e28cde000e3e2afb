"""The zygote: a warmed interpreter that forks one sandboxed child per job.

Started by the supervisor as ``python -m worker.zygote FD SPARES`` where FD is its end of a
SOCK_SEQPACKET control socket. It never parses a document itself. Protocol (one JSON object per
datagram, fds by SCM_RIGHTS):

  supervisor -> zygote  {"op": "job", "id", "kind", "args", "limits", "deadline_s"} + [input, result]
                        {"op": "kill", "id"}
  zygote -> supervisor  {"op": "ready", "pid", "warm_ms", "layers"}
                        {"op": "started", "id", "pid"}  or  {"op": "refused", "id"} (unknown kind)
                        {"op": "exit", "id", "status", "deadline_hit", "killed", "rusage", "wall_ms"}

Spares: the zygote keeps up to SPARES children forked ahead of time, each already sandboxed for
the limits and sandbox request of the last job seen (and warmed by a tiny parse), blocked on its
own socketpair. A job with the same limits and request is handed to an idle spare (the job
message and its two fds over that socket); one with different ones discards every idle spare
(SIGKILL) first, and gets a freshly forked one. A spare serves exactly one job; a replacement is
forked off the critical path: right after the hand-over when no other spare is idle, else once
the running jobs have exited. With no idle spare, the job goes to a spare forked on the spot
without the warm-up parse (the same path, just not ahead of time).

The zygote enforces each job's wall deadline from hand-over (SIGKILL to the child's process
group; the child is unreaped until then, so its pid cannot be recycled under us). EOF on the
control socket means the supervisor is gone: every child and spare is killed and the zygote
exits.
"""

from __future__ import annotations

import array
import contextlib
import json
import os
import selectors
import signal
import socket
import sys
import time
from dataclasses import dataclass
from typing import Any, Final

from worker.child import run_spare
from worker.sandbox import SPARE_SOCKET_FD, Limits, SandboxPolicy

__all__ = ["main"]

MAX_MESSAGE_BYTES: Final = 1 << 16
_MAX_FDS: Final = 2
_FD_ITEM_SIZE: Final = array.array("i").itemsize
_SPARES_ARG: Final = 2
_WARM_TEXT: Final = "pdf-airlock spare warm-up line"
_WARM_LINES: Final = 40


@dataclass(slots=True)
class _Spare:
    pid: int
    sock: socket.socket


@dataclass(slots=True)
class _Child:
    job_id: int
    pid: int
    started: float
    deadline: float
    deadline_hit: bool = False
    killed: bool = False


TEST_HOOKS_ENV: Final = "PDF_AIRLOCK_TEST_HOOKS"
_SpareKey = tuple[Limits, frozenset[str], frozenset[str], bool]
_KINDS: Final = frozenset(
    {
        "pdf_info",
        "pdf_read",
        "pdf_outline",
        "pdf_attachments",
        "pdf_annotations",
        "pdf_forms",
        "pdf_security",
        "pdf_search",
        "pdf_render",
        "pdf_images",
        "page_count",
        "probe",
    }
)


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
    from worker import landlock, namespaces, seccomp

    reason = seccomp.unavailable_reason()
    compiled = seccomp.compile_filter(SPARE_SOCKET_FD) if reason is None else None
    return {
        "namespaces_unavailable": namespaces.probe(net=False),
        "landlock_abi": landlock.abi_version(),
        "seccomp": compiled,
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
    ) -> None:
        self.control = control
        self.probed = probed
        self.kinds = kinds
        self.spare_count = spares
        self.warm_pdf = warm_pdf
        self.spares: dict[int, _Spare] = {}  # idle spares by pid, oldest first
        self.spare_key: _SpareKey | None = None
        self.spare_spec: dict[str, Any] = {}
        self.discarded: set[int] = set()  # killed spares not reaped yet
        self.spare_died = False  # an idle spare died on its own: no refill until the next job
        self.children: dict[int, _Child] = {}
        self.by_job: dict[int, int] = {}
        self.selector = selectors.DefaultSelector()
        self.wake_read, self.wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)

    def send(self, message: dict[str, Any]) -> None:
        self.control.sendall(json.dumps(message, separators=(",", ":")).encode())

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
        if not self.children:
            return None
        nearest = min(child.deadline for child in self.children.values())
        return max(0.0, nearest - time.monotonic())

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
        message = json.loads(data)
        if message.get("op") == "job" and len(fds) == _MAX_FDS and message.get("kind") in self.kinds:
            self.start_job(message, data, fds[0], fds[1])
        else:
            for fd in fds:
                os.close(fd)
            if message.get("op") == "job":
                self.send({"op": "refused", "id": int(message.get("id", -1))})
            elif message.get("op") == "kill":
                self.kill_job(int(message["id"]))

    def start_job(self, job: dict[str, Any], raw: bytes, input_fd: int, result_fd: int) -> None:
        """Hand the job to an idle spare made for its limits and sandbox, or to a new one.
        ``started`` goes out before the spare can see the job, so the supervisor always knows the
        job ran somewhere if this zygote dies right after."""
        self.use_spec(job)
        self.spare_died = False
        job_id = int(job["id"])
        fds = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [input_fd, result_fd]))]
        try:
            spare = self.take_spare()
            self.send({"op": "started", "id": job_id, "pid": spare.pid})
            try:
                spare.sock.sendmsg([raw], fds)
            except OSError:  # it died idle and is not reaped yet: fork one for this job
                self.discard(spare)
                spare = self.fork_spare(warm=False)
                self.send({"op": "started", "id": job_id, "pid": spare.pid})
                spare.sock.sendmsg([raw], fds)
        finally:
            os.close(input_fd)
            os.close(result_fd)
        spare.sock.close()  # the message stays queued for the spare; it reads it, then sees EOF
        started = time.monotonic()
        self.children[spare.pid] = _Child(job_id, spare.pid, started, started + float(job["deadline_s"]))
        self.by_job[job_id] = spare.pid

    def use_spec(self, job: dict[str, Any]) -> None:
        """Spares are made for the last-seen limits and sandbox request; a change discards them."""
        spec = {"limits": job["limits"], "sandbox": job.get("sandbox", {})}
        policy = SandboxPolicy.from_job(dict(spec["sandbox"]))
        key = (Limits(**spec["limits"]), policy.require, policy.skip, policy.net_namespace)
        if key != self.spare_key:
            for spare in list(self.spares.values()):
                self.discard(spare)
            self.spare_key, self.spare_spec = key, spec

    def take_spare(self) -> _Spare:
        if self.spares:
            return self.spares.pop(next(iter(self.spares)))
        return self.fork_spare(warm=False)

    def fork_spare(self, *, warm: bool) -> _Spare:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        parent_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                run_spare(
                    parent_pid, theirs.fileno(), self.spare_spec, self.probed, self.warm_pdf if warm else None
                )
            finally:
                os._exit(70)
        theirs.close()
        return _Spare(pid, ours)

    def discard(self, spare: _Spare) -> None:
        self.spares.pop(spare.pid, None)
        spare.sock.close()
        self.discarded.add(spare.pid)
        self.kill_child(spare.pid)

    def refill_spares(self) -> None:
        """Top the idle spares up to ``spare_count``. While a job runs and another spare is still
        idle, wait for the job to exit: a fork and a warm-up parse beside a running job slow it
        down on a machine with few cores, and the idle spare serves the next job meanwhile."""
        if (self.children and self.spares) or self.spare_died:
            return
        while self.spare_key is not None and len(self.spares) < self.spare_count:
            spare = self.fork_spare(warm=self.warm_pdf is not None)
            self.spares[spare.pid] = spare

    def kill_child(self, pid: int) -> None:
        """Kill the child's group; before its setsid() there is no such group, so kill the pid."""
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

    def enforce_deadlines(self) -> None:
        now = time.monotonic()
        for child in self.children.values():
            if now >= child.deadline and not child.deadline_hit:
                child.deadline_hit = True
                self.kill_child(child.pid)

    def reap(self) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.discarded.discard(pid)
            idle = self.spares.pop(pid, None)
            if idle is not None:  # died before it had a job (e.g. a required layer failed):
                idle.sock.close()  # do not fork in a loop; the next job tries again
                self.spare_died = True
                continue
            child = self.children.pop(pid, None)
            if child is None:
                continue
            # The group may still hold grandchildren (it should not: NPROC 0, seccomp); clear it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
            self.by_job.pop(child.job_id, None)
            self.send(
                {
                    "op": "exit",
                    "id": child.job_id,
                    "status": status,
                    "deadline_hit": child.deadline_hit,
                    "killed": child.killed,
                    "wall_ms": round((time.monotonic() - child.started) * 1000, 3),
                    "rusage": {
                        "utime": usage.ru_utime,
                        "stime": usage.ru_stime,
                        "maxrss_kb": usage.ru_maxrss,
                    },
                }
            )

    def shutdown(self) -> None:
        for pid in [*self.children, *self.spares, *self.discarded]:
            self.kill_child(pid)
        os._exit(0)


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    control.setblocking(True)
    # A zygote must not outlive its supervisor even if the control socket is somehow kept open.
    from worker.sandbox import make_undumpable, set_parent_death_signal

    set_parent_death_signal()
    started = time.monotonic()
    from worker.warmup import warm_up

    warm_up()
    kinds = _KINDS
    if os.environ.get(TEST_HOOKS_ENV) == "1":
        import worker.escape
        import worker.faults  # noqa: F401 - imported now: a sandboxed child cannot import

        kinds = kinds | {"escape", "fault"}
    probed = probe_layers()
    make_undumpable()  # after the namespace probe: an undumpable process cannot unshare(NEWUSER)
    spares = int(sys.argv[2]) if len(sys.argv) > _SPARES_ARG else 0
    zygote = Zygote(control, probed, kinds, spares, warm_pdf())
    layers = {
        "namespaces": probed["namespaces_unavailable"] or "available",
        "landlock": f"ABI {probed['landlock_abi']}" if probed["landlock_abi"] else "unavailable",
        "seccomp": probed["seccomp_unavailable"] or "available",
    }
    warm_ms = round((time.monotonic() - started) * 1000, 1)
    zygote.send({"op": "ready", "pid": os.getpid(), "warm_ms": warm_ms, "layers": layers})
    zygote.serve()


if __name__ == "__main__":
    main()
