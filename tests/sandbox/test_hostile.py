"""Every hostile class through every tool and engine on one real server, with exact outcomes.

Guarantees checked per call: the outcome is one the class allows (tests/hostile/generate.py),
the call returns within the deadline plus 1 s, and the server answers the next request at once
(tests/hostile/run.py); over the whole run the supervisor's RSS grows by less than 20 MB.
stdout holding only frames is covered by the client itself: a non-JSON line would fail it.
"""

from __future__ import annotations

import anyio
import pytest

from tests.hostile.generate import CLASSES, expected
from tests.hostile.run import TIMEOUT_S, run_all

RSS_GROWTH_MB = 20


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, dict]:  # type: ignore[type-arg]
    folder = tmp_path_factory.mktemp("hostile")
    return anyio.run(run_all, folder / "docs", folder / "pdf_airlock.server.log")


def test_at_least_thirty_classes() -> None:
    assert len(CLASSES) >= 30


@pytest.mark.parametrize("cls", CLASSES, ids=[c.name for c in CLASSES])
def test_class_outcomes(results: tuple[list, dict], cls: object) -> None:  # type: ignore[type-arg]
    outcomes, _ = results
    for outcome in (o for o in outcomes if o.cls == cls.name):  # type: ignore[attr-defined]
        allowed = expected(cls, outcome.engine)  # type: ignore[arg-type]
        assert outcome.code in allowed, (outcome.engine, outcome.code)
        assert outcome.seconds < TIMEOUT_S + 1, (outcome.engine, outcome.seconds)


def test_supervisor_memory_is_bounded(results: tuple[list, dict]) -> None:  # type: ignore[type-arg]
    _, rss = results
    assert rss["end_mb"] - rss["start_mb"] < RSS_GROWTH_MB
