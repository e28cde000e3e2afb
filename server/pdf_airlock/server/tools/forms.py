"""``pdf_forms``: AcroForm fields with their names, labels, types, values and places, and the data
of an XFA form.
"""

from __future__ import annotations

from typing import Annotated, Literal

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
    Rect,
    UntrustedModel,
)

__all__ = ["TOOL"]


# -- what its job child may return ------------------------------------------------------------


class FormField(UntrustedModel):
    name: Annotated[str, Field(max_length=2000)] = Field(
        description="Fully qualified name, e.g. 'customer.name'."
    )
    label: Annotated[str, Field(max_length=500)] | None = Field(description="Its user-facing label (/TU).")
    type: Literal["text", "button", "choice", "signature", "unknown"]
    export_values: list[Annotated[str, Field(max_length=200)]] = Field(
        max_length=100, description="A check box's or radio button's on-state values."
    )
    value: Bounded | Annotated[list[Annotated[str, Field(max_length=1000)]], Field(max_length=500)] | None
    options: list[Annotated[str, Field(max_length=500)]] = Field(max_length=500)
    flags: int
    page: int | None = Field(ge=1)
    rect: Rect | None = Field(max_length=4)


class XfaField(UntrustedModel):
    name: Annotated[str, Field(max_length=500)]
    value: Annotated[str, Field(max_length=4000)]


class PdfFormsUntrusted(UntrustedModel):
    fields: list[FormField] = Field(max_length=20_000)
    xfa: bool
    xfa_fields: list[XfaField] = Field(max_length=2000)
    next_start: int | None = Field(ge=1)
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfFormsInput(DocumentInput):
    max_items: int = Field(2000, ge=1, le=20_000)
    cursor: Cursor | None = None


class PdfFormsOutput(SourceFields):
    fields: list[FormField]
    xfa: bool
    xfa_fields: list[XfaField] = Field(description="An XFA form's data: dotted names and values.")
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_forms(runner: JobRunner, args: PdfFormsInput, document: Document) -> tuple[BaseModel, str]:
    job_args = {"password": password(args), "max_items": args.max_items}
    output = await job_output(
        runner,
        "pdf_forms",
        job_args,
        document,
        untrusted=PdfFormsUntrusted,
        output_model=PdfFormsOutput,
        paged=(args.cursor, selection_key()),
    )
    lines = [f"{output.source}: {len(output.fields)} form field(s)" + (", XFA present" if output.xfa else "")]
    for field in output.fields:
        where = f" (page {field.page})" if field.page else ""
        label = f" ({field.label!r})" if field.label else ""
        on = f" on={'/'.join(field.export_values)}" if field.export_values else ""
        lines.append(f"{field.name}{label} [{field.type}{on}]{where} = {field.value!r}")
    lines += [f"XFA {field.name} = {field.value!r}" for field in output.xfa_fields]
    return output, text_with_warnings(lines + more(output.cursor), output.warnings)


TOOL = ToolSpec(
    name="pdf_forms",
    title="PDF form fields",
    description=(
        "AcroForm fields (name, type, value, options, flags, page, rect) and whether XFA is present."
    ),
    input_model=PdfFormsInput,
    output_model=PdfFormsOutput,
    run=pdf_forms,
    category="structure",
    rank=7,
    paged=Paged("fields"),
)
