"""A CI-sized soak (tests/hostile/soak.py): mixed, concurrent, cancelled calls through one server."""

from __future__ import annotations

import os
from pathlib import Path

import anyio

from tests.hostile.soak import soak

CI_CALLS = 400
RSS_GROWTH_MB = 20


def test_soak_loses_nothing_and_leaks_nothing(tmp_path: Path) -> None:
    report = anyio.run(soak, CI_CALLS, tmp_path)
    assert report.lost == 0
    assert report.answered + report.cancelled == CI_CALLS
    assert report.cancelled > 0 and report.outcomes["ok"] > 0
    assert report.leftover_children == 0
    # At most one per worker plus one (the default; workers default to the cores).
    assert report.idle_spares <= len(os.sched_getaffinity(0)) + 1
    assert report.fds_end <= report.fds_start
    assert report.rss_end_mb - report.rss_start_mb < RSS_GROWTH_MB
