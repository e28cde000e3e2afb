"""``pdf_tables`` over the real MCP client and sandbox, on documents with known tables
(bench/corpora/tables_corpus.py: ruled with spans, partly ruled, shaded, whitespace, multi-line cells,
continued across a page, and a page of lists and two columns with no table): exact cells, header
rows, spans, continuation, no phantom table, the pipe tables in the text and in ``pdf_markdown``,
paging by cursor, and the typed errors (too many graphic objects, not a PDF, a password)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pdfs
import pikepdf
import pytest
import table_pages
from conftest import connect

from bench.corpora import tables_corpus

pytestmark = pytest.mark.anyio
MANY_RULES = 60_000  # over the table finder's cap on graphic objects (50,000)


def many_rules_pdf() -> bytes:
    pdf = pikepdf.new()
    ops = b"\n".join(b"72 %d m 540 %d l S" % (100 + i % 600, 100 + i % 600) for i in range(MANY_RULES))
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page, MediaBox=[0, 0, 612, 792], Contents=pdf.make_stream(ops)
    )
    pdf.pages.append(pikepdf.Page(page))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("tables")
    tables_corpus.build(folder, per_style=1)
    (folder / "rules.pdf").write_bytes(many_rules_pdf())
    pdfs.write(folder / "locked.pdf", pdfs.encrypted_pdf("s3cret"))
    (folder / "not-a-pdf.pdf").write_bytes(b"<html>hello</html>")
    return folder


def truth(root: Path, style: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads((root / f"{style}-0.json").read_text())["tables"]
    return found


async def call(root: Path, tool: str, **arguments: Any) -> Any:
    async with connect(root) as client:
        return await client.call_tool(tool, arguments)


async def tables_of(root: Path, name: str, **arguments: Any) -> list[dict[str, Any]]:
    result = await call(root, "pdf_tables", path=name, **arguments)
    assert result.is_error is False, result
    found: list[dict[str, Any]] = result.structured_content["tables"]
    return found


@pytest.mark.parametrize("style", ["ruled", "partly_ruled", "shaded", "whitespace", "multiline", "continued"])
async def test_every_cell_of_every_style(root: Path, style: str) -> None:
    expected = truth(root, style)
    found = await tables_of(root, f"{style}-0.pdf")
    assert [table["rows"] for table in found] == [table["rows"] for table in expected]
    assert [table["page"] for table in found] == [table["page"] for table in expected]
    assert [table["header_rows"] for table in found] == [table["header_rows"] for table in expected]
    for table, known in zip(found, expected, strict=True):
        x0, top, x1, bottom = known["bbox"]  # the cells' box; the text sits inside it
        left, upper, right, lower = table["bbox"]
        assert x0 - 2 <= left and top - 2 <= upper and right <= x1 + 2 and lower <= bottom + 2, table["bbox"]
        assert right - left >= 0.7 * (x1 - x0) and lower - upper >= 0.7 * (bottom - top), table["bbox"]


async def test_spanning_cells_are_listed_once(root: Path) -> None:
    spanned = (await tables_of(root, "ruled-0.pdf"))[1]
    assert spanned["rows"][0] == ["Region", "First half", "", "Second half", ""]
    assert spanned["rows"][1] == ["", "Q1", "Q2", "Q3", "Q4"]
    assert {"row": 0, "column": 0, "rows": 2, "columns": 1} in spanned["spans"]
    assert {"row": 0, "column": 1, "rows": 1, "columns": 2} in spanned["spans"]
    assert {"row": 0, "column": 3, "rows": 1, "columns": 2} in spanned["spans"]
    assert len(spanned["spans"]) == 3


async def test_a_table_continued_on_the_next_page(root: Path) -> None:
    first, second = await tables_of(root, "continued-0.pdf")
    assert (first["continues"], first["continued_from"]) == (True, None)
    assert (second["continues"], second["continued_from"]) == (False, 1)
    alone = await tables_of(root, "continued-0.pdf", pages="2")
    assert alone[0]["continued_from"] == 1  # whatever the selection


async def test_no_phantom_table_in_lists_and_columns(root: Path) -> None:
    assert await tables_of(root, "none-0.pdf") == []


async def test_the_text_is_each_table_as_a_pipe_table(root: Path) -> None:
    result = await call(root, "pdf_tables", path="whitespace-0.pdf")
    rows = truth(root, "whitespace")[0]["rows"]
    text = result.content[0].text
    assert f"Table 1 (page 1, {len(rows)}x{len(rows[0])}):" in text
    assert "| " + " | ".join(rows[0]) + " |" in text.split("\n")
    assert "| " + " | ".join(rows[-1]) + " |" in text.split("\n")


async def test_cursor_pages_through_every_table_once(root: Path) -> None:
    whole = await tables_of(root, "ruled-0.pdf")
    seen: list[dict[str, Any]] = []
    cursor = None
    async with connect(root) as client:
        for _ in range(5):
            arguments: dict[str, Any] = {"path": "ruled-0.pdf", "max_tables": 1}
            if cursor:
                arguments["cursor"] = cursor
            result = await client.call_tool("pdf_tables", arguments)
            seen += result.structured_content["tables"]
            cursor = result.structured_content["cursor"]
            if cursor is None:
                break
    assert seen == whole and len(seen) == 2


async def test_markdown_puts_the_tables_in_reading_order(root: Path) -> None:
    result = await call(root, "pdf_markdown", path="shaded-0.pdf")
    markdown = result.structured_content["markdown"]
    rows = truth(root, "shaded")[0]["rows"]
    lines = markdown.split("\n")
    header = "| " + " | ".join(rows[0]) + " |"
    assert header in lines and "| " + " | ".join(rows[-1]) + " |" in lines
    at = lines.index(header)
    assert lines[at + 1] == "|" + " --- |" * len(rows[0])
    assert lines[at + len(rows) + 1] == ""  # the table ends there, whole
    assert lines[at - 2] and lines[at + len(rows) + 2]  # prose before and after it
    assert sum(line.startswith("|") for line in lines) == len(rows) + 1  # its cells nowhere else


async def test_too_many_graphic_objects_is_a_typed_limit(root: Path) -> None:
    result = await call(root, "pdf_tables", path="rules.pdf")
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "complexity_limit"
    assert error["details"]["page"] == 1
    markdown = await call(root, "pdf_markdown", path="rules.pdf")  # Markdown goes on without tables
    assert markdown.is_error is False
    assert any("no tables looked for" in warning for warning in markdown.structured_content["warnings"])


@pytest.mark.parametrize(
    ("name", "arguments", "code"),
    [
        ("not-a-pdf.pdf", {}, "not_a_pdf"),
        ("locked.pdf", {}, "encrypted"),
        ("locked.pdf", {"password": "nope"}, "wrong_password"),
        ("ruled-0.pdf", {"pages": "9"}, "page_out_of_range"),
        ("ruled-0.pdf", {"max_tables": 0}, "invalid_arguments"),
    ],
)
async def test_typed_errors(root: Path, name: str, arguments: dict[str, Any], code: str) -> None:
    result = await call(root, "pdf_tables", path=name, **arguments)
    assert result.is_error is True
    assert result.structured_content["error"]["code"] == code


def _page(ops: list[str]) -> bytes:
    """One page of raw content with Helvetica as /F1 (the real-world shapes below)."""
    pdf = pikepdf.new()
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
        )
    )
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)),
        Contents=pdf.make_stream("\n".join(ops).encode()),
    )
    pdf.pages.append(pikepdf.Page(page))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _text(x: float, y: float, text: str, size: float = 10, matrix: str = "") -> str:
    return f"BT /F1 {size} Tf {matrix or f'1 0 0 1 {x} {y}'} Tm ({text}) Tj ET"


def listing_pdf() -> bytes:
    """Numbered lines of code: a number column beside text, not a table."""
    code = [
        "for (var i = 2; i < 100; ++i) {",
        "if (!primes[i]) continue;",
        "for (var k = i + i; k < 100; k += i)",
    ]
    code += ["primes[k] = false;", "}", "return primes;"]
    return _page(
        [
            op
            for n, line in enumerate(code)
            for op in (_text(72, 700 - 14 * n, str(n + 1)), _text(100, 700 - 14 * n, line))
        ]
    )


def figure_pdf() -> bytes:
    """A diagram: labels in rows and columns, with curves running among them."""
    labels = (("start", "record", "compile"), ("monitor", "trace", "exit"), ("loop", "abort", "leave"))
    ops = []
    for row, names in enumerate(labels):
        for column, label in enumerate(names):
            x, y = 100 + 150 * column, 700 - 16 * row
            ops.append(_text(x, y, label))
            ops.append(f"{x + 40} {y + 3} m {x + 70} {y + 9} {x + 90} {y - 2} {x + 140} {y + 3} c S")
    return _page(ops)


def scaled_font_pdf() -> bytes:
    """A title and two paragraphs set in a font of size 1 scaled by the matrix (as some producers
    do): PDFium reports size 1 for every character."""
    lines = [(18, "Results of the survey")] + [
        (10, f"Paragraph line {n} of the body text goes on here.") for n in range(6)
    ]
    ops = [
        f"q {size} 0 0 {size} 72 {700 - 22 * n} cm BT /F1 1 Tf 0 0 Td ({text}) Tj ET Q"
        for n, (size, text) in enumerate(lines)
    ]
    return _page(ops)


async def test_real_world_shapes(tmp_path: Path) -> None:
    """Numbered lines of code and a diagram's labels are no tables; a font scaled by the matrix
    keeps its size (its title is a heading)."""
    (tmp_path / "listing.pdf").write_bytes(listing_pdf())
    (tmp_path / "figure.pdf").write_bytes(figure_pdf())
    (tmp_path / "scaled.pdf").write_bytes(scaled_font_pdf())
    assert await tables_of(tmp_path, "listing.pdf") == []
    assert await tables_of(tmp_path, "figure.pdf") == []
    result = await call(tmp_path, "pdf_markdown", path="scaled.pdf")
    assert result.structured_content["headings"][0]["text"] == "Results of the survey"


async def test_real_page_classes_over_mcp(tmp_path: Path) -> None:
    """Through the sandbox: a table across the page ruled only round its header (which a
    reading order would cut into strips), a page turned by ``/Rotate``, and a two-column page
    of prose with no table; ``pdf_markdown`` writes the wide table whole, once."""
    (tmp_path / "wide.pdf").write_bytes(table_pages.wide_booktabs_pdf())
    (tmp_path / "rotated.pdf").write_bytes(table_pages.rotated_pdf())
    (tmp_path / "prose.pdf").write_bytes(table_pages.two_columns_pdf())
    (wide,) = await tables_of(tmp_path, "wide.pdf")
    assert wide["rows"][1:] == table_pages.wide_booktabs_rows()[1:] and wide["header_rows"] == 2
    (rotated,) = await tables_of(tmp_path, "rotated.pdf")
    assert rotated["rows"] == table_pages.ROTATED
    assert await tables_of(tmp_path, "prose.pdf") == []
    result = await call(tmp_path, "pdf_markdown", path="wide.pdf")
    lines = result.structured_content["markdown"].split("\n")
    total = "| " + " | ".join(table_pages.wide_booktabs_rows()[-1]) + " |"
    assert total in lines and sum(line.startswith("|") for line in lines) == len(wide["rows"]) + 1
