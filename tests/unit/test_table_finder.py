"""The table finder's stages on pages that stand for real ones (tests/table_pages.py): each
class of table it reads whole, and each kind of text in columns it refuses as a table.

In-process: PDFium reads the page (``tables.read_page``), then the stages run alone or as
``find_tables``: the line finder's word boxes and ``/Rotate``, pieces and text rows
(``tablegrid``), the candidates found by alignment (``tablealign``), the checks
(``tableguard``), and the whole finder.
"""

from __future__ import annotations

from collections.abc import Callable

import pypdfium2 as pdfium
import pytest
import table_pages

from pdf_airlock.worker.pdf.graphics import PageGraphics
from pdf_airlock.worker.pdf.layoutlines import PageLines
from pdf_airlock.worker.pdf.tablealign import candidates
from pdf_airlock.worker.pdf.tablegrid import boundaries, pieces_of, text_rows
from pdf_airlock.worker.pdf.tables import Table, find_tables, read_page
from pdf_airlock.worker.pdf.visibility import document_facts

pytestmark = pytest.mark.unit


def _page(data: bytes) -> tuple[PageLines, PageGraphics]:
    document = pdfium.PdfDocument(data)
    try:
        page = document[0]
        found = read_page(page, [], document_facts(data))
        page.close()
        return found
    finally:
        document.close()


def _tables(data: bytes) -> list[Table]:
    return find_tables(*_page(data))


def test_a_line_keeps_each_words_box() -> None:
    lines, _ = _page(table_pages.wide_booktabs_pdf())
    total = next(line for line in lines.lines if line.text.startswith("11,100,200"))
    assert len(total.words) == len(total.text.split()) == 10
    assert [round(x1) for _, x1 in total.words] == [148 + 44 * i for i in range(10)]  # right-aligned cells
    gaps = [b[0] - a[1] for a, b in zip(total.words, total.words[1:], strict=False)]
    assert all(0 < gap < total.size for gap in gaps)  # tighter than the line finder's cut


def test_pieces_cut_a_line_of_figures_but_not_words() -> None:
    lines, _ = _page(table_pages.wide_booktabs_pdf())
    pieces = pieces_of(lines.lines, range(len(lines.lines)))
    assert [p.text for p in pieces if p.text.endswith(",20" + p.text[-1:])][:2] == [
        "11,100,200",
        "12,101,201",
    ]
    assert any(p.text == "New Hampshire" for p in pieces)  # two words a space apart stay one piece


def test_a_spanning_header_does_not_hide_the_whitespace_under_it() -> None:
    lines, _ = _page(table_pages.wide_booktabs_pdf())
    (found,) = candidates(text_rows(pieces_of(lines.lines, range(len(lines.lines)))))
    assert [p.text for p in found.rows[0].pieces] == ["Actual", "Projected"]  # its first row
    assert len(boundaries(found.rows[1:])) == 10
    assert len(boundaries(found.rows)) >= 10


def test_a_table_across_the_page_ruled_only_round_its_header_is_read_whole() -> None:
    (table,) = _tables(table_pages.wide_booktabs_pdf())
    expected = table_pages.wide_booktabs_rows()
    assert table.rows[1:] == expected[1:]
    assert {cell for cell in table.rows[0] if cell} == {"Actual", "Projected"}
    assert table.header_rows == 2


def test_header_rules_and_whitespace_part_a_body_no_rule_parts() -> None:
    (table,) = _tables(table_pages.header_ruled_pdf())
    assert table.rows == table_pages.HEADER_RULED
    assert not table.spans and table.header_rows == 1


def test_lines_of_a_band_no_rule_parts_are_its_rows() -> None:
    (table,) = _tables(table_pages.dense_band_pdf())
    assert table.rows == table_pages.DENSE
    assert table.header_rows == 1


def test_whitespace_parts_two_columns_a_grid_draws_no_rule_between() -> None:
    (table,) = _tables(table_pages.unruled_pair_pdf())
    assert table.rows == table_pages.SPLIT


def test_a_page_turned_by_rotate_is_read_as_shown() -> None:
    lines, graphics = _page(table_pages.rotated_pdf())
    assert (round(lines.width), round(lines.height)) == (842, 595)  # A4 on its side, as shown
    assert not lines.turned and lines.lines[0].text == "Enquiries by topic"
    assert all(rule.x1 <= lines.width and rule.bottom <= lines.height for rule in graphics.rules)
    (table,) = find_tables(lines, graphics)
    assert table.rows == table_pages.ROTATED and table.header_rows == 1


def test_grids_one_under_another_with_the_same_columns_are_one_table() -> None:
    (table,) = _tables(table_pages.stacked_pdf())
    assert [" ".join(row).split() for row in table.rows] == [
        " ".join(row).split() for row in table_pages.STACKED
    ]


def test_labels_beside_a_grid_ruled_round_its_figures_are_its_first_column() -> None:
    (table,) = _tables(table_pages.beside_pdf())
    assert table.rows == table_pages.BESIDE


def test_a_table_beside_a_column_of_prose_leaves_the_prose_out() -> None:
    (table,) = _tables(table_pages.beside_prose_pdf())
    assert table.rows == table_pages.BESIDE_PROSE
    assert table.x1 < 300


@pytest.mark.parametrize(
    "builder",
    [
        table_pages.two_columns_pdf,
        table_pages.equations_pdf,
        table_pages.authors_pdf,
        table_pages.form_pdf,
        table_pages.diagram_pdf,
    ],
    ids=lambda builder: builder.__name__.removesuffix("_pdf"),
)
def test_text_in_columns_that_is_no_table(builder: Callable[[], bytes]) -> None:
    """Two columns of justified prose and of references, numbered equations, a paper's authors,
    a ruled form, a drawing's boxes: each makes a candidate or a grid, none a table."""
    lines, graphics = _page(builder())
    rows = text_rows(pieces_of(lines.lines, range(len(lines.lines))))
    assert candidates(rows) or graphics.rules  # the finder had something to refuse
    assert find_tables(lines, graphics) == []


def test_superscript_digits_in_a_first_column_are_not_line_numbers() -> None:
    """``str.isdigit`` holds for superscripts that ``int`` refuses: pdf.js's standard_fonts.pdf
    put "²" and "³" in a candidate's first column and pdf_markdown and pdf_tables answered
    ``internal`` (ValueError). Only decimal digits count as line numbers."""
    from pdf_airlock.worker.pdf.tableguard import form

    rows = [[label, "value"] for label in ("1", "²", "³", "2", "3", "4", "5", "6")]
    table = Table(0.0, 0.0, 100.0, 100.0, rows)
    assert form(table) is True  # 1 to 6 count up by one; the superscripts are not line numbers
    numbered = Table(0.0, 0.0, 100.0, 100.0, [[str(n), "field"] for n in range(1, 13)] + [["²", "x"]])
    assert form(numbered) is True
