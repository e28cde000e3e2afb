"""``--documents-per-child``: one sandboxed child serving several jobs of one share (a client
and a root), with the real zygote, real children and the real sandbox.

What the tests pin down: jobs of one share reuse a child up to the limit and only then fork
another; jobs of two shares never meet in one child (what one leaves behind, the other never
sees); a failed job, a child whose memory grew too much, and the default of one document per
child all mean a fresh child; each job gets a whole CPU budget of its own; and a batch read
with children shared gives the same lines as one with a child per document.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import needs_landlock
from test_sandbox import RET_ALLOW, RET_KILL_PROCESS, _decide

from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.worker.contract import Limits
from pdf_airlock.worker.sandbox import seccomp
from pdf_airlock.worker.zygote import Zygote, _Child

pytestmark = pytest.mark.anyio

LIMITS = Limits(
    memory_bytes=512 << 20,
    cpu_seconds=2,
    max_input_bytes=1 << 20,
    max_result_bytes=1 << 20,
)
DEADLINE_S = 20.0
BATCH = (sys.executable, "-m", "pdf_airlock.server", "batch", "pdf_read")


@pytest.fixture(autouse=True)
def _hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDF_AIRLOCK_TEST_HOOKS", "1")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def fault(pool: Pool, documents: int, share: str | None, **args: Any) -> dict[str, Any]:
    """One ``fault`` job in an answering mode; its result, or the ToolError it ends in."""
    limits = replace(LIMITS, documents=documents)
    fd = os.memfd_create("shared-test", os.MFD_CLOEXEC)
    try:
        outcome = await pool.run("fault", args, fd, limits=limits, deadline_s=DEADLINE_S, share=share)
    finally:
        os.close(fd)
    return classify(outcome, limits.memory_bytes, DEADLINE_S)


async def first_job(pool: Pool, share: str, documents: int = 10) -> None:
    """A first job (its spec is new to the zygote: it goes through the zygote, to a child of its
    own), then wait until the spares made for that spec have reached the supervisor, so the next
    job goes to one of them and may stay on it."""
    await fault(pool, documents, share, mode="remember", value="zeroth")
    for _ in range(1000):
        if pool.idle_spares():
            return
        await anyio.sleep(0.01)
    raise AssertionError("no spare came")


async def test_one_share_reuses_a_child_up_to_the_limit() -> None:
    async with Pool(1, 4, 60, 1) as pool:
        answers = [await fault(pool, 3, "client\n/root", mode="remember", value=n) for n in range(10)]
    pids = [answer["pid"] for answer in answers]
    runs = [len(list(group)) for _pid, group in itertools.groupby(pids)]
    # A child serves at most 3 jobs, in a row, and never comes back after another one ran. A job
    # sent before any spare was ready goes through the zygote: a child of its own (a run of 1).
    assert max(runs) == 3 and len(runs) == len(set(pids)) and runs.count(3) >= 2, pids
    # Within one child the next job sees what the last one left (what sharing means); a fresh
    # child sees nothing.
    for number in range(1, len(answers)):
        expected = number - 1 if pids[number] == pids[number - 1] else None
        assert answers[number]["seen"] == expected, answers


async def test_two_shares_never_meet_in_one_child() -> None:
    shares = ["client\n/root-a", "client\n/root-b", "other-client\n/root-a"]
    seen: dict[str, list[Any]] = {share: [] for share in shares}
    pids: dict[str, set[int]] = {share: set() for share in shares}
    async with Pool(len(shares), 4, 60, 1) as pool:  # room for a resident child of each share
        for round_number in range(4):
            for share in shares:
                answer = await fault(pool, 10, share, mode="remember", value=f"{share}:{round_number}")
                seen[share].append(answer["seen"])
                pids[share].add(answer["pid"])
    for share in shares:
        assert all(value is None or value.startswith(f"{share}:") for value in seen[share]), seen
    assert not (pids[shares[0]] & pids[shares[1]] or pids[shares[0]] & pids[shares[2]])
    assert not pids[shares[1]] & pids[shares[2]]
    assert sum(value is not None for values in seen.values() for value in values) >= 6  # it did reuse


async def test_without_a_share_or_by_default_each_job_has_a_fresh_child() -> None:
    async with Pool(1, 4, 60, 1) as pool:
        unshared = [await fault(pool, 5, None, mode="remember", value=n) for n in range(3)]
        default = [await fault(pool, 1, "client\n/root", mode="remember", value=n) for n in range(3)]
    for answers in (unshared, default):
        assert len({answer["pid"] for answer in answers}) == 3
        assert all(answer["seen"] is None for answer in answers)


async def test_a_failed_job_retires_its_child() -> None:
    share = "client\n/root"
    async with Pool(1, 4, 60, 1) as pool:
        await first_job(pool, share)
        await fault(pool, 10, share, mode="remember", value="first")
        before = await fault(pool, 10, share, mode="remember", value="second")
        with pytest.raises(ToolError) as failed:
            await fault(pool, 10, share, mode="typed_error")
        after = await fault(pool, 10, share, mode="remember", value="third")
    assert failed.value.code == "malformed"
    assert before["seen"] == "first"
    assert after["seen"] is None and after["pid"] != before["pid"]


async def test_a_child_that_grew_too_much_is_not_kept() -> None:
    """Over a quarter of the memory budget held past its job: the next job gets a fresh child."""
    share = "client\n/root"
    async with Pool(1, 4, 60, 1) as pool:
        await first_job(pool, share)
        small = await fault(pool, 10, share, mode="hold_memory", mb=8)
        reused = await fault(pool, 10, share, mode="hold_memory", mb=LIMITS.memory_bytes // 3 >> 20)
        fresh = await fault(pool, 10, share, mode="remember", value=1)
    assert small["pid"] == reused["pid"] != fresh["pid"]
    assert fresh["seen"] is None


async def test_a_child_that_waits_past_its_idle_limit_exits() -> None:
    """Within ``resident_idle_s`` the next job of the key goes to the waiting child; past it the
    child is gone (its socket closed, it exits, the zygote reaps it) and the next job gets a fresh
    one that remembers nothing."""
    share = "client\n/root"
    async with Pool(1, 4, 60, 1, resident_idle_s=0.5) as pool:
        await first_job(pool, share)
        kept = await fault(pool, 10, share, mode="remember", value="first")
        reused = await fault(pool, 10, share, mode="remember", value="second")
        for _ in range(500):  # it exits half a second after its job; allow a loaded machine 5 s
            if not Path(f"/proc/{reused['pid']}").exists():
                break
            await anyio.sleep(0.01)
        else:
            raise AssertionError("the idle child is still there")
        fresh = await fault(pool, 10, share, mode="remember", value="third")
    assert reused["pid"] == kept["pid"] and reused["seen"] == "first"
    assert fresh["pid"] != reused["pid"] and fresh["seen"] is None


async def test_each_job_of_a_shared_child_has_its_own_cpu_budget() -> None:
    """Three jobs of 60% of the budget each on one child: over the budget together, each within
    it. A job past the budget on its own is still ``cpu_limit``."""
    share = "client\n/root"
    spin = LIMITS.cpu_seconds * 0.6
    async with Pool(1, 4, 60, 1) as pool:
        await first_job(pool, share)
        answers = [await fault(pool, 10, share, mode="spin_cpu", cpu_s=spin) for _ in range(3)]
        with pytest.raises(ToolError) as over:
            await fault(pool, 10, share, mode="spin_cpu", cpu_s=LIMITS.cpu_seconds * 1.6)
    assert len({answer["pid"] for answer in answers}) == 1
    assert over.value.code == "cpu_limit"


@needs_landlock
@pytest.mark.parametrize(
    ("attempt", "expected"),
    [
        ("raise_cpu_rlimit", "ValueError"),  # seccomp lets it through; the kernel's hard limit holds
        ("prlimit_zygote", "sandbox_violation"),
        ("open_etc_passwd", "EACCES"),
        ("execve_sh", "sandbox_violation"),
    ],
)
async def test_a_sharing_child_keeps_its_sandbox(attempt: str, expected: str) -> None:
    limits = replace(LIMITS, documents=5)
    async with Pool(1, 4, 60, 1) as pool:
        fd = os.memfd_create("escape", os.MFD_CLOEXEC)
        try:
            outcome = await pool.run(
                "escape", {"attempt": attempt}, fd, limits=limits, deadline_s=DEADLINE_S, share="c\n/r"
            )
        finally:
            os.close(fd)
        try:
            untrusted = classify(outcome, limits.memory_bytes, DEADLINE_S)
        except ToolError as error:
            assert error.code == expected
            return
    assert untrusted["outcome"] == "denied" and untrusted["errno"] == expected, untrusted


# -- a child a document took control of (``fault`` mode ``linger``) ------------------------------
# It answers every job sent to it, lifts its soft CPU limit to the hard one, never hangs up and
# never exits by itself: each way the supervisor lets go of a child must end it all the same.


async def gone(pid: int) -> bool:
    """The process has exited and been reaped (a loaded machine is given 20 s)."""
    for _ in range(2000):
        if not Path(f"/proc/{pid}").exists():
            return True
        await anyio.sleep(0.01)
    return False


def cpu_limits(pid: int) -> tuple[str, str]:
    """(soft, hard) RLIMIT_CPU of a process."""
    limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
    soft, hard = next(line for line in limits if line.startswith("Max cpu time")).split()[3:5]
    return soft, hard


async def test_a_lingering_child_is_killed_when_its_idle_time_is_up() -> None:
    share = "client\n/root"
    async with Pool(1, 4, 60, 1, resident_idle_s=0.5) as pool:
        await first_job(pool, share)
        lingering = await fault(pool, 10, share, mode="linger")
        assert lingering["served"] == 1
        assert await gone(lingering["pid"])


async def test_a_lingering_child_is_killed_when_another_key_takes_its_place() -> None:
    async with Pool(1, 4, 60, 1) as pool:  # room for one resident
        await first_job(pool, "client\n/root-a")
        lingering = await fault(pool, 10, "client\n/root-a", mode="linger")
        soft, hard = cpu_limits(lingering["pid"])
        other = await fault(pool, 10, "client\n/root-b", mode="remember", value=1)
        assert await gone(lingering["pid"])
    assert soft == hard  # it did lift its soft limit to the hard one
    assert other["pid"] != lingering["pid"]


async def test_a_lingering_child_is_killed_when_the_spec_changes() -> None:
    share = "client\n/root"
    async with Pool(1, 4, 60, 1) as pool:
        await first_job(pool, share)
        lingering = await fault(pool, 10, share, mode="linger")
        await fault(pool, 9, share, mode="remember", value=1)  # other limits: a new spec
        assert await gone(lingering["pid"])


async def test_a_lingering_child_serves_no_more_than_its_documents() -> None:
    """The supervisor counts a child's documents: after the 2nd of 2 it is not kept (though it
    did not hang up) and the zygote kills it; the 3rd job goes to another child."""
    share = "client\n/root"
    async with Pool(1, 4, 60, 1) as pool:
        await first_job(pool, share, documents=2)
        first = await fault(pool, 2, share, mode="linger")
        second = await fault(pool, 2, share, mode="remember", value=1)  # sent to the lingering child
        third = await fault(pool, 2, share, mode="remember", value=2)
        assert await gone(first["pid"])
    assert (second["pid"], second["served"]) == (first["pid"], 2)
    assert third["pid"] != first["pid"] and third["seen"] is None


def _zygote_with_child(
    job_id: int, deadline: float, hard: float
) -> tuple[Zygote, subprocess.Popen[bytes], list[socket.socket]]:
    """A zygote object (no process of its own) tracking a real process, in a group of its own,
    as the child of job ``job_id``."""
    control, supervisor = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote = Zygote(control, {}, frozenset({"fault"}))
    child = subprocess.Popen(["sleep", "600"], start_new_session=True)
    zygote.children[child.pid] = _Child(job_id, child.pid, 0.0, deadline, deadline, hard)
    zygote.by_job[job_id] = child.pid
    return zygote, child, [control, supervisor]


def _close(zygote: Zygote, child: subprocess.Popen[bytes], sockets: list[socket.socket]) -> None:
    zygote.selector.close()
    os.close(zygote.wake_read)
    os.close(zygote.wake_write)
    for sock in sockets:
        sock.close()
    child.kill()
    child.wait()


def test_zygote_kills_a_resident_at_its_own_idle_deadline() -> None:
    """Whatever the supervisor does, a resident dies ``idle_s`` after ``released`` (explicit clock)."""
    zygote, child, sockets = _zygote_with_child(7, deadline=100.0, hard=300.0)
    try:
        zygote.release(7, idle_s=5.0, now=10.0)
        assert zygote.residents == {child.pid: 15.0} and zygote.children == {}
        zygote.enforce_deadlines(now=14.9)
        assert child.poll() is None
        zygote.enforce_deadlines(now=15.0)
        assert child.wait(timeout=20) == -signal.SIGKILL
        assert zygote.residents == {}
    finally:
        _close(zygote, child, sockets)


def test_zygote_retires_a_child_within_its_grace() -> None:
    """``retire``: the child's deadline, and the limit of any extension, become the grace."""
    zygote, child, sockets = _zygote_with_child(8, deadline=100.0, hard=300.0)
    try:
        zygote.retire(8, grace_s=2.0, now=10.0)
        zygote.enforce_deadlines(now=11.9)
        assert child.poll() is None
        zygote.enforce_deadlines(now=12.0)
        assert child.wait(timeout=20) == -signal.SIGKILL
        assert zygote.children[child.pid].deadline_hit
    finally:
        _close(zygote, child, sockets)


