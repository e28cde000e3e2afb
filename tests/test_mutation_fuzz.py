"""A CI-sized run of the seeded mutation fuzzer (tests/hostile/mutate.py) through the real server."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.hostile.mutate import fuzz

CI_MUTANTS = 300


def test_mutants_are_contained(tmp_path: Path) -> None:
    report = anyio.run(fuzz, CI_MUTANTS, tmp_path, tmp_path / "regressions")
    assert report.failures == [], report.failures
    assert sum(report.outcomes.values()) >= CI_MUTANTS * 2
    assert report.outcomes["ok"] > 0  # the fuzzer still produces readable documents too
