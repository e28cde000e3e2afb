"""``pdf_render``: one page rendered to a PNG by PDFium, within a pixel budget, checked before it
is handed on.
"""

from __future__ import annotations

from typing import Annotated

import mcp_types as types
from pydantic import BaseModel, Field

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.boundary.png import checked_png
from pdf_airlock.server.tools.base import (
    Content,
    JobRunner,
    ToolSpec,
    learn_page_count,
    password,
    png_block,
    source,
    text_with_warnings,
)
from pdf_airlock.server.tools.models import (
    MAX_PIXELS_CEILING,
    DocumentInput,
    PageSelector,
    PngImage,
    SourceFields,
)
from pdf_airlock.server.tools.untrusted import (
    MAX_PNG_BASE64,
    Bounded,
    Label,
    UntrustedModel,
)

__all__ = ["TOOL"]


# -- what its job child may return ------------------------------------------------------------


class PdfRenderUntrusted(UntrustedModel):
    page: int = Field(ge=1)
    label: Label
    page_count: int = Field(ge=1)
    width_px: int = Field(ge=1)
    height_px: int = Field(ge=1)
    dpi: float = Field(gt=0)
    png_base64: Annotated[str, Field(max_length=MAX_PNG_BASE64)]
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfRenderInput(DocumentInput):
    page: PageSelector = Field("1", description="one page: number or label")
    dpi: int = Field(110, ge=18, le=600)
    max_pixels: int = Field(4_000_000, ge=10_000, le=MAX_PIXELS_CEILING, description="width x height")


class PdfRenderOutput(SourceFields):
    page: int
    label: str
    page_count: int
    dpi: float
    image: PngImage
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_render(
    runner: JobRunner, args: PdfRenderInput, document: Document
) -> tuple[BaseModel, Content]:
    job_args = {
        "password": password(args),
        "page": args.page,
        "dpi": args.dpi,
        "max_pixels": args.max_pixels,
    }
    result, warnings = await runner.run_job("pdf_render", job_args, document, PdfRenderUntrusted)
    learn_page_count(runner, document, result.page_count)
    png, digest = checked_png(result.png_base64, result.width_px, result.height_px, args.max_pixels)
    output = PdfRenderOutput(
        **source(document),
        page=result.page,
        label=result.label,
        page_count=result.page_count,
        dpi=result.dpi,
        image=PngImage(
            width_px=result.width_px, height_px=result.height_px, png_bytes=len(png), png_sha256=digest
        ),
        warnings=result.warnings + warnings,
    )
    label = f" ({output.label})" if output.label != str(output.page) else ""
    lines = [
        f"{output.source}: page {output.page}{label} of {output.page_count} as a "
        f"{result.width_px} x {result.height_px} PNG at {output.dpi:g} dpi ({len(png)} bytes)"
    ]
    return output, [
        types.TextContent(type="text", text=text_with_warnings(lines, output.warnings)),
        png_block(png),
    ]


TOOL = ToolSpec(
    name="pdf_render",
    title="Render a PDF page",
    description=(
        "One page as a PNG image block (scans, figures, unusable text); dpi is lowered, with a "
        "warning, to fit max_pixels."
    ),
    input_model=PdfRenderInput,
    output_model=PdfRenderOutput,
    run=pdf_render,
    category="render",
    rank=10,
)
