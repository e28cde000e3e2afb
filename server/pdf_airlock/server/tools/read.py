"""``pdf_read``: the text of the selected pages, bounded by ``max_chars``, continued by cursor.

A long read is done by two job children at once, one from each end of the selection
(``pdf_airlock.server.tools.read_two_ended``); a short one by a single child.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from pydantic import BaseModel, Field

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.tools.base import (
    Delivery,
    JobRunner,
    Paged,
    Position,
    ToolSpec,
    hidden_lines,
    password,
    position_of,
    published,
)
from pdf_airlock.server.tools.cursors import selection_key
from pdf_airlock.server.tools.models import (
    DEFAULT_ANSWER_CHARS,
    DEFAULT_MAX_CHARS,
    MAX_CHARS_CEILING,
    Cursor,
    DeliveryInput,
    OcrInput,
    PageSelector,
    ReadEngine,
    SourceFields,
)
from pdf_airlock.server.tools.read_two_ended import two_ended_read
from pdf_airlock.server.tools.untrusted import (
    MAX_PAGES_IN_ANSWER,
    Bounded,
    Confidence,
    Hidden,
    HiddenRun,
    OcrLanguages,
    OcrRotation,
    TextLayer,
    TextSource,
    UntrustedModel,
)

__all__ = ["TOOL"]

KIND: Final = "pdf_read"  # the tool and its job


# -- what its job child may return ------------------------------------------------------------


class PageText(UntrustedModel):
    page: int = Field(ge=1)
    text: str
    offset: int = Field(ge=0, description="Character offset in the page where this text starts.")
    complete: bool = Field(description="False when the page continues in the next answer (see cursor).")
    text_layer: TextLayer = Field(
        description="ok; none (no text: a scan? see warnings); unusable (glyph codes without Unicode)."
    )
    text_source: TextSource
    ocr_confidence: Confidence | None = Field(description="OCR's mean word confidence, 0-100.")
    hidden: Hidden = Field(default_factory=list)
    ocr_languages: OcrLanguages | None = None
    ocr_rotation: OcrRotation | None = None


class ReadPosition(UntrustedModel):
    index: int = Field(ge=0)
    offset: int = Field(ge=0)


class PdfReadUntrusted(UntrustedModel):
    engine: Literal["fast", "layout"]
    page_count: int = Field(ge=0)
    selected_pages: int = Field(ge=0)
    pages: list[PageText] = Field(max_length=MAX_PAGES_IN_ANSWER)
    next: ReadPosition | None
    warnings: list[Bounded] = Field(max_length=100)


# -- arguments and result ----------------------------------------------------------------------


class PdfReadInput(OcrInput, DeliveryInput):
    pages: PageSelector | None = None
    engine: ReadEngine = "fast"
    max_chars: int = Field(DEFAULT_MAX_CHARS, ge=1, le=MAX_CHARS_CEILING)
    cursor: Cursor | None = None


class PdfReadOutput(SourceFields):
    engine: ReadEngine
    page_count: int
    selected_pages: int
    pages: list[PageText]
    cursor: str | None
    warnings: list[str]


# -- the call --------------------------------------------------------------------------------


async def pdf_read(runner: JobRunner, args: PdfReadInput, document: Document) -> tuple[BaseModel, str]:
    key = selection_key(pages=args.pages, engine=args.engine, **args.ocr_job_args())
    position = position_of(args.cursor, document, KIND, key)
    job_args = {
        "pages": args.pages,
        "password": password(args),
        "engine": args.engine,
        "max_chars": args.max_chars,
        "start_index": position.get("index", 0),
        "start_offset": position.get("offset", 0),
        "include_hidden": args.include_hidden,
        **args.ocr_job_args(),
    }
    split = await two_ended_read(runner, job_args, document, PdfReadUntrusted, KIND)
    if split is None:
        result, warnings = await runner.run_job(KIND, job_args, document, PdfReadUntrusted)
    else:
        result, warnings = split
    output = published(
        PdfReadOutput, result, warnings, document, position=Position("next", KIND, key, position)
    )
    return output, _read_text(output)


def _page_block(page: int, offset: int, complete: bool, text: str) -> str:
    suffix = "" if complete else " (continues)"
    prefix = f" (from character {offset})" if offset else ""
    return f"--- page {page}{prefix}{suffix} ---\n{text}"


def _read_text(read: PdfReadOutput) -> str:
    parts = []
    for page in read.pages:
        parts.append(_page_block(page.page, page.offset, page.complete, page.text))
        parts += hidden_lines(page.page, page.hidden)
    if read.cursor:
        parts.append(f"--- more text: call again with the same arguments and cursor={read.cursor} ---")
    parts += [f"warning: {warning}" for warning in read.warnings]
    return "\n".join(parts)


def _join_cut_page(
    whole: dict[str, Any], part: dict[str, Any], pages: list[Any], more: list[Any]
) -> list[Any]:
    """A page cut at one part's end continues at the next part's start: one page again."""
    if pages and more:
        last, first = pages[-1], more[0]
        cut = not last["complete"] and first["page"] == last["page"]
        if cut and first["offset"] == last["offset"] + len(last["text"]):
            pages[-1] = last | {"text": last["text"] + first["text"], "complete": first["complete"]}
            return more[1:]
    return more


def _resource_text(structured: dict[str, Any]) -> str:
    """A delivered read: the pages, each under its line."""
    parts = []
    for p in structured["pages"]:
        parts.append(_page_block(p["page"], p["offset"], p["complete"], p["text"]))
        parts += hidden_lines(p["page"], [HiddenRun.model_validate(run) for run in p.get("hidden") or ()])
    return "\n".join(parts)


DELIVERY = Delivery(
    whole={"max_chars": MAX_CHARS_CEILING},
    mime_type="text/plain",
    text=_resource_text,
    pages=lambda structured: len({page["page"] for page in structured["pages"]}),
    answer_chars=DEFAULT_ANSWER_CHARS,
)


TOOL = ToolSpec(
    name=KIND,
    title="Read PDF text",
    description=(
        "Text of the selected pages; engine layout follows reading order (slower). Both engines join "
        "words hyphenated across line breaks and write ligatures (ﬁ, ﬂ) as letters. Each page has "
        "text_layer ok/none/unusable; warnings say what to do."
    ),
    input_model=PdfReadInput,
    output_model=PdfReadOutput,
    run=pdf_read,
    category="text",
    rank=1,
    paged=Paged("pages", join_edge=_join_cut_page),
    delivery=DELIVERY,
    batch_arguments={"max_chars": MAX_CHARS_CEILING},  # a whole document a part
)
