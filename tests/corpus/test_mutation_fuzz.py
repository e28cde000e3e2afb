"""A CI-sized run of the seeded mutation fuzzer (tests/hostile/mutate.py) through the real server."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.hostile.mutate import fuzz
from tests.tool_calls import every_call

CI_MUTANTS = 300


def test_mutants_are_contained(tmp_path: Path) -> None:
    report = anyio.run(fuzz, CI_MUTANTS, tmp_path, tmp_path / "regressions")
    assert report.failures == [], report.failures
    assert sum(report.outcomes.values()) >= CI_MUTANTS * 10
    assert report.outcomes["ok"] > 0  # the fuzzer still produces readable documents too


# Mutants that once came back as `internal`, kept as files (tests/hostile/regression_corpus/,
# named by seed): a PdfiumError escaping from page loading (20261133, 20261147, 20261226), a
# content-stream operator that is not UTF-8 in pdf_security (20261206, 20261276), qpdf refusing a
# page label in pdf_outline (20262500). Each goes through every tool.
REGRESSIONS = Path(__file__).resolve().parents[1] / "hostile" / "regression_corpus"
TOOL_CALLS = tuple(every_call({"pdf_search": {"query": "e"}, "pdf_render": {"dpi": 36}}).values())


def test_regression_mutants() -> None:
    from conftest import connect

    mutants = sorted(REGRESSIONS.glob("mutant-*.pdf"))
    assert len(mutants) >= 6

    async def check() -> list[str]:
        codes = []
        async with connect(REGRESSIONS) as client:
            for mutant in mutants:
                for tool, extra in TOOL_CALLS:
                    result = await client.call_tool(tool, {"path": mutant.name, **extra})
                    codes.append(result.structured_content["error"]["code"] if result.is_error else "ok")
        return codes

    codes = anyio.run(check)
    assert "internal" not in codes and len(codes) == len(TOOL_CALLS) * len(mutants)
