"""``pdf_outline``: the bookmarks in reading order, with their levels, target pages and labels, and
actions.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.tools.base import (
    JobRunner,
    Paged,
    ToolSpec,
    job_output,
    more,
    password,
    text_with_warnings,
)
from pdf_airlock.server.tools.cursors import selection_key
from pdf_airlock.server.tools.models import (
    Cursor,
    DocumentInput,
    SourceFields,
)
from pdf_airlock.server.tools.untrusted import (
    Bounded,
    UntrustedModel,
)

__all__ = ["TOOL"]


# -- what its job child may return ------------------------------------------------------------


class OutlineItem(UntrustedModel):
    title: Bounded
    level: int = Field(ge=1, le=64)
    page: int | None = Field(
        ge=1, description="1-based page the item points to, if it points into this file."
    )
    label: Annotated[str, Field(max_length=64)] | None = Field(description="That page's label, e.g. 'iv'.")
    action: Annotated[str, Field(max_length=32)] = Field(description="goto, uri, launch, javascript, ...")


class PdfOutlineUntrusted(UntrustedModel):
    items: list[OutlineItem] = Field(max_length=10_000)
    truncated: bool
    next_start: int | None = Field(ge=1)
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfOutlineInput(DocumentInput):
    max_depth: int = Field(16, ge=1, le=64)
    max_items: int = Field(1000, ge=1, le=10_000)
    cursor: Cursor | None = None


class PdfOutlineOutput(SourceFields):
    items: list[OutlineItem]
    truncated: bool
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_outline(runner: JobRunner, args: PdfOutlineInput, document: Document) -> tuple[BaseModel, str]:
    job_args = {"password": password(args), "max_depth": args.max_depth, "max_items": args.max_items}
    output = await job_output(
        runner,
        "pdf_outline",
        job_args,
        document,
        untrusted=PdfOutlineUntrusted,
        output_model=PdfOutlineOutput,
        paged=(args.cursor, selection_key(max_depth=args.max_depth)),
    )
    lines = [f"{output.source}: {len(output.items)} outline item(s)" + (" (cut)" if output.truncated else "")]
    for item in output.items:
        where = f"page {item.page}" + (
            f" ({item.label})" if item.label and item.label != str(item.page) else ""
        )
        target = where if item.page else item.action
        lines.append(f"{'  ' * (item.level - 1)}- {item.title} -> {target}")
    return output, text_with_warnings(lines + more(output.cursor), output.warnings)


TOOL = ToolSpec(
    name="pdf_outline",
    title="PDF bookmarks",
    description="Bookmarks in reading order: title, level, target page and label, action.",
    input_model=PdfOutlineInput,
    output_model=PdfOutlineOutput,
    run=pdf_outline,
    category="structure",
    rank=4,
    paged=Paged("items", flags=("truncated",)),
)
