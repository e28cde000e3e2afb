"""The pool with a real zygote and real job children: restarts, cancellation, confinement."""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import psutil
import pytest
import structlog

from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.pool import ZYGOTE_ENV_KEYS, Pool
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.worker.contract import Limits

pytestmark = pytest.mark.anyio

LIMITS = Limits(
    memory_bytes=256 << 20,
    cpu_seconds=20,
    max_input_bytes=1 << 30,
    max_result_bytes=1 << 20,
)
READ_ARGS: dict[str, Any] = {"max_chars": 1000, "pages": "1"}
SLOW_ARGS: dict[str, Any] = {"max_chars": 1000, "engine": "layout"}
JOB_NAME = "airlock-job"
SPARE_NAME = "airlock-spare"


async def run(pool: Pool, path: Path, args: dict[str, Any], deadline: float = 20.0) -> dict[str, Any]:
    fd = os.open(path, os.O_RDONLY)
    try:
        outcome = await pool.run("pdf_read", args, fd, limits=LIMITS, deadline_s=deadline)
    finally:
        os.close(fd)
    return classify(outcome, LIMITS.memory_bytes, deadline)


def zygote_process() -> psutil.Process:
    zygotes = [p for p in psutil.Process().children() if "pdf_airlock.worker.zygote" in " ".join(p.cmdline())]
    assert len(zygotes) == 1
    return zygotes[0]


async def settled_zygote() -> psutil.Process:
    """The zygote once no job child is left: a job is answered when its result is complete, so
    its child may still be exiting when the call returns, and must not be taken for the next
    job's child."""
    zygote = zygote_process()
    for _ in range(500):
        if not running_jobs(zygote):
            return zygote
        await anyio.sleep(0.01)
    raise AssertionError("a job child did not exit")


async def exit_events(events: list[dict[str, Any]], jobs: list[int]) -> list[dict[str, Any]]:
    """The ``job_exit`` events of these jobs, once each has one (the exit report comes last)."""
    for _ in range(1000):
        exits = [event for event in events if event["event"] == "job_exit" and event["job"] in jobs]
        if len(exits) >= len(jobs):
            return exits
        await anyio.sleep(0.01)
    raise AssertionError(f"no exit report for some of the jobs {jobs}")


async def capture(errors: list[BaseException], pool: Pool, path: Path, args: dict[str, Any]) -> None:
    try:
        await run(pool, path, args)
    except ToolError as exc:
        errors.append(exc)


async def gone(process: psutil.Process) -> bool:
    for _ in range(300):
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        await anyio.sleep(0.01)
    return False


def named_children(zygote: psutil.Process, name: str) -> list[psutil.Process]:
    """Live children of the zygote by name: ``airlock-job`` holds a job, ``airlock-spare`` is a
    pre-forked spare still waiting for one."""
    found = []
    for child in zygote.children():
        with contextlib.suppress(psutil.NoSuchProcess):
            if child.name() == name and child.status() != psutil.STATUS_ZOMBIE:
                found.append(child)
    return found


def running_jobs(zygote: psutil.Process) -> list[psutil.Process]:
    return named_children(zygote, JOB_NAME)


def _sandboxed(process: psutil.Process) -> bool:
    """Seccomp is the last layer: once it is on, the whole sandbox is (a spare is named first)."""
    try:
        return "Seccomp:\t2" in Path(f"/proc/{process.pid}/status").read_text()
    except FileNotFoundError:
        return False


async def idle_spares(zygote: psutil.Process, count: int) -> list[psutil.Process]:
    """At least ``count`` idle spares, each with its sandbox fully set up."""
    for _ in range(500):
        spares = [spare for spare in named_children(zygote, SPARE_NAME) if _sandboxed(spare)]
        if len(spares) >= count:
            return spares
        await anyio.sleep(0.01)
    raise AssertionError(f"fewer than {count} idle spares")


async def job_child(zygote: psutil.Process) -> psutil.Process:
    for _ in range(500):
        children = running_jobs(zygote)
        if children:
            return children[0]
        await anyio.sleep(0.01)
    raise AssertionError("no job child appeared")


async def restarted(pool: Pool, count: int = 1) -> None:
    """Wait for the pool to restart its zygote. A call made right after the kill may have been
    served by a spare the dying zygote had already handed over (it dies with the zygote, but a
    short parse can finish first), before the supervisor saw the zygote go."""
    for _ in range(500):
        if pool.restarts >= count:
            return
        await anyio.sleep(0.01)
    raise AssertionError("the zygote was not restarted")


async def test_zygote_restarts_after_kill_between_jobs(docs: Path) -> None:
    async with Pool(2, 4, 60, 1) as pool:
        first = await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote_process().kill()
        second = await run(pool, docs / "hello.pdf", READ_ARGS)
        await restarted(pool)
        third = await run(pool, docs / "hello.pdf", READ_ARGS)
        assert pool.restarts == 1
    assert first["pages"] == second["pages"] == third["pages"]


