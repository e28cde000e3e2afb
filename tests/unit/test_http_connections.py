"""The listener's bookkeeping (``http/connections.py``) in process: the connection budget under
an open-file limit (in a child interpreter, whose limit the test sets), and which connection a
new one pushes out at the cap. The limits themselves are attacked over real sockets in
``tests/protocol/test_http_listener.py``."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from typing import Any

import pytest

from pdf_airlock.server.http.connections import Connections, ListenerLimits

BUDGET = """
import json, resource, structlog
from pdf_airlock.server.http.connections import connection_budget
with structlog.testing.capture_logs() as logs:
    fitted = connection_budget({wanted}, {reserve})
print(json.dumps([fitted, resource.getrlimit(resource.RLIMIT_NOFILE)[0], [l["event"] for l in logs]]))
"""


def _budget(soft: int, hard: int, wanted: int, reserve: int) -> list[Any]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

    done = subprocess.run(
        [sys.executable, "-c", BUDGET.format(wanted=wanted, reserve=reserve)],
        capture_output=True,
        text=True,
        check=True,
        preexec_fn=limit,
    )
    return list(json.loads(done.stdout))


@pytest.mark.parametrize(
    ("soft", "hard", "expected"),
    [
        (1024, 4096, [1000, 1256, []]),  # the soft limit is raised as far as it needs
        (1024, 1024, [768, 1024, ["http_connections_capped"]]),  # the cap is lowered to fit
        (300, 300, [44, 300, ["http_connections_capped"]]),
        (100, 100, [1, 100, ["http_connections_capped"]]),  # at least one
        (8192, 8192, [1000, 8192, []]),  # room already
    ],
)
def test_the_budget_keeps_the_reserve_free(soft: int, hard: int, expected: list[Any]) -> None:
    assert _budget(soft, hard, 1000, 256) == expected


class Stand:
    """A connection as the registry sees it: pushed out with ``evict``."""

    def __init__(self, registry: Connections) -> None:
        self.registry = registry
        self.evicted = False

    def evict(self) -> None:
        self.evicted = True
        self.registry.closed(self)  # type: ignore[arg-type]


def test_at_the_cap_the_oldest_idle_connection_goes() -> None:
    registry = Connections(ListenerLimits(65536, 5.0, 5.0, max_connections=3))
    first, second, third = (Stand(registry) for _ in range(3))
    for stand in (first, second, third):
        assert registry.opened(stand)  # type: ignore[arg-type]
    registry.busy(first)  # type: ignore[arg-type]  # a request in flight: never pushed out
    registry.idle(second)  # type: ignore[arg-type]  # answered: now the newest idle one
    fourth = Stand(registry)
    assert registry.opened(fourth)  # type: ignore[arg-type]
    assert [s.evicted for s in (first, second, third)] == [False, False, True]
    assert registry.open == 3 and registry.evicted == 1
    registry.busy(second)  # type: ignore[arg-type]
    registry.busy(fourth)  # type: ignore[arg-type]
    fifth = Stand(registry)
    assert not registry.opened(fifth)  # type: ignore[arg-type]  # every one is busy: no room
    assert registry.open == 4  # counted until the caller closes it