def test_zygote_drops_only_a_resident() -> None:
    zygote, child, sockets = _zygote_with_child(9, deadline=100.0, hard=300.0)
    try:
        zygote.drop(child.pid)  # a child with a job: not the supervisor's to drop
        assert child.poll() is None
        zygote.release(9, idle_s=60.0, now=0.0)
        zygote.drop(child.pid)
        assert child.wait(timeout=20) == -signal.SIGKILL
    finally:
        _close(zygote, child, sockets)


NULL, SOME_POINTER, RLIMIT_CPU, RLIMIT_AS = 0, 0x7FFF0000, 0, 9
PRLIMIT64 = 302


@pytest.mark.parametrize(
    ("renew_cpu", "args", "allowed"),
    [
        (False, (0, RLIMIT_CPU, SOME_POINTER, NULL), False),
        (True, (0, RLIMIT_CPU, SOME_POINTER, NULL), True),
        (True, (0, RLIMIT_AS, SOME_POINTER, NULL), False),
        (True, (1, RLIMIT_CPU, SOME_POINTER, NULL), False),
        (True, (0, RLIMIT_AS, NULL, SOME_POINTER), True),
    ],
)
def test_only_a_sharing_child_may_set_its_cpu_limit(
    renew_cpu: bool, args: tuple[int, ...], allowed: bool
) -> None:
    program = seccomp.compile_filter(5, renew_cpu=renew_cpu).program
    assert _decide(program, PRLIMIT64, args) == (RET_ALLOW if allowed else RET_KILL_PROCESS)


