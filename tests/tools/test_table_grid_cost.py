"""The table finder's cell search on pages of crossing rules, through the real server and sandbox.

A page of 201 horizontal and 201 vertical rules (a content stream of about 2.5 KB compressed)
once kept pdfplumber's cell search busy past the job's whole CPU budget, since its work grows
with the square of the crossings. The search is now bounded (``pdf_airlock.worker.pdf.gridcells``):
that page answers at once, and a page whose rules cross without ever joining into cells (where
the search must try every pair) gets ``complexity_limit`` instead of minutes of CPU. A ruled
table beside them is still found cell for cell.
"""

from __future__ import annotations

import io
from pathlib import Path

import pikepdf
import pytest
from conftest import connect

pytestmark = pytest.mark.anyio

RULES = 201
STEP = 3.5  # points between two rules: a 700 pt square grid
COMB = 60  # columns of the comb: 60 x 60 crossings, none of them joined across
TOOTH = 12  # points between two of its columns; each tick is 6 pt long


def _page(ops: bytes, size: float = 800) -> bytes:
    pdf = pikepdf.new()
    stream = pdf.make_stream(ops)  # saved compressed, as an attacker would send it
    page = pikepdf.Dictionary(Type=pikepdf.Name.Page, MediaBox=[0, 0, size, size], Contents=stream)
    pdf.pages.append(pikepdf.Page(page))
    out = io.BytesIO()
    pdf.save(out, compress_streams=True)
    return out.getvalue()


def grid_pdf() -> bytes:
    """201 horizontal and 201 vertical rules: 40,401 crossings."""
    ops = [b"0.5 w"]
    for i in range(RULES):
        at = 50 + i * STEP
        ops.append(b"50 %.1f m 750 %.1f l S" % (at, at))
        ops.append(b"%.1f 50 m %.1f 750 l S" % (at, at))
    return _page(b"\n".join(ops))


def comb_pdf() -> bytes:
    """Long vertical rules, each crossed by short horizontal ticks that reach no other rule:
    every crossing lines up with the others, but no two of them are joined by one rule."""
    ops = [b"0.5 w"]
    for i in range(COMB):
        x = 20 + i * TOOTH
        ops.append(b"%d 20 m %d %d l S" % (x, x, 20 + COMB * TOOTH))
        ops += [b"%d %d m %d %d l S" % (x - 3, 20 + j * TOOTH, x + 3, 20 + j * TOOTH) for j in range(COMB)]
    return _page(b"\n".join(ops))


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("grid-cost")
    (folder / "grid.pdf").write_bytes(grid_pdf())
    (folder / "comb.pdf").write_bytes(comb_pdf())
    return folder


def test_the_grid_page_is_small() -> None:
    assert len(grid_pdf()) < 4096


async def test_crossing_rules_answer_within_the_budget(root: Path) -> None:
    # Within --timeout 3 s (conftest): the unbounded search took minutes on the grid page, and
    # the job's outcome was its deadline, never complexity_limit.
    async with connect(root) as client:
        grid = await client.call_tool("pdf_tables", {"path": "grid.pdf"})
        comb = await client.call_tool("pdf_tables", {"path": "comb.pdf"})
    assert grid.is_error is False, grid.content
    assert grid.structured_content["tables"] == []  # 200 columns: over the 64 a table may have
    assert comb.is_error is True
    assert comb.structured_content["error"]["code"] == "complexity_limit"
    assert comb.structured_content["error"]["details"] == {"limit": 1_000_000, "page": 1}
