"""``pdf_security``: an inventory of active content and hiding places, to triage a document before
trusting it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.tools.base import (
    JobRunner,
    ToolSpec,
    job_output,
    password,
    text_with_warnings,
)
from pdf_airlock.server.tools.models import (
    DocumentInput,
    SourceFields,
)
from pdf_airlock.server.tools.untrusted import (
    Bounded,
    HiddenReason,
    UntrustedModel,
)

__all__ = ["TOOL"]


# -- what its job child may return ------------------------------------------------------------


class ActionLocation(UntrustedModel):
    where: Annotated[str, Field(max_length=300)]
    action: Annotated[str, Field(max_length=64)]
    detail: Annotated[str, Field(max_length=400)]


class Signature(UntrustedModel):
    field: Annotated[str, Field(max_length=200)]
    filter: Annotated[str, Field(max_length=64)]
    covers_whole_file: bool | None = Field(description="False: bytes were added after signing.")


class HiddenTextRun(UntrustedModel):
    page: int = Field(ge=1)
    box: list[float] = Field(min_length=4, max_length=4)
    reason: HiddenReason
    preview: Annotated[str, Field(max_length=200)]
    instruction: bool = Field(description="Reads as instructions to a model.")


class HiddenText(UntrustedModel):
    pages_scanned: int = Field(ge=0)
    runs: int = Field(ge=0, description="Text runs a person would not see (left out by the text tools).")
    by_reason: dict[HiddenReason, int] = Field(max_length=16)
    instructions: int = Field(ge=0)
    items: list[HiddenTextRun] = Field(max_length=200)


class SecurityEncryption(UntrustedModel):
    revision: int
    key_bits: int
    method: Annotated[str, Field(max_length=64)]


class PdfSecurityUntrusted(UntrustedModel):
    risk: Literal["low", "medium", "high"]
    reasons: list[Bounded] = Field(max_length=100)
    actions: dict[Annotated[str, Field(max_length=64)], int] = Field(max_length=100)
    locations: list[ActionLocation] = Field(max_length=200)
    xfa: bool
    rich_media: int = Field(ge=0)
    embedded_files: int = Field(ge=0)
    encryption: SecurityEncryption | None
    incremental_updates: int = Field(ge=0)
    signatures: list[Signature] = Field(max_length=200)
    hidden_text: HiddenText
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfSecurityInput(DocumentInput):
    pass


class PdfSecurityOutput(SourceFields):
    risk: Literal["low", "medium", "high"] = Field(
        description="high: JavaScript, Launch, submit/import, rich media, XFA, hidden instructions; "
        "medium: links out, attachments, hidden text, partial signature"
    )
    reasons: list[str]
    actions: dict[str, int] = Field(description="count per action type")
    locations: list[ActionLocation]
    xfa: bool
    rich_media: int
    embedded_files: int
    encryption: SecurityEncryption | None
    incremental_updates: int
    signatures: list[Signature]
    hidden_text: HiddenText
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_security(
    runner: JobRunner, args: PdfSecurityInput, document: Document
) -> tuple[BaseModel, str]:
    job_args = {"password": password(args)}
    output = await job_output(
        runner,
        "pdf_security",
        job_args,
        document,
        untrusted=PdfSecurityUntrusted,
        output_model=PdfSecurityOutput,
    )
    reasons = f" ({'; '.join(output.reasons)})" if output.reasons else ""
    lines = [f"{output.source}: risk {output.risk}{reasons}"]
    for loc in output.locations:
        lines.append(f"- {loc.action} at {loc.where}" + (f": {loc.detail}" if loc.detail else ""))
    hidden = output.hidden_text
    by_reason = ", ".join(f"{count} {reason}" for reason, count in hidden.by_reason.items())
    lines.append(
        f"hidden text: {hidden.runs} run(s) a person would not see{f' ({by_reason})' if by_reason else ''}, "
        f"{hidden.instructions} reading as instructions to a model ({hidden.pages_scanned} page(s) scanned)"
    )
    for run in hidden.items:
        box = ", ".join(f"{value:g}" for value in run.box)
        flag = " [instructions]" if run.instruction else ""
        lines.append(f"- page {run.page} [{box}] {run.reason}{flag}: {run.preview!r}")
    lines.append(
        f"embedded files {output.embedded_files}, XFA {output.xfa}, rich media {output.rich_media}, "
        f"incremental updates {output.incremental_updates}, signatures {len(output.signatures)}"
    )
    return output, text_with_warnings(lines, output.warnings)


TOOL = ToolSpec(
    name="pdf_security",
    title="PDF active-content inventory",
    description=(
        "Triage a PDF before trusting it: JavaScript and other actions, rich media, XFA, "
        "attachments, encryption, incremental updates, signatures, every text run a person would "
        "not see (page, box, reason, preview; hidden instructions: high). Nothing runs."
    ),
    input_model=PdfSecurityInput,
    output_model=PdfSecurityOutput,
    run=pdf_security,
    category="security",
    rank=8,
    triage=True,
)
