"""A job's wall deadline on a busy machine: extended while the job is starved of CPU, never past
its hard limit, and never for a job that did get its CPU (``pdf_airlock.worker.zygote._Child``).

The clock and the CPU a child used are given to ``_Child.due`` explicitly, so each case is exact
whatever the machine's load; ``_cpu_seconds`` is checked on its own against a real process that
has used a known amount of CPU.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest

from pdf_airlock.worker.zygote import _MIN_EXTENSION_S, _Child, _cpu_seconds

# Binary fractions, so the clock's ticks land on the deadlines exactly.
BUDGET_S = 0.5
STRETCH = 3
HARD_S = BUDGET_S * STRETCH
TICK_S = 0.125
SPIN_S = 0.2  # CPU the spinner uses before it reports, then it sleeps


def _child(pid: int = 4242) -> _Child:
    return _Child(1, pid, 0.0, BUDGET_S, BUDGET_S, HARD_S)


def _cpu(used: float | None) -> object:
    return lambda _pid: used


def _first_due(child: _Child, used: float | None) -> float:
    """The first tick of the clock at which the child is due, its CPU fixed at ``used``."""
    now = 0.0
    while not child.due(now, _cpu(used)):  # type: ignore[arg-type]
        now += TICK_S
    return now


def test_before_its_deadline_a_job_is_never_due() -> None:
    child = _child()
    assert not child.due(BUDGET_S - 0.001, _cpu(None))  # type: ignore[arg-type]
    assert not child.stretched


def test_a_starved_job_runs_to_its_hard_limit() -> None:
    child = _child()
    assert _first_due(child, used=0.0) == HARD_S
    assert child.stretched


def test_a_job_that_got_its_cpu_ends_at_its_budget() -> None:
    child = _child()
    assert _first_due(child, used=BUDGET_S) == BUDGET_S
    assert not child.stretched


def test_a_job_half_starved_is_extended_by_what_it_missed() -> None:
    """At its deadline it had 0.1 s of CPU out of 0.3 s (under half): its deadline moves to
    when it would have had its budget, at least ``_MIN_EXTENSION_S`` on."""
    child = _child()
    assert not child.due(BUDGET_S, _cpu(0.1))  # type: ignore[arg-type]
    assert child.stretched and child.deadline == pytest.approx(
        BUDGET_S + max(_MIN_EXTENSION_S, BUDGET_S - 0.1)
    )


def test_a_job_whose_cpu_cannot_be_read_ends_at_its_budget() -> None:
    child = _child()
    assert _first_due(child, used=None) == BUDGET_S
    assert not child.stretched


@pytest.fixture
def spent() -> Iterator[int]:
    """A process that has used ``SPIN_S`` of CPU (and its interpreter's start-up) and now sleeps."""
    code = (
        "import time, sys\n"
        f"until = time.process_time() + {SPIN_S}\n"
        "while time.process_time() < until: pass\n"
        "print('spun', flush=True)\n"
        "time.sleep(60)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert process.stdout is not None and process.stdout.readline() == b"spun\n"  # an event, not a sleep
    yield process.pid
    process.kill()
    process.wait()


def test_cpu_seconds_reads_a_live_child(spent: int) -> None:
    used = _cpu_seconds(spent)
    assert used is not None and SPIN_S <= used < SPIN_S + 2.0  # plus the interpreter's start-up
    assert _cpu_seconds(2**22 + 7) is None  # no such pid
