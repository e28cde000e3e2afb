"""Jobs sent straight to a pre-forked spare the supervisor holds, and every way back to the
zygote's path: a spare that died idle, a limits change, a dead zygote; deadlines still hold.
The pools here keep one spare per worker (the default keeps one more) so counts are exact."""

from __future__ import annotations

import array
import functools
import json
import os
import signal
import socket
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
import structlog.testing
from test_pool import (
    LIMITS,
    READ_ARGS,
    SLOW_ARGS,
    gone,
    idle_spares,
    job_child,
    restarted,
    run,
    settled_zygote,
)

from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.child_output import JobOutcome
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.spares import Spares, spec_key
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.worker.zygote import Zygote

pytestmark = pytest.mark.anyio

SPEC = spec_key(LIMITS, {})


async def held_spares(pool: Pool, zygote: psutil.Process, count: int) -> list[int]:
    """Pids of at least ``count`` idle spares the supervisor holds, each fully sandboxed."""
    for _ in range(500):
        sandboxed = {spare.pid for spare in await idle_spares(zygote, count)}
        held = pool.idle_spares()
        if len(held) >= count and set(held) <= sandboxed:
            return held
        await anyio.sleep(0.01)
    raise AssertionError(f"the supervisor holds fewer than {count} idle spares")


def cpu_limit(pid: int) -> str:
    limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
    return next(line for line in limits if line.startswith("Max cpu time")).split()[3]


