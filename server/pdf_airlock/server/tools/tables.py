"""``pdf_tables``: the tables of the selected pages as rows of cells, each also a Markdown pipe table."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.tools.base import (
    Delivery,
    JobRunner,
    Paged,
    Position,
    ToolSpec,
    hidden_lines,
    password,
    position_of,
    published,
    text_with_warnings,
)
from pdf_airlock.server.tools.cursors import selection_key
from pdf_airlock.server.tools.models import (
    DEFAULT_ANSWER_CHARS,
    Cursor,
    DeliveryInput,
    HiddenTextInput,
    PageSelector,
    SourceFields,
)
from pdf_airlock.server.tools.untrusted import MAX_PAGES_IN_ANSWER, Bounded, Hidden, HiddenRun, UntrustedModel

__all__ = ["TOOL", "pipe_table"]

MAX_TABLES = 1000
MAX_COLUMNS = 64
MAX_ROWS = 5000
Cell = Annotated[str, Field(max_length=4000)]


# -- what its job child may return ------------------------------------------------------------


class Span(UntrustedModel):
    row: int = Field(ge=0, le=MAX_ROWS)
    column: int = Field(ge=0, le=MAX_COLUMNS)
    rows: int = Field(ge=1, le=MAX_ROWS)
    columns: int = Field(ge=1, le=MAX_COLUMNS)


class Table(UntrustedModel):
    page: int = Field(ge=1)
    bbox: list[float] = Field(
        min_length=4, max_length=4, description="x0, top, x1, bottom in points from the page's top-left."
    )
    rows: list[Annotated[list[Cell], Field(min_length=1, max_length=MAX_COLUMNS)]] = Field(
        min_length=1, max_length=MAX_ROWS, description="Cell text; a span's text once, at its top-left."
    )
    header_rows: int = Field(ge=0, le=MAX_ROWS)
    spans: list[Span] = Field(max_length=MAX_ROWS)
    continues: bool = Field(description="Goes on at the top of the next page.")
    continued_from: int | None = Field(ge=1, description="The page this table goes on from.")


class TablesPosition(UntrustedModel):
    index: int = Field(ge=0, le=MAX_PAGES_IN_ANSWER)
    table: int = Field(ge=0)


class PdfTablesUntrusted(UntrustedModel):
    page_count: int = Field(ge=0)
    selected_pages: int = Field(ge=0)
    tables: list[Table] = Field(max_length=MAX_TABLES)
    next: TablesPosition | None
    hidden: Hidden = Field(default_factory=list)
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfTablesInput(HiddenTextInput, DeliveryInput):
    pages: PageSelector | None = None
    max_tables: int = Field(50, ge=1, le=MAX_TABLES)
    cursor: Cursor | None = None


class PdfTablesOutput(SourceFields):
    page_count: int
    selected_pages: int
    tables: list[Table]
    cursor: str | None
    hidden: list[HiddenRun]
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


def _cell(text: str) -> str:
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split()) or " "


def pipe_table(rows: list[list[str]]) -> str:
    """Rows as a GitHub-flavoured Markdown pipe table (the first row is its header)."""
    width = max(len(row) for row in rows)
    padded = [row + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(_cell(cell) for cell in padded[0]) + " |", "|" + " --- |" * width]
    return "\n".join(lines + ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in padded[1:]])


def _title(number: int, table: Table) -> str:
    return _titled(number, table.page, table.rows, table.continued_from, table.continues)


def _titled(
    number: int, page: int, rows: list[list[str]], continued_from: int | None, continues: bool
) -> str:
    notes = [f"page {page}", f"{len(rows)}x{len(rows[0])}"]
    if continued_from:
        notes.append(f"continued from page {continued_from}")
    if continues:
        notes.append("continues on the next page")
    return f"Table {number} ({', '.join(notes)}):"


async def pdf_tables(runner: JobRunner, args: PdfTablesInput, document: Document) -> tuple[BaseModel, str]:
    key = selection_key(pages=args.pages)
    position = position_of(args.cursor, document, "pdf_tables", key)
    job_args = {
        "pages": args.pages,
        "password": password(args),
        "max_tables": args.max_tables,
        "start_index": position.get("index", 0),
        "start_table": position.get("table", 0),
        "include_hidden": args.include_hidden,
    }
    result, warnings = await runner.run_job("pdf_tables", job_args, document, PdfTablesUntrusted)
    output = published(
        PdfTablesOutput, result, warnings, document, position=Position("next", "pdf_tables", key, position)
    )
    lines = [f"{output.source}: {len(output.tables)} table(s)"]
    for number, table in enumerate(output.tables, 1):
        lines += ["", _title(number, table), pipe_table(table.rows)]
    for page in sorted({run.page for run in output.hidden}):
        lines += ["", *hidden_lines(page, [run for run in output.hidden if run.page == page])]
    if output.cursor:
        lines += ["", f"(more: call again with the same arguments and cursor={output.cursor})"]
    return output, text_with_warnings(lines, output.warnings)


def _resource_text(structured: dict[str, Any]) -> str:
    """Delivered tables: each under its title, as a Markdown pipe table."""
    tables = [Table.model_validate(table) for table in structured["tables"]]
    blocks = [f"{_title(number, table)}\n{pipe_table(table.rows)}" for number, table in enumerate(tables, 1)]
    hidden = [HiddenRun.model_validate(run) for run in structured.get("hidden") or ()]
    for page in sorted({run.page for run in hidden}):
        blocks.append("\n".join(hidden_lines(page, [run for run in hidden if run.page == page])))
    return "\n\n".join(blocks)


DELIVERY = Delivery(
    whole={"max_tables": MAX_TABLES},
    mime_type="text/markdown",
    text=_resource_text,
    pages=lambda structured: int(structured["selected_pages"]),
    answer_chars=DEFAULT_ANSWER_CHARS,
)


TOOL = ToolSpec(
    name="pdf_tables",
    title="PDF tables as data",
    description=(
        "Tables of the selected pages (ruled, partly ruled, shaded, aligned by whitespace): rows of "
        "cells, header rows, spans, bbox, continued across pages; text: Markdown pipe tables."
    ),
    input_model=PdfTablesInput,
    output_model=PdfTablesOutput,
    run=pdf_tables,
    category="structure",
    rank=3,
    paged=Paged("tables", appended=("hidden",)),
    delivery=DELIVERY,
)
