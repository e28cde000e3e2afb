"""Fault injection: job children that break the result protocol, next to healthy jobs."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from pdf_airlock.server.app.calls import App
from pdf_airlock.server.config import Settings
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.tools.read import PdfReadUntrusted

pytestmark = pytest.mark.anyio

EXPECTED = {
    "garbage": "crashed",
    "truncated": "crashed",
    "oversized": "output_limit",
    "hang_ignoring_sigterm": "timeout",
    "close_pipe_early": "crashed",
    "wrong_shape": "crashed",
    "unknown_code": "internal",
    "exit_nonzero": "crashed",
    # Its peak RSS includes the zygote's warm memory (hundreds of MiB): only what it allocated
    # itself is held against the budget, and that reached the budget.
    "abort_past_budget": "memory_limit",
}


@pytest.fixture(autouse=True)
def _hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PDF_AIRLOCK_TEST_HOOKS", "1")


@pytest.mark.parametrize(("mode", "code"), EXPECTED.items())
async def test_fault_is_typed_and_neighbours_are_unaffected(docs: Path, mode: str, code: str) -> None:
    settings = Settings(roots=(docs,), timeout_s=2, cpu_seconds=30, max_result_bytes=1 << 20, workers=2)
    errors: list[ToolError] = []
    healthy: list[Any] = []
    async with Pool(2, 8, 60, 1) as pool:
        app = App(settings, pool)
        document = app.policy.open_inline(base64.b64encode(b"%PDF-1.7 fault").decode())

        async def faulty() -> None:
            try:
                await app.run_job("fault", {"mode": mode}, document, PdfReadUntrusted)
            except ToolError as error:
                errors.append(error)

        async def neighbour() -> None:
            healthy.append(await app.call_tool("pdf_read", {"path": "hello.pdf", "pages": "1"}))

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(faulty)
                tg.start_soon(neighbour)
        finally:
            document.close()
        after = await app.call_tool("pdf_read", {"path": "hello.pdf", "pages": "2"})
    assert [error.code for error in errors] == [code]
    assert len(errors[0].message) <= 500
    assert "\x1b" not in errors[0].message
    assert healthy[0].is_error is False
    assert after.is_error is False
    assert os.environ["PDF_AIRLOCK_TEST_HOOKS"] == "1"
