"""``pdf_images``: the images of the selected pages (also inside forms), and one of them as a PNG
on request.
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
    Paged,
    Position,
    ToolSpec,
    password,
    png_block,
    published,
    start_of,
    text_with_warnings,
)
from pdf_airlock.server.tools.cursors import selection_key
from pdf_airlock.server.tools.models import (
    MAX_PIXELS_CEILING,
    Cursor,
    DocumentInput,
    PageSelector,
    PngImage,
    SourceFields,
    StrictInput,
)
from pdf_airlock.server.tools.untrusted import (
    MAX_PNG_BASE64,
    Bounded,
    Label,
    UntrustedModel,
)

__all__ = ["TOOL"]


# -- what its job child may return ------------------------------------------------------------


class ImageInfo(UntrustedModel):
    page: int = Field(ge=1)
    label: Label
    name: Annotated[str, Field(max_length=600)] = Field(description="Resource name; 'Fm0/Im1' inside a form.")
    object: Annotated[str, Field(max_length=32)] | None = Field(description="Object number, e.g. '12 0'.")
    width: int | None = Field(ge=0)
    height: int | None = Field(ge=0)
    bits_per_component: int | None = Field(ge=0)
    color_space: Annotated[str, Field(max_length=64)] | None
    filters: list[Annotated[str, Field(max_length=64)]] = Field(max_length=8)
    image_mask: bool
    has_soft_mask: bool
    stream_bytes: int | None = Field(ge=0, description="Encoded size as declared by /Length.")


class ExtractedImage(UntrustedModel):
    page: int = Field(ge=1)
    name: Annotated[str, Field(max_length=600)]
    width_px: int = Field(ge=1)
    height_px: int = Field(ge=1)
    png_base64: Annotated[str, Field(max_length=MAX_PNG_BASE64)]


class PdfImagesUntrusted(UntrustedModel):
    page_count: int = Field(ge=0)
    selected_pages: int = Field(ge=0)
    images: list[ImageInfo] = Field(max_length=5000)
    extracted: ExtractedImage | None
    next_start: int | None = Field(ge=0)
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class ImageRef(StrictInput):
    page: int = Field(ge=1)
    name: str = Field(min_length=1, max_length=600)


class PdfImagesInput(DocumentInput):
    pages: PageSelector | None = None
    max_items: int = Field(500, ge=1, le=5000)
    extract: ImageRef | None = None
    max_pixels: int = Field(4_000_000, ge=1, le=MAX_PIXELS_CEILING, description="largest to extract")
    cursor: Cursor | None = None


class ExtractedImageInfo(PngImage):
    page: int
    name: str


class PdfImagesOutput(SourceFields):
    page_count: int
    selected_pages: int
    images: list[ImageInfo]
    extracted: ExtractedImageInfo | None
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_images(
    runner: JobRunner, args: PdfImagesInput, document: Document
) -> tuple[BaseModel, Content]:
    key = selection_key(pages=args.pages)
    start = start_of(args.cursor, document, "pdf_images", key)
    job_args = {
        "password": password(args),
        "pages": args.pages,
        "max_items": args.max_items,
        "max_pixels": args.max_pixels,
        "extract": args.extract.model_dump() if args.extract else None,
        "start": start,
    }
    result, warnings = await runner.run_job("pdf_images", job_args, document, PdfImagesUntrusted)
    extracted = None
    blocks: Content = []
    if result.extracted is not None:
        item = result.extracted
        png, digest = checked_png(item.png_base64, item.width_px, item.height_px, args.max_pixels)
        extracted = ExtractedImageInfo(
            page=item.page,
            name=item.name,
            width_px=item.width_px,
            height_px=item.height_px,
            png_bytes=len(png),
            png_sha256=digest,
        )
        blocks.append(png_block(png))
    output = published(
        PdfImagesOutput,
        result,
        warnings,
        document,
        position=Position("next_start", "pdf_images", key, {"start": start}),
        extracted=extracted,
    )
    lines = [f"{output.source}: {len(output.images)} image(s) on {output.selected_pages} page(s)"]
    for image in output.images:
        filters = "+".join(image.filters) or "raw"
        lines.append(
            f"page {image.page} {image.name}: {image.width} x {image.height}, {image.color_space}, "
            f"{image.bits_per_component} bpc, {filters}"
        )
    if extracted is not None:
        lines.append(f"extracted page {extracted.page} {extracted.name}: PNG in the next content block")
    if output.cursor:
        lines.append(f"(more images: call again with the same arguments and cursor={output.cursor})")
    return output, [types.TextContent(type="text", text=text_with_warnings(lines, output.warnings)), *blocks]


TOOL = ToolSpec(
    name="pdf_images",
    title="PDF images",
    description=(
        "Images on the selected pages, also inside forms: size, colour space, bits, filters, masks; "
        "extract returns one as a PNG image block."
    ),
    input_model=PdfImagesInput,
    output_model=PdfImagesOutput,
    run=pdf_images,
    category="render",
    rank=11,
    paged=Paged("images"),
)