async def test_zygote_killed_mid_job_fails_only_that_job(docs: Path) -> None:
    async with Pool(2, 4, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        errors: list[BaseException] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(capture, errors, pool, docs / "glyphs.pdf", SLOW_ARGS)
            child = await job_child(zygote)
            # A job sent straight to a spare is the zygote's once it has taken it over (just
            # after the child sees it); killed before that, the job would be sent again.
            await anyio.sleep(0.2)
            zygote.send_signal(signal.SIGKILL)
        assert [(e.code, e.retryable) for e in errors if isinstance(e, ToolError)] == [
            ("worker_unavailable", True)
        ]
        assert await gone(child)
        after = await run(pool, docs / "hello.pdf", READ_ARGS)
    assert after["pages"][0]["page"] == 1


async def test_cancelled_job_child_is_killed_and_its_exit_still_audited(docs: Path) -> None:
    started: list[int] = []

    async def slow_job() -> None:
        fd = os.open(docs / "glyphs.pdf", os.O_RDONLY)
        try:
            await pool.run("pdf_read", SLOW_ARGS, fd, limits=LIMITS, deadline_s=20, on_start=started.append)
        finally:
            os.close(fd)

    async with Pool(2, 4, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        with structlog.testing.capture_logs() as events:
            async with anyio.create_task_group() as tg:
                tg.start_soon(slow_job)
                child = await job_child(zygote)
                tg.cancel_scope.cancel()
            assert await gone(child)
            exits = await exit_events(events, started)
    assert len(started) == 1
    [event] = exits
    assert (event["event"], event["pid"], event["abandoned"]) == ("job_exit", child.pid, True)
    assert event["exit"] == "SIGKILL" and event["job_cpu_s"] > 0 and event["job_peak_rss_kb"] > 0


async def test_job_child_runs_at_the_configured_niceness(docs: Path) -> None:
    """Untrusted parsing yields the CPU to the supervisor: the child, spare or forked on demand,
    runs at ``limits.nice`` while this process keeps its own. Zygote and child lead their own
    process groups (killed as a group) in this process's session: a new session is a new
    autogroup, where the kernel would schedule the child as a peer of the supervisor and count
    its niceness only against itself."""
    ours = (os.getsid(0), _autogroup("self"))
    async with Pool(1, 4, 60, 1, spares=1) as pool:
        for nice in (7, 0):
            limits = replace(LIMITS, nice=nice)
            await run_limits(pool, docs / "hello.pdf", READ_ARGS, limits)  # spares for these limits
            zygote = await settled_zygote()
            async with anyio.create_task_group() as tg:
                tg.start_soon(run_limits, pool, docs / "glyphs.pdf", SLOW_ARGS, limits)
                child = await job_child(zygote)
                assert child.nice() == nice
                for process in (child, zygote):
                    assert os.getpgid(process.pid) == process.pid
                    assert (os.getsid(process.pid), _autogroup(process.pid)) == ours
                tg.cancel_scope.cancel()
    assert os.getpriority(os.PRIO_PROCESS, 0) == 0


def _autogroup(pid: int | str) -> str | None:
    """The process's autogroup (``/autogroup-N``), or None where the kernel has none (no file, or
    an empty one: kernels built with autogroups but booted without them)."""
    try:
        fields = Path(f"/proc/{pid}/autogroup").read_text().split()
    except OSError:
        return None
    return fields[0] if fields else None


async def run_limits(pool: Pool, path: Path, args: dict[str, Any], limits: dict[str, int]) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        await pool.run("pdf_read", args, fd, limits=limits, deadline_s=20)
    finally:
        os.close(fd)


async def test_running_child_is_confined(docs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIRLOCK_TEST_SECRET", "must-not-leak")
    async with Pool(1, 4, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        async with anyio.create_task_group() as tg:
            tg.start_soon(run, pool, docs / "glyphs.pdf", SLOW_ARGS)
            child = await job_child(zygote)
            await anyio.sleep(0.3)
            status = Path(f"/proc/{child.pid}/status").read_text()
            limits = Path(f"/proc/{child.pid}/limits").read_text()
            fds = sorted(int(fd) for fd in os.listdir(f"/proc/{child.pid}/fd"))
            env = Path(f"/proc/{child.pid}/environ").read_bytes()
            tg.cancel_scope.cancel()
    assert "NoNewPrivs:\t1" in status
    assert "Seccomp:\t2" in status
    if os.geteuid() == 0:
        assert "\nUid:\t65534\t65534\t65534" in status
    assert os.getpgid(child.pid) == child.pid if psutil.pid_exists(child.pid) else True
    assert fds == [0, 1, 2, 3, 4]
    limit_lines = {line[:26].strip(): line[26:].split() for line in limits.splitlines()[1:]}
    assert limit_lines["Max cpu time"][:2] == ["20", "21"]
    assert limit_lines["Max file size"][:2] == ["0", "0"]
    assert limit_lines["Max core file size"][:2] == ["0", "0"]
    assert limit_lines["Max processes"][:2] == ["0", "0"]
    assert limit_lines["Max open files"][:2] == ["16", "16"]
    assert limit_lines["Max address space"][0] != "unlimited"
    keys = {entry.split(b"=")[0].decode() for entry in env.split(b"\x00") if entry}
    assert keys <= set(ZYGOTE_ENV_KEYS)
    assert "AIRLOCK_TEST_SECRET" not in keys


async def test_zygote_holds_no_descriptor_but_its_own(docs: Path) -> None:
    """The warm zygote (the supervisor's child) holds its stdio, its control socket, its wake-up
    pipe and its selector, nothing else: no CMap memfd (mapped through libc, no descriptor kept)
    and no /dev/urandom (qpdf's, from the warm-up, closed). A CJK read in a child still decodes
    its CMap from the mapping (tests/sandbox/test_cmaps.py); here a job still answers."""
    async with Pool(1, 4, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        links = sorted(
            (int(fd), os.readlink(f"/proc/{zygote.pid}/fd/{fd}"))
            for fd in os.listdir(f"/proc/{zygote.pid}/fd")
        )
    kinds = [target.split(":")[0] for _fd, target in links]
    assert links[:2] == [(0, "/dev/null"), (1, "/dev/null")]
    assert sorted(kinds[2:]) == ["anon_inode", "pipe", "pipe", "pipe", "socket"], (
        links
    )  # stderr + wake-up pair


async def test_output_over_cap_is_output_limit(docs: Path) -> None:
    small = replace(LIMITS, max_result_bytes=200)
    async with Pool(1, 4, 60, 1) as pool:
        fd = os.open(docs / "long.pdf", os.O_RDONLY)
        try:
            outcome = await pool.run("pdf_read", {"max_chars": 100_000}, fd, limits=small, deadline_s=20)
        finally:
            os.close(fd)
    with pytest.raises(ToolError) as caught:
        classify(outcome, LIMITS.memory_bytes, 20)
    assert caught.value.code == "output_limit"


async def test_overloaded_past_queue_depth(docs: Path) -> None:
    async with Pool(1, 0, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        errors: list[BaseException] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(capture, errors, pool, docs / "glyphs.pdf", SLOW_ARGS)
            await anyio.sleep(0.2)
            await capture(errors, pool, docs / "hello.pdf", READ_ARGS)
            tg.cancel_scope.cancel()
        assert [(e.code, e.retryable) for e in errors if isinstance(e, ToolError)] == [("overloaded", True)]


async def test_job_child_killed_mid_parse_is_crashed_and_zygote_survives(docs: Path) -> None:
    async with Pool(2, 4, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        errors: list[BaseException] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(capture, errors, pool, docs / "glyphs.pdf", SLOW_ARGS)
            child = await job_child(zygote)
            await anyio.sleep(0.2)
            child.kill()
        assert [(e.code, e.details.get("signal")) for e in errors if isinstance(e, ToolError)] == [
            ("crashed", "SIGKILL")
        ]
        assert zygote.is_running() and pool.restarts == 0
        after = await run(pool, docs / "hello.pdf", READ_ARGS)
    assert after["pages"][0]["page"] == 1


async def test_idle_spare_is_already_confined_and_serves_exactly_one_document(docs: Path) -> None:
    async with Pool(1, 4, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        served: list[psutil.Process] = []
        for _ in range(2):
            spares = await idle_spares(zygote, 2)
            assert len(spares) == 2  # one spare per worker slot, plus one (the default)
            for spare in spares:
                status = Path(f"/proc/{spare.pid}/status").read_text()
                assert "NoNewPrivs:\t1" in status and "Seccomp:\t2" in status
                assert sorted(int(fd) for fd in os.listdir(f"/proc/{spare.pid}/fd")) == [0, 1, 2, 5]
            async with anyio.create_task_group() as tg:
                tg.start_soon(run, pool, docs / "slow.pdf", SLOW_ARGS)
                child = await job_child(zygote)
            assert child.pid in {spare.pid for spare in spares}  # the job went to a pre-forked spare
            assert await gone(child)  # and the spare exited after its one document
            served.append(child)
        assert served[0].pid != served[1].pid


async def test_limits_change_discards_the_idle_spare(docs: Path) -> None:
    async with Pool(1, 4, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        old = await idle_spares(zygote, 2)
        other = replace(LIMITS, cpu_seconds=LIMITS.cpu_seconds - 1)
        fd = os.open(docs / "hello.pdf", os.O_RDONLY)
        try:
            outcome = await pool.run("pdf_read", READ_ARGS, fd, limits=other, deadline_s=20)
        finally:
            os.close(fd)
        assert classify(outcome, other.memory_bytes, 20)["pages"][0]["page"] == 1
        for spare in old:
            assert await gone(spare)  # killed unused: it was sandboxed for the old limits
        new = (await idle_spares(zygote, 1))[0]
        limits = Path(f"/proc/{new.pid}/limits").read_text()
    assert new.pid not in {spare.pid for spare in old}
    cpu = next(line for line in limits.splitlines() if line.startswith("Max cpu time"))
    assert cpu.split()[3:5] == ["19", "20"]