def socket_fds(pid: int) -> int:
    fds = os.listdir(f"/proc/{pid}/fd")
    return sum(1 for fd in fds if os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:"))


async def run_with(
    pool: Pool, path: Path, limits: dict[str, int], kind: str = "pdf_read", **job: Any
) -> JobOutcome:
    fd = os.open(path, os.O_RDONLY)
    try:
        return await pool.run(kind, job.pop("args", READ_ARGS), fd, limits=limits, **job)
    finally:
        os.close(fd)


async def test_job_goes_straight_to_a_spare_the_supervisor_holds(docs: Path) -> None:
    async with Pool(1, 4, 60, 1, spares=1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        (spare,) = await held_spares(pool, zygote, 1)
        assert socket_fds(zygote.pid) == 1  # its control socket only: no copy of the spare's
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, pool, docs / "slow.pdf", SLOW_ARGS)
            child = await job_child(zygote)
            assert child.pid == spare  # the zygote could not have forwarded it: only we held it
            assert spare not in pool.idle_spares()
        assert await gone(child)


async def test_direct_job_is_audited_under_its_spare(docs: Path) -> None:
    async with Pool(1, 4, 60, 1, spares=1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        (spare,) = await held_spares(pool, await settled_zygote(), 1)
        started: list[int] = []
        with structlog.testing.capture_logs() as events:
            outcome = await run_with(pool, docs / "hello.pdf", LIMITS, deadline_s=20, on_start=started.append)
            for _ in range(500):
                exits = [event for event in events if event.get("job") in started]
                if exits:
                    break
                await anyio.sleep(0.01)
    assert classify(outcome, LIMITS.memory_bytes, 20)["pages"][0]["page"] == 1
    assert outcome.status is None  # answered on its envelope; the exit report came after
    assert [(event["event"], event["pid"], event["exit"]) for event in exits] == [
        ("job_exit", spare, "exit 0")
    ]


async def test_spare_killed_while_idle_falls_back_to_the_zygote(docs: Path) -> None:
    async with Pool(1, 4, 60, 1, spares=1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        (spare,) = await held_spares(pool, zygote, 1)
        process = psutil.Process(spare)
        process.send_signal(signal.SIGKILL)
        assert await gone(process)
        assert pool.idle_spares() == [spare]  # its death shows only when a job is sent to it
        result = await run(pool, docs / "hello.pdf", READ_ARGS)
        assert result["pages"][0]["page"] == 1
        (new,) = await held_spares(pool, zygote, 1)  # the zygote forks spares again
        assert new != spare and zygote.is_running() and pool.restarts == 0


async def test_limits_change_and_back_each_served_by_a_spare_of_its_own(docs: Path) -> None:
    other = replace(LIMITS, cpu_seconds=LIMITS.cpu_seconds - 1)
    async with Pool(1, 4, 60, 1, spares=1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        for limits, cpu in ((other, "19"), (LIMITS, "20")):
            old = [psutil.Process(pid) for pid in await held_spares(pool, zygote, 1)]
            outcome = await run_with(pool, docs / "hello.pdf", limits, deadline_s=20)
            assert classify(outcome, limits.memory_bytes, 20)["pages"][0]["page"] == 1
            assert await gone(old[0])  # made for the other limits: discarded unused
            (new,) = await held_spares(pool, await settled_zygote(), 1)
            assert cpu_limit(new) == cpu
            async with anyio.create_task_group() as tg:
                slow = functools.partial(run_with, args=SLOW_ARGS, deadline_s=20)
                tg.start_soon(slow, pool, docs / "slow.pdf", limits)
                assert (await job_child(zygote)).pid == new


async def test_zygote_killed_while_the_supervisor_holds_its_spares(docs: Path) -> None:
    async with Pool(2, 4, 60, 1, spares=2) as pool:
        first = await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        spares = [psutil.Process(pid) for pid in await held_spares(pool, zygote, 2)]
        zygote.kill()
        second = await run(pool, docs / "hello.pdf", READ_ARGS)  # not lost to a dying spare
        await restarted(pool)
        assert all([await gone(spare) for spare in spares])
        assert not set(pool.idle_spares()) & {spare.pid for spare in spares}
        third = await run(pool, docs / "hello.pdf", READ_ARGS)
        assert pool.restarts == 1
    assert first["pages"] == second["pages"] == third["pages"]


async def test_deadline_on_the_direct_path_is_timeout(docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDF_AIRLOCK_TEST_HOOKS", "1")
    outcomes: list[JobOutcome] = []

    async def hang() -> None:
        args = {"mode": "hang_ignoring_sigterm"}
        outcomes.append(await run_with(pool, docs / "hello.pdf", LIMITS, "fault", args=args, deadline_s=1))

    async with Pool(1, 4, 60, 1, spares=1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        (spare,) = await held_spares(pool, zygote, 1)
        async with anyio.create_task_group() as tg:
            tg.start_soon(hang)
            child = await job_child(zygote)
            assert child.pid == spare
        assert await gone(child)
    (outcome,) = outcomes
    assert outcome.deadline_hit
    with pytest.raises(ToolError) as caught:
        classify(outcome, LIMITS.memory_bytes, 1)
    assert caught.value.code == "timeout"


# -- the two ends of the hand-over, over real sockets ---------------------------------------


def test_spare_socket_is_write_only_and_of_the_current_generation() -> None:
    spares = Spares()
    generation = spares.use_spec(SPEC)
    ours, spare_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    stale, stale_spare_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    spares.offer(101, generation, ours.detach())
    spares.offer(102, generation - 1, stale.detach())
    assert spares.pids() == [101]
    assert stale_spare_end.recv(16) == b""  # an older spec's spare reads EOF and exits
    with pytest.raises(BrokenPipeError):  # nothing the spare sends can queue up on our side
        spare_end.send(b"hello supervisor")
    read_fd, write_fd = os.pipe()
    try:
        assert spares.hand_over(spec_key(LIMITS, {"skip": ["seccomp"]}), b"{}", [read_fd, write_fd]) is None
        assert spares.hand_over(SPEC, b'{"op":"job"}', [read_fd, write_fd]) == (101, None)
        data, ancdata, _flags, _addr = spare_end.recvmsg(64, socket.CMSG_SPACE(8))
        assert data == b'{"op":"job"}' and len(ancdata) == 1
        for fd in memoryview(ancdata[0][2]).cast("i"):
            os.close(fd)
        assert spare_end.recv(16) == b""  # and the socket was closed after the job
    finally:
        os.close(read_fd)
        os.close(write_fd)
        spare_end.close()
        stale_spare_end.close()


def test_hand_over_skips_a_spare_that_died_and_a_new_spec_drops_them_all() -> None:
    spares = Spares()
    generation = spares.use_spec(SPEC)
    peers = []
    for pid in (201, 202, 203):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        spares.offer(pid, generation, ours.detach())
        peers.append(theirs)
    peers[0].close()  # died idle
    read_fd, write_fd = os.pipe()
    try:
        assert spares.hand_over(SPEC, b"{}", [read_fd, write_fd]) == (202, None)
    finally:
        os.close(read_fd)
        os.close(write_fd)
    assert spares.pids() == [203]
    assert spares.use_spec(spec_key(replace(LIMITS, cpu_seconds=1), {})) == generation + 1
    assert spares.pids() == []
    assert peers[2].recv(16) == b""
    for peer in peers[1:]:
        peer.close()


def test_zygote_answers_a_late_or_unknown_assignment() -> None:
    control, supervisor = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote = Zygote(control, {}, frozenset({"pdf_read"}))
    try:
        zygote.unassigned[301] = (0, {"utime": 0.01, "stime": 0.0, "maxrss_kb": 1})
        zygote.assign(7, 301, 5.0)  # its child ran and was reaped before ``assigned`` arrived
        zygote.assign(8, 302, 5.0)  # never heard of it
        replies = [json.loads(supervisor.recv(4096)) for _ in range(3)]
    finally:
        zygote.selector.close()
        os.close(zygote.wake_read)
        os.close(zygote.wake_write)
        control.close()
        supervisor.close()
    assert [(reply["op"], reply["id"]) for reply in replies] == [("started", 7), ("exit", 7), ("lost", 8)]
    assert replies[1]["status"] == 0 and not replies[1]["deadline_hit"]
    assert zygote.children == {} and zygote.by_job == {}


def minor_faults(pid: int) -> int:
    """The process's minor page faults so far (/proc/PID/stat, field 10)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[7])


async def settled_faults(pid: int) -> int:
    """Minor faults of an idle spare once it is blocked waiting for its job (no more change)."""
    last = -1
    for _ in range(500):
        now = minor_faults(pid)
        if now == last:
            return now
        last = now
        await anyio.sleep(0.1)
    raise AssertionError("the spare never settled")


async def test_batch_spares_are_cold(docs: Path) -> None:
    """``warm_spares=False`` (``batch``): no kept heap and no warm-up parse in an idle spare, so
    none of the page faults they cost (bench/perf/cpu_per_doc.py); the job is read all the same."""
    faults = {}
    for warm in (True, False):
        async with Pool(1, 4, 60, 1, spares=1, warm_spares=warm) as pool:
            assert (await run(pool, docs / "hello.pdf", READ_ARGS))["pages"][0]["page"] == 1
            (spare,) = await held_spares(pool, await settled_zygote(), 1)
            faults[warm] = await settled_faults(spare)
            assert (await run(pool, docs / "hello.pdf", READ_ARGS))["pages"][0]["page"] == 1
    # The kept heap alone is 1 MiB of fresh pages (256 faults); the warm-up parse adds hundreds.
    assert faults[True] - faults[False] > 400, faults


def test_zygote_refuses_a_job_it_cannot_read_and_drops_other_nonsense() -> None:
    """A job without its shape (``contract.Job``) is refused by its id and its fds closed; an
    order without its shape is dropped; neither raises in the zygote's loop."""
    control, supervisor = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote = Zygote(control, {}, frozenset({"pdf_read"}))
    read_fd, write_fd = os.pipe()
    try:
        bad_job = json.dumps({"op": "job", "id": 9, "kind": "pdf_read", "args": {}, "limits": {}}).encode()
        supervisor.sendmsg(
            [bad_job], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [read_fd, write_fd]))]
        )
        zygote.handle_control()
        for nonsense in (b'{"op": "kill"}', b'{"op": "retire", "id": "x", "grace_s": 1}', b"not json"):
            supervisor.send(nonsense)
            zygote.handle_control()
        supervisor.setblocking(False)
        replies = [json.loads(supervisor.recv(4096))]
        with pytest.raises(BlockingIOError):
            supervisor.recv(4096)
    finally:
        zygote.selector.close()
        os.close(zygote.wake_read)
        os.close(zygote.wake_write)
        control.close()
        supervisor.close()
        os.close(read_fd)
        os.close(write_fd)
    assert replies == [{"op": "refused", "id": 9}]
    assert zygote.children == {} and zygote.spare_key is None
