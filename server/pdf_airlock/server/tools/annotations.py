"""``pdf_annotations``: annotations and links of the selected pages (links are reported, never followed)."""

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
    PageSelector,
    SourceFields,
)
from pdf_airlock.server.tools.untrusted import (
    Bounded,
    Rect,
    UntrustedModel,
)

__all__ = ["TOOL"]


# -- what its job child may return ------------------------------------------------------------


class Annotation(UntrustedModel):
    page: int = Field(ge=1)
    subtype: Annotated[str, Field(max_length=64)] = Field(
        description="Link, Text, Widget, FileAttachment, ..."
    )
    rect: Rect | None = Field(max_length=4)
    contents: Annotated[str, Field(max_length=2000)] | None
    action: Annotated[str, Field(max_length=32)] = Field(
        description="goto, uri, launch, javascript, none, ..."
    )
    uri: Annotated[str, Field(max_length=2000)] | None
    target_page: int | None = Field(ge=1, description="1-based page an internal link points to.")
    hidden: bool = Field(description="Flagged Hidden or NoView: present but not shown to a reader.")


class PdfAnnotationsUntrusted(UntrustedModel):
    annotations: list[Annotation] = Field(max_length=20_000)
    next_start: int | None = Field(ge=1)
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfAnnotationsInput(DocumentInput):
    pages: PageSelector | None = None
    max_items: int = Field(2000, ge=1, le=20_000)
    cursor: Cursor | None = None


class PdfAnnotationsOutput(SourceFields):
    annotations: list[Annotation]
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_annotations(
    runner: JobRunner, args: PdfAnnotationsInput, document: Document
) -> tuple[BaseModel, str]:
    job_args = {"password": password(args), "pages": args.pages, "max_items": args.max_items}
    output = await job_output(
        runner,
        "pdf_annotations",
        job_args,
        document,
        untrusted=PdfAnnotationsUntrusted,
        output_model=PdfAnnotationsOutput,
        paged=(args.cursor, selection_key(pages=args.pages)),
    )
    lines = [f"{output.source}: {len(output.annotations)} annotation(s)"]
    for note in output.annotations:
        target = note.uri or (f"page {note.target_page}" if note.target_page else note.action)
        hidden = " [hidden]" if note.hidden else ""
        text = f" {note.contents!r}" if note.contents else ""
        lines.append(f"page {note.page}: {note.subtype} -> {target}{text}{hidden}")
    return output, text_with_warnings(lines + more(output.cursor), output.warnings)


TOOL = ToolSpec(
    name="pdf_annotations",
    title="PDF annotations and links",
    description=(
        "Annotations of the selected pages: subtype, rect, contents, hidden; links' URI, target page "
        "or action (never followed)."
    ),
    input_model=PdfAnnotationsInput,
    output_model=PdfAnnotationsOutput,
    run=pdf_annotations,
    category="structure",
    rank=6,
    paged=Paged("annotations"),
)