def _batch(docs: Path, out: Path, *extra: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [
            *BATCH,
            str(docs),
            "--out",
            str(out),
            "--jobs",
            "1",
            "--progress",
            "none",
            "--cache-mb",
            "0",
            "--documents-may-fail",
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = sorted((json.loads(line) for line in out.read_text().splitlines()), key=lambda line: line["path"])
    for line in lines:  # a failure's details measure the run (peak memory), not the document
        line.get("error", {}).pop("details", None)
    return lines


def test_batch_reads_the_same_with_shared_children(docs: Path, tmp_path: Path) -> None:
    fresh = _batch(docs, tmp_path / "fresh.jsonl")
    shared = _batch(docs, tmp_path / "shared.jsonl", "--documents-per-child", "4")
    assert sum(line["ok"] for line in fresh) >= 4
    assert shared == fresh


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--documents-per-child", "0", "--documents-per-child must be between 1 and 1000"),
        ("--documents-per-child", "1001", "--documents-per-child must be between 1 and 1000"),
        ("--child-idle-seconds", "0", "--child-idle-seconds must be above 0 and at most 3600"),
        ("--child-idle-seconds", "3601", "--child-idle-seconds must be above 0 and at most 3600"),
    ],
)
def test_sharing_flags_out_of_range_are_usage_errors(
    docs: Path, tmp_path: Path, flag: str, value: str, message: str
) -> None:
    done = subprocess.run(
        [*BATCH, str(docs), "--out", str(tmp_path / "x.jsonl"), flag, value],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 2
    assert message in done.stderr
