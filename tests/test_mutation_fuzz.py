"""A CI-sized run of the seeded mutation fuzzer (tests/hostile/mutate.py) through the real server."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.hostile.mutate import fuzz

CI_MUTANTS = 300


def test_mutants_are_contained(tmp_path: Path) -> None:
    report = anyio.run(fuzz, CI_MUTANTS, tmp_path, tmp_path / "regressions")
    assert report.failures == [], report.failures
    assert sum(report.outcomes.values()) >= CI_MUTANTS * 7
    assert report.outcomes["ok"] > 0  # the fuzzer still produces readable documents too


# Seeds whose mutants once came back as `internal`: a PdfiumError escaping from page loading
# (the first three), a content-stream operator that is not UTF-8 in pdf_security (the others).
REGRESSION_SEEDS = (20261133, 20261147, 20261226, 20261206, 20261276)


def test_regression_mutants(tmp_path: Path) -> None:
    import random

    from conftest import connect

    from tests.hostile.mutate import mutate, seeds_corpus

    corpus = seeds_corpus()
    for seed in REGRESSION_SEEDS:
        rng = random.Random(seed)
        (tmp_path / f"{seed}.pdf").write_bytes(mutate(rng.choice(corpus), rng))

    async def check() -> list[str]:
        codes = []
        async with connect(tmp_path) as client:
            for seed in REGRESSION_SEEDS:
                for tool in ("pdf_info", "pdf_read", "pdf_security"):
                    result = await client.call_tool(tool, {"path": f"{seed}.pdf"})
                    codes.append(result.structured_content["error"]["code"] if result.is_error else "ok")
        return codes

    codes = anyio.run(check)
    assert "internal" not in codes and len(codes) == 3 * len(REGRESSION_SEEDS)
