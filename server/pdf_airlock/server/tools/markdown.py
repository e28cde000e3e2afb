"""``pdf_markdown``: the selected pages as GitHub-flavoured Markdown that keeps the document's
structure (headings with levels, paragraphs, lists, tables, images, reading order across
columns, no running headers or page numbers), with its page offsets and RAG chunks.

The job child returns each page's Markdown and the headings in it; the supervisor joins the
pages, finds every heading at a line start in the joined text (a job that names a heading that
is not there has broken its contract: ``crashed``), computes the page offsets, and cuts the
chunks (``pdf_airlock.server.tools.chunks``). Offsets are computed here, after the text's
hygiene, so they always index the Markdown as published.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.tools.base import (
    Delivery,
    JobRunner,
    Paged,
    Position,
    ToolSpec,
    password,
    position_of,
    published,
)
from pdf_airlock.server.tools.chunks import Span, chunk_markdown
from pdf_airlock.server.tools.cursors import selection_key
from pdf_airlock.server.tools.models import (
    DEFAULT_ANSWER_CHARS,
    DEFAULT_MAX_CHARS,
    MAX_CHARS_CEILING,
    Cursor,
    DeliveryInput,
    OcrInput,
    PageSelector,
    SourceFields,
)
from pdf_airlock.server.tools.untrusted import (
    MAX_PAGES_IN_ANSWER,
    Bounded,
    Confidence,
    Hidden,
    HiddenRun,
    Label,
    OcrLanguages,
    OcrRotation,
    TextSource,
    UntrustedModel,
)
from pdf_airlock.worker.contract import MARKDOWN_MAX_LEVEL, MARKDOWN_PAGE_SEPARATOR

__all__ = ["TOOL"]

MAX_LEVEL = MARKDOWN_MAX_LEVEL
PAGE_SEPARATOR = MARKDOWN_PAGE_SEPARATOR


# -- what its job child may return ------------------------------------------------------------


class HeadingRef(UntrustedModel):
    level: int = Field(ge=1, le=MAX_LEVEL)
    text: Bounded


class MarkdownPage(UntrustedModel):
    page: int = Field(ge=1)
    label: Label
    text: str
    offset: int = Field(ge=0)
    complete: bool
    headings: list[HeadingRef] = Field(max_length=10_000)
    text_source: TextSource = "text_layer"
    ocr_confidence: Confidence | None = None
    hidden: Hidden = Field(default_factory=list)
    ocr_languages: OcrLanguages | None = None
    ocr_rotation: OcrRotation | None = None


class MarkdownPosition(UntrustedModel):
    index: int = Field(ge=0)
    offset: int = Field(ge=0)
    h1: int = Field(ge=0)
    h2: int = Field(ge=0)
    h3: int = Field(ge=0)
    h4: int = Field(ge=0)


class PdfMarkdownUntrusted(UntrustedModel):
    page_count: int = Field(ge=0)
    selected_pages: int = Field(ge=0)
    context: list[HeadingRef] = Field(max_length=MAX_LEVEL)
    pages: list[MarkdownPage] = Field(max_length=MAX_PAGES_IN_ANSWER)
    next: MarkdownPosition | None
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfMarkdownInput(OcrInput, DeliveryInput):
    pages: PageSelector | None = None
    max_chars: int = Field(DEFAULT_MAX_CHARS, ge=1, le=MAX_CHARS_CEILING)
    chunk_chars: int = Field(1500, ge=200, le=20_000, description="largest RAG chunk")
    cursor: Cursor | None = None


class PageSpan(BaseModel):
    page: int
    label: str
    start: int = Field(description="Offset in markdown where this page's part starts.")
    end: int
    offset: int = Field(description="Offset in the page's own Markdown where this part starts.")
    complete: bool
    text_source: TextSource = "text_layer"
    ocr_confidence: int | None = None
    hidden: list[HiddenRun] = Field(default_factory=list)
    ocr_languages: list[str] | None = None
    ocr_rotation: int | None = None


class Heading(BaseModel):
    offset: int
    level: int
    text: str


class Chunk(BaseModel):
    text: str
    heading_path: list[str]
    first_page: int
    last_page: int
    start: int
    end: int


class PdfMarkdownOutput(SourceFields):
    page_count: int
    selected_pages: int
    markdown: str
    pages: list[PageSpan]
    headings: list[Heading]
    chunks: list[Chunk]
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


def _assemble(result: PdfMarkdownUntrusted) -> tuple[str, list[PageSpan], list[Heading]]:
    """The joined Markdown, each page's span in it and each heading's offset."""
    parts: list[str] = []
    spans: list[PageSpan] = []
    headings: list[Heading] = []
    length = 0
    for page in result.pages:
        separator = PAGE_SEPARATOR if parts else ""
        start = length + len(separator)
        parts.append(separator + page.text)
        length = start + len(page.text)
        spans.append(
            PageSpan(
                page=page.page,
                label=page.label,
                start=start,
                end=length,
                offset=page.offset,
                complete=page.complete,
                text_source=page.text_source,
                ocr_confidence=page.ocr_confidence,
                hidden=page.hidden,
                ocr_languages=page.ocr_languages,
                ocr_rotation=page.ocr_rotation,
            )
        )
        at = 0
        for heading in page.headings:
            line = f"{'#' * heading.level} {heading.text}"
            found = _line_start(page.text, line, at)
            if found < 0:
                raise ToolError("crashed", "the job child listed a heading that is not in its Markdown")
            headings.append(Heading(offset=start + found, level=heading.level, text=heading.text))
            at = found + len(line)
    return "".join(parts), spans, headings


def _line_start(text: str, line: str, start: int) -> int:
    """Where ``line`` stands as a whole line of ``text`` at or after ``start``; -1 if nowhere."""
    at = start
    while (at := text.find(line, at)) >= 0:
        before_ok = at == 0 or text[at - 1] == "\n"
        after = at + len(line)
        if before_ok and (after == len(text) or text[after] == "\n"):
            return at
        at += 1
    return -1


def _chunks(
    markdown: str, spans: list[PageSpan], headings: list[Heading], context: list[HeadingRef], limit: int
) -> list[Chunk]:
    found = chunk_markdown(
        markdown,
        [Span(span.start, span.end, span.page) for span in spans],
        {heading.offset: (heading.level, heading.text) for heading in headings},
        [(ref.level, ref.text) for ref in context],
        limit,
    )
    return [
        Chunk(
            text=markdown[chunk.start : chunk.end],
            heading_path=list(chunk.heading_path),
            first_page=chunk.first_page,
            last_page=chunk.last_page,
            start=chunk.start,
            end=chunk.end,
        )
        for chunk in found
    ]


async def pdf_markdown(
    runner: JobRunner, args: PdfMarkdownInput, document: Document
) -> tuple[BaseModel, str]:
    key = selection_key(pages=args.pages, **args.ocr_job_args())
    position = position_of(args.cursor, document, "pdf_markdown", key)
    job_args = {
        "pages": args.pages,
        "password": password(args),
        "max_chars": args.max_chars,
        "start_index": position.get("index", 0),
        "start_offset": position.get("offset", 0),
        **{f"h{level}": position.get(f"h{level}", 0) for level in range(1, MAX_LEVEL + 1)},
        "include_hidden": args.include_hidden,
        **args.ocr_job_args(),
    }
    result, warnings = await runner.run_job("pdf_markdown", job_args, document, PdfMarkdownUntrusted)
    markdown, spans, headings = _assemble(result)
    output = published(
        PdfMarkdownOutput,
        result,
        warnings,
        document,
        position=Position("next", "pdf_markdown", key, position),
        markdown=markdown,
        pages=spans,
        headings=headings,
        chunks=_chunks(markdown, spans, headings, result.context, args.chunk_chars),
    )
    text = [markdown]
    if output.cursor:
        text.append(f"\n\n<!-- more: call again with the same arguments and cursor={output.cursor} -->")
    text += [f"\n<!-- warning: {warning} -->" for warning in output.warnings]
    return output, "".join(text)


def _join_parts(whole: dict[str, Any], part: dict[str, Any], pages: list[Any], more: list[Any]) -> list[Any]:
    """The next part's Markdown after this one's (a page cut at the part's end goes on without a
    separator), its offsets moved along, its headings and chunks appended."""
    cut = bool(pages and more) and not pages[-1]["complete"] and more[0]["page"] == pages[-1]["page"]
    separator = "" if cut or not whole["markdown"] else PAGE_SEPARATOR
    base = len(whole["markdown"]) + len(separator)
    whole["markdown"] += separator + part["markdown"]
    moved = [page | {"start": page["start"] + base, "end": page["end"] + base} for page in more]
    whole["headings"] += [heading | {"offset": heading["offset"] + base} for heading in part["headings"]]
    whole["chunks"] += [
        chunk | {"start": chunk["start"] + base, "end": chunk["end"] + base} for chunk in part["chunks"]
    ]
    if cut:
        pages[-1] = pages[-1] | {"end": moved[0]["end"], "complete": moved[0]["complete"]}
        moved = moved[1:]
    return moved


DELIVERY = Delivery(
    whole={"max_chars": MAX_CHARS_CEILING},
    mime_type="text/markdown",
    text=lambda structured: str(structured["markdown"]),
    pages=lambda structured: len({page["page"] for page in structured["pages"]}),
    answer_chars=DEFAULT_ANSWER_CHARS,
    headings=lambda structured: [(h["level"], h["text"]) for h in structured["headings"]],
)


TOOL = ToolSpec(
    name="pdf_markdown",
    title="PDF as structured Markdown",
    description=(
        "Markdown of the selected pages: headings with levels, paragraphs, lists, tables, image "
        "placeholders, reading order across columns; running headers, footers, page numbers "
        "removed. structuredContent: page offsets, headings, RAG chunks (chunk_chars) with heading paths."
    ),
    input_model=PdfMarkdownInput,
    output_model=PdfMarkdownOutput,
    run=pdf_markdown,
    category="text",
    rank=2,
    paged=Paged("pages", join_edge=_join_parts),
    delivery=DELIVERY,
    batch_arguments={"max_chars": MAX_CHARS_CEILING},  # a whole document a part
)
