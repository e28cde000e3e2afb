"""Parallel page ranges: the merged answer equals the single-child answer, cursor included."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pdfs
import pytest
from conftest import connect

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    pages = [f"Page {n} " + ("alpha beta gamma delta " * 30) + f"end {n}" for n in range(1, 81)]
    data = pdfs.text_pdf(pages)
    pdfs.write(root / "big.pdf", data + b"\n%" + b"pad" * 30_000)  # past the split threshold
    return root


async def read_all(client: Any, max_chars: int, pages: str | None = None) -> tuple[list[Any], int]:
    collected: list[Any] = []
    cursor = None
    calls = 0
    while True:
        args: dict[str, Any] = {"path": "big.pdf", "max_chars": max_chars}
        if pages:
            args["pages"] = pages
        if cursor:
            args["cursor"] = cursor
        result = await client.call_tool("pdf_read", args)
        assert result.is_error is False, result
        collected += result.structured_content["pages"]
        cursor = result.structured_content["cursor"]
        calls += 1
        if cursor is None:
            return collected, calls


@pytest.mark.parametrize(
    ("max_chars", "pages"), [(2_000_000, None), (5000, None), (1234, "5-70"), (100_000, "3-")]
)
async def test_split_matches_single_child(big: Path, max_chars: int, pages: str | None) -> None:
    async with connect(big, "--workers", "3", "--cache-mb", "0") as client:
        parallel = await read_all(client, max_chars, pages)
    async with connect(big, "--workers", "1", "--cache-mb", "0") as client:
        single = await read_all(client, max_chars, pages)
    assert parallel == single
    text = "".join(page["text"] for page in parallel[0])
    assert text.count("end ") == (80 if pages is None else 66 if pages == "5-70" else 78)
