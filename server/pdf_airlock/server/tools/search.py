"""``pdf_search``: literal or regular-expression search over page text, with boxes and context,
continued by cursor.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.tools.base import (
    JobRunner,
    Paged,
    Position,
    ToolSpec,
    learn_page_count,
    password,
    published,
    text_with_warnings,
)
from pdf_airlock.server.tools.cursors import decode_cursor, selection_key
from pdf_airlock.server.tools.models import (
    Cursor,
    OcrInput,
    PageSelector,
    SourceFields,
)
from pdf_airlock.server.tools.untrusted import (
    Bounded,
    HiddenReason,
    Label,
    TextSource,
    UntrustedModel,
)

__all__ = ["TOOL"]


# -- what its job child may return ------------------------------------------------------------


class SearchHit(UntrustedModel):
    page: int = Field(ge=1)
    label: Label
    text: Annotated[str, Field(max_length=1000)] = Field(description="The matched text (first 1000 chars).")
    offset: int = Field(ge=0, description="Character offset of the match in the page's text.")
    before: Annotated[str, Field(max_length=1000)]
    after: Annotated[str, Field(max_length=1000)]
    rects: list[Annotated[list[float], Field(min_length=4, max_length=4)]] = Field(
        max_length=16,
        description="Boxes [left, bottom, right, top] in PDF points (origin bottom-left), one per line.",
    )
    text_source: TextSource = "text_layer"
    hidden: HiddenReason | None = None


class SearchPosition(UntrustedModel):
    index: int = Field(ge=0)
    skip: int = Field(ge=0)


class PdfSearchUntrusted(UntrustedModel):
    page_count: int = Field(ge=0)
    selected_pages: int = Field(ge=0)
    pages_searched: int = Field(ge=0)
    hits: list[SearchHit] = Field(max_length=1000)
    next: SearchPosition | None
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfSearchInput(OcrInput):
    query: str = Field(min_length=1, max_length=1000)
    regex: bool = False
    case_sensitive: bool = False
    whole_word: bool = False
    pages: PageSelector | None = None
    context_chars: int = Field(80, ge=0, le=1000)
    max_results: int = Field(100, ge=1, le=1000)
    time_budget_ms: int = Field(2000, ge=10, le=30_000)
    cursor: Cursor | None = None


class PdfSearchOutput(SourceFields):
    page_count: int
    selected_pages: int
    pages_searched: int
    hits: list[SearchHit]
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_search(runner: JobRunner, args: PdfSearchInput, document: Document) -> tuple[BaseModel, str]:
    options = args.model_dump(
        include={
            "query",
            "regex",
            "case_sensitive",
            "whole_word",
            "pages",
            "ocr",
            "ocr_languages",
            "include_hidden",
        }
    )
    key = selection_key(**options)
    position = {"index": 0, "skip": 0}
    if args.cursor:
        position = decode_cursor(args.cursor, document.sha256, "pdf_search", key)
    job_args = options | {
        "password": password(args),
        "context_chars": args.context_chars,
        "max_results": args.max_results,
        "time_budget_ms": args.time_budget_ms,
        "start_index": position.get("index", 0),
        "skip": position.get("skip", 0),
    }
    result, warnings = await runner.run_job("pdf_search", job_args, document, PdfSearchUntrusted)
    learn_page_count(runner, document, result.page_count)
    output = published(
        PdfSearchOutput, result, warnings, document, position=Position("next", "pdf_search", key, position)
    )
    lines = [f"{output.source}: {len(output.hits)} hit(s) for {args.query!r}"]
    for hit in output.hits:
        label = f" ({hit.label})" if hit.label != str(hit.page) else ""
        hidden = f" [hidden: {hit.hidden}]" if hit.hidden else ""
        lines.append(f"page {hit.page}{label}{hidden}: ...{hit.before}[{hit.text}]{hit.after}...")
    if output.cursor:
        lines.append(f"(more hits: call again with the same arguments and cursor={output.cursor})")
    return output, text_with_warnings(lines, output.warnings)


def _count_shared_page_once(
    whole: dict[str, Any], part: dict[str, Any], hits: list[Any], more: list[Any]
) -> list[Any]:
    """The part before stopped inside the page of this part's first hit, so both parts searched
    it: count it once."""
    if hits and more and hits[-1]["page"] == more[0]["page"]:
        whole["pages_searched"] -= 1
    return more


TOOL = ToolSpec(
    name="pdf_search",
    title="Search PDF text",
    description=(
        "Find text or a Python regex on the selected pages: per hit page, label, text, context, "
        "rects [left, bottom, right, top] in PDF points. Words hyphenated across line breaks "
        "and ligatures (ﬁ, ﬂ) match as plain letters."
    ),
    input_model=PdfSearchInput,
    output_model=PdfSearchOutput,
    run=pdf_search,
    category="text",
    rank=9,
    paged=Paged("hits", summed=("pages_searched",), join_edge=_count_shared_page_once),
    example={"query": "the"},
)
