"""A CI-sized soak (tests/hostile/soak.py): mixed, concurrent, cancelled calls through one server."""

from __future__ import annotations

from pathlib import Path

import anyio
import psutil
import pytest

from tests.hostile.soak import soak

CI_CALLS = 400
RSS_GROWTH_MB = 20


def _ignoring_idle_spares(monkeypatch: pytest.MonkeyPatch) -> None:
    """The soak counts the zygote's children left after the last call; pre-forked spares still
    waiting for a job (named ``airlock-spare``; a spare renames itself ``airlock-job`` the moment
    its job arrives) are meant to be there, so they are not counted as left behind."""
    children = psutil.Process.children

    def without_idle_spares(self: psutil.Process, recursive: bool = False) -> list[psutil.Process]:
        found = children(self, recursive=recursive)
        if "worker.zygote" not in " ".join(self.cmdline()):
            return found
        return [child for child in found if child.name() != "airlock-spare"]

    monkeypatch.setattr(psutil.Process, "children", without_idle_spares)


def test_soak_loses_nothing_and_leaks_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _ignoring_idle_spares(monkeypatch)
    report = anyio.run(soak, CI_CALLS, tmp_path)
    assert report.lost == 0
    assert report.answered + report.cancelled == CI_CALLS
    assert report.cancelled > 0 and report.outcomes["ok"] > 0
    assert report.leftover_children == 0
    assert report.fds_end <= report.fds_start
    assert report.rss_end_mb - report.rss_start_mb < RSS_GROWTH_MB
