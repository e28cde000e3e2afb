"""Every hostile class through every tool and engine on one real server, with exact outcomes.

Guarantees checked per call: the outcome is one the class allows (tests/hostile/generate.py),
and the server answers the next request (tests/hostile/run.py); over the whole run the
supervisor's RSS grows by less than 20 MB, and the zygote enforced every deadline itself (the
supervisor never had to give up on it: no ``zygote_unresponsive`` in its log). No call is held to
a wall-clock bound: on a busy machine the zygote stretches a starved job's deadline by design
(``--busy-stretch``; tests/sandbox/test_busy_deadline.py checks that rule on an explicit clock).
stdout holding only frames is covered by the client itself: a non-JSON line would fail it.
"""

from __future__ import annotations

import anyio
import pytest

from tests.hostile.generate import CLASSES, expected
from tests.hostile.run import run_all

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


def test_supervisor_memory_is_bounded(results: tuple[list, dict]) -> None:  # type: ignore[type-arg]
    _, rss = results
    assert rss["end_mb"] - rss["start_mb"] < RSS_GROWTH_MB


def test_the_zygote_held_every_deadline(results: tuple[list, dict]) -> None:  # type: ignore[type-arg]
    _, rss = results
    assert rss["unresponsive_zygote"] == 0
