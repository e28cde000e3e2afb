"""The zygote: a warmed interpreter that forks one sandboxed child per job.

Started by the supervisor as ``python -m worker.zygote FD`` where FD is its end of a
SOCK_SEQPACKET control socket. It never parses a document itself. Protocol (one JSON object per
datagram, fds by SCM_RIGHTS):

  supervisor -> zygote  {"op": "job", "id", "kind", "args", "limits", "deadline_s"} + [input, result]
                        {"op": "kill", "id"}
  zygote -> supervisor  {"op": "ready", "pid", "warm_ms", "layers"}
                        {"op": "started", "id", "pid"}  or  {"op": "refused", "id"} (unknown kind)
                        {"op": "exit", "id", "status", "deadline_hit", "killed", "rusage", "wall_ms"}

The zygote enforces each job's wall deadline (SIGKILL to the child's process group; the
child is unreaped until then, so its pid cannot be recycled under us). EOF on the control socket
means the supervisor is gone: every child is killed and the zygote exits.
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

from worker.child import run_job

__all__ = ["main"]

MAX_MESSAGE_BYTES: Final = 1 << 16
_MAX_FDS: Final = 2
_FD_ITEM_SIZE: Final = array.array("i").itemsize


@dataclass(slots=True)
class _Child:
    job_id: int
    pid: int
    started: float
    deadline: float
    deadline_hit: bool = False
    killed: bool = False


TEST_HOOKS_ENV: Final = "PDF_AIRLOCK_TEST_HOOKS"
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


def probe_layers() -> dict[str, Any]:
    """What this kernel and container allow; computed once, inherited by every child."""
    from worker import landlock, namespaces, seccomp

    reason = seccomp.unavailable_reason()
    compiled = seccomp.compile_filter() if reason is None else None
    return {
        "namespaces_unavailable": namespaces.probe(net=False),
        "landlock_abi": landlock.abi_version(),
        "seccomp": compiled,
        "seccomp_unavailable": reason,
    }


class Zygote:
    """Single-threaded select loop: control messages, SIGCHLD, deadlines."""

    def __init__(self, control: socket.socket, probed: dict[str, Any], kinds: frozenset[str]) -> None:
        self.control = control
        self.probed = probed
        self.kinds = kinds
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
            self.start_job(message, fds[0], fds[1])
        else:
            for fd in fds:
                os.close(fd)
            if message.get("op") == "job":
                self.send({"op": "refused", "id": int(message.get("id", -1))})
            elif message.get("op") == "kill":
                self.kill_job(int(message["id"]))

    def start_job(self, job: dict[str, Any], input_fd: int, result_fd: int) -> None:
        started = time.monotonic()
        parent_pid = os.getpid()
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                run_job(job, parent_pid, input_fd, result_fd, self.probed)
            finally:
                os._exit(70)
        os.close(input_fd)
        os.close(result_fd)
        job_id = int(job["id"])
        self.children[pid] = _Child(job_id, pid, started, started + float(job["deadline_s"]))
        self.by_job[job_id] = pid
        self.send({"op": "started", "id": job_id, "pid": pid})

    def kill_child(self, child: _Child) -> None:
        """Kill the child's group; before its setsid() there is no such group, so kill the pid."""
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signal.SIGKILL)

    def kill_job(self, job_id: int) -> None:
        pid = self.by_job.get(job_id)
        if pid is not None and pid in self.children:
            self.children[pid].killed = True
            self.kill_child(self.children[pid])

    def enforce_deadlines(self) -> None:
        now = time.monotonic()
        for child in self.children.values():
            if now >= child.deadline and not child.deadline_hit:
                child.deadline_hit = True
                self.kill_child(child)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
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
        for child in list(self.children.values()):
            self.kill_child(child)
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
    zygote = Zygote(control, probed, kinds)
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
