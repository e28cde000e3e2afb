"""``pdf_attachments``: embedded files listed with their names, sizes, types and hashes; one
returned as base64 on request (never parsed).
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


class Attachment(UntrustedModel):
    name: Annotated[str, Field(max_length=1000)] = Field(description="The name as stored in the PDF.")
    safe_name: Annotated[str, Field(max_length=255)] = Field(description="A base name safe to save under.")
    path_traversal: bool = Field(description="The stored name climbs directories ('..') or is absolute.")
    size: int = Field(ge=0)
    mime_type: Annotated[str, Field(max_length=128)] | None
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    created: Annotated[str, Field(max_length=64)] | None
    modified: Annotated[str, Field(max_length=64)] | None
    description: Annotated[str, Field(max_length=1000)] | None


class ExtractedFile(UntrustedModel):
    name: Annotated[str, Field(max_length=1000)]
    data_base64: str


class PdfAttachmentsUntrusted(UntrustedModel):
    attachments: list[Attachment] = Field(max_length=1000)
    extracted: ExtractedFile | None
    next_start: int | None = Field(ge=1)
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfAttachmentsInput(DocumentInput):
    extract: str | None = Field(None, max_length=1000, description="name of one to return")
    max_bytes: int = Field(10 * 1024 * 1024, ge=1, le=10 * 1024 * 1024, description="largest to extract")
    max_items: int = Field(1000, ge=1, le=1000)
    cursor: Cursor | None = None


class PdfAttachmentsOutput(SourceFields):
    attachments: list[Attachment]
    extracted: ExtractedFile | None
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_attachments(
    runner: JobRunner, args: PdfAttachmentsInput, document: Document
) -> tuple[BaseModel, str]:
    job_args = {
        "password": password(args),
        "extract": args.extract,
        "max_bytes": args.max_bytes,
        "max_items": args.max_items,
    }
    output = await job_output(
        runner,
        "pdf_attachments",
        job_args,
        document,
        untrusted=PdfAttachmentsUntrusted,
        output_model=PdfAttachmentsOutput,
        paged=(args.cursor, selection_key()),
    )
    lines = [f"{output.source}: {len(output.attachments)} attachment(s)"]
    for item in output.attachments:
        flag = " [name climbs directories]" if item.path_traversal else ""
        kind = item.mime_type or "unknown type"
        lines.append(f"- {item.name!r} ({item.size} bytes, {kind}, sha256 {item.sha256}){flag}")
    if output.extracted:
        lines.append(
            f"extracted {output.extracted.name!r}: base64 in structuredContent.extracted.data_base64"
        )
    return output, text_with_warnings(lines + more(output.cursor), output.warnings)


TOOL = ToolSpec(
    name="pdf_attachments",
    title="PDF attachments",
    description=(
        "Embedded files: names, size, MIME type, sha256, dates, path_traversal flag; extract returns "
        "one as base64 (never parsed)."
    ),
    input_model=PdfAttachmentsInput,
    output_model=PdfAttachmentsOutput,
    run=pdf_attachments,
    category="security",
    rank=5,
    paged=Paged("attachments"),
    scope="pdf:attachments",  # embedded files leave the document
    triage=True,
    extract_approval=True,
)
