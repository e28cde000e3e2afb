"""The structure engine's stages on a page TeX set (tests/latex_docs.py), each alone, then the
whole of ``pdf_markdown`` over the real MCP client: lines never of two columns and never with
the margin stamp's characters, the reading order of the columns and the bands, headings from
numbering and run-in lead-ins, the table, the lists, and every word of the flat text once
(bench/quality/markdown_fidelity.py), the furniture left out counted in the warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import latex_docs
import pypdfium2 as pdfium
import pytest
from conftest import connect

from bench.quality import markdown_fidelity
from pdf_airlock.worker.parsers import markdown as markdown_parser
from pdf_airlock.worker.parsers import read as read_parser
from pdf_airlock.worker.pdf.headings import never_heading, numbering
from pdf_airlock.worker.pdf.layoutlines import PageLines
from pdf_airlock.worker.pdf.readingorder import reading_order
from pdf_airlock.worker.pdf.tables import read_page
from pdf_airlock.worker.pdf.visibility import document_facts

pytestmark = pytest.mark.skipif(not latex_docs.available(), reason="needs pdflatex (Debian's texlive)")
_GUTTER = 306.0  # IEEEtran's letter page: the columns meet in the middle


@pytest.fixture(scope="module")
def paper(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return latex_docs.build(tmp_path_factory.mktemp("latex"))


def _page(paper: Path, index: int) -> PageLines:
    data = paper.read_bytes()
    document = pdfium.PdfDocument(data)
    try:
        page = document[index]
        lines, _ = read_page(page, [], document_facts(data))
        page.close()
        return lines
    finally:
        document.close()


def test_lines_hold_one_column_and_never_the_turned_stamp(paper: Path) -> None:
    for index in (0, 1):
        page = _page(paper, index)
        assert [(line.text, line.angle) for line in page.turned] == [(latex_docs.STAMP, 270)]
        assert not any("arXiv" in line.text or "2404" in line.text for line in page.lines)
        body = [line for line in page.lines if line.size == 10.0]  # the columns' text
        assert len(body) > 40
        assert all(line.x1 <= _GUTTER or line.x0 >= _GUTTER for line in body)


def test_reading_order_reads_the_columns_whole_and_the_bands_where_they_sit(paper: Path) -> None:
    first = _page(paper, 0)
    runs = reading_order(first.lines, first.width)
    texts = [" ".join(line.text for line in run) for run in runs]
    assert texts[0] == latex_docs.TITLE
    assert [text.split()[:2] for text in texts[1:3]] == [["Alice", "Author"], ["Bob", "Writer"]]
    left, right = runs[3], runs[4]  # then the left column whole, then the right one
    assert max(line.x1 for line in left) <= _GUTTER <= min(line.x0 for line in right)
    assert left[0].text.startswith("Abstract") and len(runs) == 5
    second = _page(paper, 1)
    runs = reading_order(second.lines, second.width)
    assert runs[0][0].text.startswith(latex_docs.CAPTION)  # the figure's band comes first
    assert all(
        max(line.x1 for line in run) <= _GUTTER or min(line.x0 for line in run) >= _GUTTER for run in runs[1:]
    )


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("1 Introduction", 1),
        ("3.2 Trace Trees", 2),
        ("I. INTRODUCTION", 1),
        ("A. Motivation", 2),
        ("II-A1 Sensor models", 3),
        ("1) A deeper part", 3),
        ("(2) Second case", 4),
        ("Appendix B Proofs", 1),
        ("(a) (b)", None),  # a figure's panel labels
        ("2024 was a good year", None),
    ],
)
def test_numbering_schemes(text: str, depth: int | None) -> None:
    assert numbering(text) == depth


@pytest.mark.parametrize(
    "text", ["Figure 3. Results", "TABLE II", "Fig. 1. A wide figure", "June 15, 2009", "12"]
)
def test_captions_dates_and_numbers_are_never_headings(text: str) -> None:
    assert never_heading(text)


def _markdown(paper: Path) -> dict[str, Any]:
    return markdown_parser.run(paper.read_bytes(), {"max_chars": 1_000_000, "ocr": "off"})


def test_headings_table_and_lists(paper: Path) -> None:
    answer = _markdown(paper)
    text = "\n\n".join(page["text"] for page in answer["pages"])
    found = [(h["level"], h["text"]) for page in answer["pages"] for h in page["headings"]]
    assert found == [*latex_docs.HEADINGS[:1], (4, "Abstract"), *latex_docs.HEADINGS[1:6],
                     (4, "a) Run-in methods"), *latex_docs.HEADINGS[7:]]  # fmt: skip
    lines = text.split("\n")
    assert "| Method | Recall | Precision |" in lines
    assert "| Baseline | 0.65 | 0.67 |" in lines and "| Ours | 0.91 | 0.93 |" in lines
    for item in latex_docs.ITEMS:
        assert item in lines, item
    assert latex_docs.STAMP not in text and "arXiv" not in text


def test_every_word_of_the_flat_text_once(paper: Path) -> None:
    """Word multisets of the Markdown and of PDFium's flat text: nothing lost beyond the
    furniture the warnings count (the stamp on each page), nothing duplicated."""
    answer = _markdown(paper)
    flat = read_parser.run(paper.read_bytes(), {"max_chars": 1_000_000, "ocr": "off"})
    found = markdown_fidelity.compare(
        "\n".join(page["text"] for page in flat["pages"]),
        "\n\n".join(page["text"] for page in answer["pages"]),
        answer["warnings"],
    )
    stamp_words = len(markdown_fidelity.words(latex_docs.STAMP))
    assert found["furniture"] == 2 * stamp_words >= found["lost"]  # a stamp word may be a body word too
    assert (found["excess_lost"], found["duplicated"]) == (0, 0), found


@pytest.mark.anyio
async def test_over_mcp_the_stamp_is_counted_in_the_warnings(paper: Path) -> None:
    async with connect(paper.parent) as client:
        result = await client.call_tool("pdf_markdown", {"path": paper.name})
    assert result.is_error is False, result
    answer = result.structured_content
    assert answer["warnings"] == ["page furniture left out: 2 margin stamps (16 words)"]
    assert answer["markdown"].startswith(f"# {latex_docs.TITLE}\n\nAlice Author")
    assert "arXiv" not in answer["markdown"]
