"""``pdf_info``: document-level facts (version, encryption, metadata and XMP, features, repairs)
and a summary of each selected page, continued by cursor.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.tools import security
from pdf_airlock.server.tools.base import (
    JobRunner,
    Paged,
    Position,
    ToolSpec,
    learn_page_count,
    password,
    published,
    start_of,
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
    Label,
    UntrustedModel,
)

__all__ = ["TOOL"]


# -- what its job child may return ------------------------------------------------------------


class EncryptionInfo(UntrustedModel):
    revision: int = Field(ge=0, le=100)
    version: int = Field(ge=0, le=100)
    key_bits: int = Field(ge=0, le=4096)
    method: Bounded


class PageInfo(UntrustedModel):
    page: int = Field(ge=1)
    label: Label = Field(description="The page label a viewer shows ('iv', 'A-1'); the number if none.")
    width_pt: float = Field(ge=0)
    height_pt: float = Field(ge=0)
    rotation: int
    has_text: bool
    chars: int = Field(ge=0, description="Characters in the page's text layer.")
    tokens_estimate: int = Field(ge=0, description="About chars / 4: a rough LLM token count of the text.")
    scanned: bool = Field(
        description="Looks scanned: almost no text layer and images cover at least half the page (needs OCR)."
    )


class MetadataConflict(UntrustedModel):
    field: Annotated[str, Field(max_length=32)]
    info: Bounded
    xmp: Bounded


class Features(UntrustedModel):
    tagged: bool = Field(description="Tagged PDF (/MarkInfo /Marked): has a logical structure tree.")
    linearized: bool = Field(description="Linearized ('fast web view').")
    has_forms: bool
    has_xfa: bool
    has_attachments: bool
    has_javascript: bool = Field(
        description=f"Document-level JavaScript; see {security.TOOL.name} for all of it."
    )
    has_outline: bool
    has_page_labels: bool


class RepairReport(UntrustedModel):
    xref_rebuilt: bool = Field(
        description="qpdf had to reconstruct the cross-reference table (damaged file)."
    )
    warning_count: int = Field(ge=0)
    warnings: list[Annotated[str, Field(max_length=300)]] = Field(max_length=20)


class PdfInfoUntrusted(UntrustedModel):
    page_count: int = Field(ge=0)
    pdf_version: Annotated[str, Field(max_length=16)]
    encrypted: bool
    encryption: EncryptionInfo | None
    producer: Bounded | None
    metadata: dict[Annotated[str, Field(max_length=128)], Bounded] = Field(max_length=64)
    xmp: dict[Annotated[str, Field(max_length=128)], Bounded] | None = Field(max_length=64)
    metadata_conflicts: list[MetadataConflict] = Field(max_length=16)
    features: Features | None
    repair: RepairReport | None
    tokens_estimate: int = Field(ge=0)
    scanned_pages: int = Field(ge=0)
    pages: list[PageInfo] = Field(max_length=1000)
    next_start: int | None = Field(ge=0)
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfInfoInput(DocumentInput):
    pages: PageSelector | None = None
    cursor: Cursor | None = None


class PdfInfoOutput(SourceFields):
    page_count: int
    pdf_version: str
    encrypted: bool
    encryption: EncryptionInfo | None
    producer: str | None
    metadata: dict[str, str]
    xmp: dict[str, str] | None
    metadata_conflicts: list[MetadataConflict]
    features: Features | None
    repair: RepairReport | None
    tokens_estimate: int
    scanned_pages: int
    pages: list[PageInfo]
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_info(runner: JobRunner, args: PdfInfoInput, document: Document) -> tuple[BaseModel, str]:
    key = selection_key(pages=args.pages)
    start = start_of(args.cursor, document, "pdf_info", key)
    job_args = {"pages": args.pages, "password": password(args), "start": start}
    result, warnings = await runner.run_job("pdf_info", job_args, document, PdfInfoUntrusted)
    learn_page_count(runner, document, result.page_count)
    position = Position("next_start", "pdf_info", key, {"start": start})
    output = published(PdfInfoOutput, result, warnings, document, position=position)
    return output, _info_text(output)


def _info_text(info: PdfInfoOutput) -> str:
    lines = [
        f"{info.source}: {info.page_count} page(s), PDF {info.pdf_version}, "
        f"{'encrypted' if info.encrypted else 'not encrypted'}, sha256 {info.sha256}",
    ]
    lines += [f"{key}: {value}" for key, value in info.metadata.items()]
    if info.xmp:
        lines.append(f"XMP: {len(info.xmp)} properties")
    lines += [
        f"metadata conflict: {c.field} is {c.info!r} in Info but {c.xmp!r} in XMP"
        for c in info.metadata_conflicts
    ]
    if info.features:
        present = [name for name, value in info.features.model_dump().items() if value]
        lines.append(f"features: {', '.join(present) or 'none'}")
    if info.repair and info.repair.warning_count:
        rebuilt = ", cross-reference table rebuilt" if info.repair.xref_rebuilt else ""
        lines.append(f"repaired: {info.repair.warning_count} qpdf warning(s){rebuilt}")
    lines.append(f"about {info.tokens_estimate} tokens of text in the pages below")
    for page in info.pages:
        text = f"{page.chars} chars" if page.has_text else "no text layer"
        scanned = ", looks scanned" if page.scanned else ""
        label = f" ({page.label})" if page.label != str(page.page) else ""
        lines.append(
            f"page {page.page}{label}: {page.width_pt} x {page.height_pt} pt, rotation {page.rotation}, "
            f"{text}{scanned}"
        )
    if info.cursor:
        lines.append(f"(more pages: call again with cursor={info.cursor})")
    lines += [f"warning: {warning}" for warning in info.warnings]
    return "\n".join(lines)


TOOL = ToolSpec(
    name="pdf_info",
    title="PDF document info",
    description=(
        "Page count, version, encryption, metadata, features, repairs; per page: size (pt), "
        "rotation, label, chars, token estimate, scanned."
    ),
    input_model=PdfInfoInput,
    output_model=PdfInfoOutput,
    run=pdf_info,
    category="structure",
    rank=0,
    paged=Paged("pages", summed=("tokens_estimate", "scanned_pages")),
    triage=True,
)
