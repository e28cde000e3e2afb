"""``pdf_tables``: the tables of the selected pages as rows of cells.

Input: untrusted bytes. Each page's rules and fills (``pdf_airlock.worker.pdf.graphics``, at most
``MAX_GRAPHIC_OBJECTS`` examined: ``complexity_limit`` past it) and its text lines, cut at
vertical rules (``layoutlines``), go to the table finder (``pdf_airlock.worker.pdf.tables``):
ruled grids through pdfplumber's cell geometry, the others by the alignment of their text. A
table that runs to the bottom of a page and one that starts the next page with as many columns
are one table continued: ``continues`` on the first, ``continued_from`` on the second.

At most ``max_tables`` per answer from the position (page in the selection, table on that page)
the cursor names; the next position is returned. A cell's text over ``MAX_CELL_CHARS`` is cut
with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from pdf_airlock.worker import progress
from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.layoutlines import PageLines
from pdf_airlock.worker.pdf.opening import open_document
from pdf_airlock.worker.pdf.pages import pdfium_labels, select_pages
from pdf_airlock.worker.pdf.sample import SAMPLE_TABLE, table_pdf
from pdf_airlock.worker.pdf.tables import Table, find_tables, read_page
from pdf_airlock.worker.pdf.visibility import Withheld

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_tables"

MAX_CELL_CHARS: Final = 4000
MAX_WARNINGS: Final = 100
_EDGE_SHARE: Final = 0.1  # the top and bottom bands of a page (running headers, page numbers)


@dataclass(slots=True)
class _Found:
    index: int
    lines: PageLines
    tables: list[Table]

    def at_bottom(self, table: Table) -> bool:
        band = self.lines.height * (1 - _EDGE_SHARE)
        return all(line.top >= band for line in self.lines.lines if line.top > table.bottom)

    def at_top(self, table: Table) -> bool:
        band = self.lines.height * _EDGE_SHARE
        return all(
            line.bottom <= band or n in table.lines
            for n, line in enumerate(self.lines.lines)
            if line.bottom < table.top
        )


def _continued(before: _Found | None, after: _Found | None) -> bool:
    if before is None or after is None or not before.tables or not after.tables:
        return False
    last, first = before.tables[-1], after.tables[0]
    return (
        after.index == before.index + 1
        and last.columns == first.columns
        and before.at_bottom(last)
        and after.at_top(first)
    )


def _table_dict(page: int, table: Table, warnings: list[str]) -> dict[str, Any]:
    rows = []
    for row in table.rows:
        cells = []
        for cell in row:
            if len(cell) > MAX_CELL_CHARS:
                warnings.append(f"page {page}: a table cell was cut at {MAX_CELL_CHARS} characters")
            cells.append(cell[:MAX_CELL_CHARS])
        rows.append(cells)
    return {
        "page": page,
        "bbox": [round(value, 2) for value in (table.x0, table.top, table.x1, table.bottom)],
        "rows": rows,
        "header_rows": table.header_rows,
        "spans": [{"row": r, "column": c, "rows": rs, "columns": cs} for r, c, rs, cs in table.spans],
        "continues": False,
        "continued_from": None,
    }


class _Reader:
    """Pages' tables by page index, each page read once (a page next to the selection too: a
    table continues across pages whatever the selection)."""

    def __init__(self, document: Any, selection: list[int], seen: Withheld) -> None:
        self.document = document
        self.selection = selection
        self.seen = seen
        self.cache: dict[int, _Found] = {}

    def page(self, index: int) -> _Found | None:
        if not 0 <= index < len(self.document):
            return None
        if index not in self.cache:
            page = self.document[index]
            try:
                lines, graphics = read_page(page, [], self.seen.facts)
                tables = find_tables(lines, graphics)
            except WorkerError as error:
                error.details.setdefault("page", index + 1)
                raise
            finally:
                page.close()
            self.cache = {key: value for key, value in self.cache.items() if key >= index - 1}
            self.cache[index] = _Found(index, lines, tables)
        return self.cache[index]


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    opened = open_document(data, args.get("password"))
    document, warnings = opened.document, list(opened.warnings)
    try:
        page_count = len(document)
        selection = select_pages(args.get("pages"), page_count, pdfium_labels(document))
        result = _forward(_Reader(document, selection, Withheld(opened.data, args, warnings)), args, warnings)
    finally:
        document.close()
    return {
        "page_count": page_count,
        "selected_pages": len(selection),
        **result,
        "warnings": warnings[:MAX_WARNINGS],
    }


def _forward(reader: _Reader, args: dict[str, Any], warnings: list[str]) -> dict[str, Any]:
    max_tables = int(args["max_tables"])
    position, skip = int(args.get("start_index", 0)), int(args.get("start_table", 0))
    out: list[dict[str, Any]] = []
    hidden: list[dict[str, Any]] = []
    next_position: dict[str, int] | None = None
    total = len(reader.selection)
    while position < total and (found := reader.page(reader.selection[position])) is not None:
        if not skip:  # the page's hidden text, said once: where the page is first reached
            hidden += reader.seen.page(found.index + 1, found.lines.visibility)
        previous = reader.page(found.index - 1) if found.tables else None
        following = reader.page(found.index + 1) if found.tables else None
        for number, table in enumerate(found.tables):
            if number < skip:
                continue
            if len(out) >= max_tables:
                next_position = {"index": position, "table": number}
                break
            item = _table_dict(found.index + 1, table, warnings)
            if number == 0 and _continued(previous, found):
                assert previous is not None
                item["continued_from"] = previous.index + 1
                earlier = previous.tables[-1]
                if table.rows and earlier.rows and table.rows[0] == earlier.rows[0]:
                    item["header_rows"] = max(1, earlier.header_rows)
            item["continues"] = number == len(found.tables) - 1 and _continued(found, following)
            out.append(item)
        if next_position is not None:
            break
        skip = 0
        progress.page_done(position + 1, total)
        position += 1
    return {"tables": out, "next": next_position, "hidden": hidden}


def warm_up(sample: bytes) -> None:
    """Find the tables of a generated page (one ruled, one aligned by whitespace); raise unless
    both come back whole. ``sample`` (no table) is read too."""
    run(sample, {"max_tables": 10})
    tables = run(table_pdf(), {"max_tables": 10})["tables"]
    expected = [list(row) for row in SAMPLE_TABLE]
    if [table["rows"] for table in tables] != [expected, expected]:
        raise RuntimeError("pdf_tables failed its warm-up")
