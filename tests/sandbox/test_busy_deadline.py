"""A job's wall deadline on a busy machine: extended while the job is starved of CPU, never past
its hard limit, and never for a job that did get its CPU (``pdf_airlock.worker.zygote._Child``)."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from pdf_airlock.worker.zygote import _Child, _cpu_seconds

BUDGET_S = 0.3
STRETCH = 3


@pytest.fixture
def sleeper() -> Iterator[int]:
    """A process that uses no CPU: from the deadline's point of view, a starved job."""
    process = subprocess.Popen(["sleep", "30"])
    yield process.pid
    process.kill()
    process.wait()


@pytest.fixture
def spinner() -> Iterator[int]:
    process = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield process.pid
    process.kill()
    process.wait()


def _child(pid: int) -> _Child:
    started = time.monotonic()
    return _Child(1, pid, started, started + BUDGET_S, BUDGET_S, started + BUDGET_S * STRETCH)


def _first_due(child: _Child) -> float:
    while not child.due(time.monotonic()):
        time.sleep(0.01)
    return time.monotonic() - child.started


def test_a_starved_job_runs_to_its_hard_limit(sleeper: int) -> None:
    child = _child(sleeper)
    elapsed = _first_due(child)
    assert child.stretched
    assert BUDGET_S * STRETCH <= elapsed < BUDGET_S * STRETCH + 0.2


def test_a_job_that_got_its_cpu_ends_at_its_budget(spinner: int) -> None:
    time.sleep(0.05)  # the interpreter is up and spinning
    child = _child(spinner)
    child.started -= 0.05
    elapsed = _first_due(child)
    assert not child.stretched
    assert BUDGET_S <= elapsed < BUDGET_S + 0.2


def test_cpu_seconds_reads_a_live_child(spinner: int) -> None:
    time.sleep(0.3)
    used = _cpu_seconds(spinner)
    assert used is not None and 0.1 <= used <= 0.5
    assert _cpu_seconds(2**22 + 7) is None  # no such pid
