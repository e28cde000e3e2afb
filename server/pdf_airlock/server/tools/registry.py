"""The MCP tools: their schemas, annotations, and the plain functions that implement them.

Every tool reads one document in a job child and returns ``(structured result, text)``. Tool
functions are independent of MCP framing so they can be tested and called directly (the CLI's
``call`` command uses them through ``pdf_airlock.server.calls.App``).
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp_types as types
from pydantic import BaseModel

from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.policy.paths import Document
from pdf_airlock.server.policy.png import checked_png
from pdf_airlock.server.tools.cursors import decode_cursor, encode_cursor, selection_key
from pdf_airlock.server.tools.models import (
    READ_ENGINES,
    DocumentInput,
    ExtractedImageInfo,
    PdfAnnotationsInput,
    PdfAnnotationsOutput,
    PdfAttachmentsInput,
    PdfAttachmentsOutput,
    PdfFormsInput,
    PdfFormsOutput,
    PdfImagesInput,
    PdfImagesOutput,
    PdfInfoInput,
    PdfInfoOutput,
    PdfOutlineInput,
    PdfOutlineOutput,
    PdfReadInput,
    PdfReadOutput,
    PdfRenderInput,
    PdfRenderOutput,
    PdfSearchInput,
    PdfSearchOutput,
    PdfSecurityInput,
    PdfSecurityOutput,
    PngImage,
    output_schema,
)
from pdf_airlock.server.tools.read_split import split_read
from pdf_airlock.server.tools.read_two_ended import two_ended_read
from pdf_airlock.server.tools.runner import JobRunner
from pdf_airlock.server.tools.schema import drop_titles
from pdf_airlock.server.tools.untrusted import (
    PdfAnnotationsUntrusted,
    PdfAttachmentsUntrusted,
    PdfFormsUntrusted,
    PdfImagesUntrusted,
    PdfInfoUntrusted,
    PdfOutlineUntrusted,
    PdfReadUntrusted,
    PdfRenderUntrusted,
    PdfSearchUntrusted,
    PdfSecurityUntrusted,
)

__all__ = ["CATEGORIES", "TOOLS", "JobRunner", "ToolSpec"]

Content = list[types.TextContent | types.ImageContent]
# A tool returns its structured result and either its text fallback or all its content blocks.
ToolFn = Callable[[JobRunner, Any, Document], Awaitable[tuple[BaseModel, str | Content]]]


CATEGORIES = ("text", "structure", "security", "render")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input_model: type[DocumentInput]
    output_model: type[BaseModel]
    run: ToolFn
    category: str

    def to_mcp(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=drop_titles(self.input_model.model_json_schema()),
            output_schema=output_schema(self.output_model),
            annotations=types.ToolAnnotations(
                title=self.title, read_only_hint=True, open_world_hint=False, idempotent_hint=True
            ),
            _meta={"io.pdf-airlock/category": self.category},
        )


def _password(args: DocumentInput) -> str | None:
    return args.password.get_secret_value() if args.password is not None else None


def _source(document: Document) -> dict[str, Any]:
    return {"source": document.display, "sha256": document.sha256, "size_bytes": document.size}


OutputT = TypeVar("OutputT", bound=BaseModel)


def _start(token: str | None, document: Document, tool: str, key: str) -> int:
    """The item index a ``{"start": n}`` cursor continues from (0 without a cursor)."""
    return decode_cursor(token, document.sha256, tool, key)["start"] if token else 0


@dataclass(frozen=True, slots=True)
class _Position:
    """Where a paged job's answer goes on from: the result's position field (made into
    ``cursor``), the cursor's tool and selection key, and the position the call started from."""

    field: str
    tool: str
    key: str
    start: dict[str, int]


def _advances(start: dict[str, int], state: dict[str, int]) -> bool:
    """A position past ``start``, compared field by field in the result's order: every answer
    with a cursor covers at least one item or character, so a child's position that does not
    move on would send a client that follows cursors round for ever."""
    return tuple(state.values()) > tuple(start.get(name, 0) for name in state)


def _published(
    output_model: type[OutputT],
    result: Any,
    warnings: list[str],
    document: Document,
    *,
    position: _Position | None = None,
    **replaced: Any,
) -> OutputT:
    """A job's published output: its validated result plus the source fields. ``position`` turns
    the result's position field into ``cursor`` (null when the job finished); keyword arguments
    replace result fields."""
    fields = result.model_dump(exclude={"warnings", *replaced})
    if position is not None:
        state = fields.pop(position.field)
        state = {"start": state} if isinstance(state, int) else state
        if state is not None and not _advances(position.start, state):
            raise ToolError("crashed", "the job child returned a position that does not go past the call's")
        fields["cursor"] = (
            encode_cursor(document.sha256, position.tool, position.key, state) if state is not None else None
        )
    return output_model(**_source(document), **fields, **replaced, warnings=[*result.warnings, *warnings])


def _learn_page_count(runner: JobRunner, document: Document, page_count: int) -> None:
    """A ``pdf_read`` of the whole document selects ``page_count`` pages: PDFium's count, which
    this tool's child reported as a read's forward child would (``pdf_airlock.server.tools.page_counts``). A
    read
    after ``pdf_info``, ``pdf_search`` or ``pdf_render`` then starts both its children at once."""
    for engine in READ_ENGINES:
        runner.selections.put((document.sha256, engine, None), page_count)


async def pdf_info(runner: JobRunner, args: PdfInfoInput, document: Document) -> tuple[BaseModel, str]:
    key = selection_key(pages=args.pages)
    start = _start(args.cursor, document, "pdf_info", key)
    job_args = {"pages": args.pages, "password": _password(args), "start": start}
    result, warnings = await runner.run_job("pdf_info", job_args, document, PdfInfoUntrusted)
    _learn_page_count(runner, document, result.page_count)
    position = _Position("next_start", "pdf_info", key, {"start": start})
    output = _published(PdfInfoOutput, result, warnings, document, position=position)
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


async def pdf_read(runner: JobRunner, args: PdfReadInput, document: Document) -> tuple[BaseModel, str]:
    key = selection_key(pages=args.pages, engine=args.engine)
    position = {"index": 0, "offset": 0}
    if args.cursor:
        position = decode_cursor(args.cursor, document.sha256, "pdf_read", key)
    job_args = {
        "pages": args.pages,
        "password": _password(args),
        "engine": args.engine,
        "max_chars": args.max_chars,
        "start_index": position.get("index", 0),
        "start_offset": position.get("offset", 0),
    }
    split = await split_read(runner, job_args, document)
    if split is None:
        split = await two_ended_read(runner, job_args, document)
    if split is None:
        result, warnings = await runner.run_job("pdf_read", job_args, document, PdfReadUntrusted)
    else:
        result, warnings = split
    output = _published(
        PdfReadOutput, result, warnings, document, position=_Position("next", "pdf_read", key, position)
    )
    return output, _read_text(output)


def _read_text(read: PdfReadOutput) -> str:
    parts = []
    for page in read.pages:
        suffix = "" if page.complete else " (continues)"
        prefix = f" (from character {page.offset})" if page.offset else ""
        parts.append(f"--- page {page.page}{prefix}{suffix} ---\n{page.text}")
    if read.cursor:
        parts.append(f"--- more text: call again with the same arguments and cursor={read.cursor} ---")
    parts += [f"warning: {warning}" for warning in read.warnings]
    return "\n".join(parts)


async def _job_output(
    runner: JobRunner,
    kind: str,
    job_args: dict[str, Any],
    document: Document,
    *,
    untrusted: type[BaseModel],
    output_model: type[OutputT],
    paged: tuple[str | None, str] | None = None,
) -> OutputT:
    """Run a job and publish its result. ``paged`` = (the call's cursor, its selection key) for a
    job listing items from ``start`` that returns ``next_start``."""
    position = None
    if paged is not None:
        start = _start(paged[0], document, kind, paged[1])
        job_args = job_args | {"start": start}
        position = _Position("next_start", kind, paged[1], {"start": start})
    result, warnings = await runner.run_job(kind, job_args, document, untrusted)
    return _published(output_model, result, warnings, document, position=position)


def _more(cursor: str | None) -> list[str]:
    return [f"(more: call again with the same arguments and cursor={cursor})"] if cursor else []


def _text(lines: list[str], warnings: list[str]) -> str:
    return "\n".join([*lines, *(f"warning: {warning}" for warning in warnings)])


async def pdf_outline(runner: JobRunner, args: PdfOutlineInput, document: Document) -> tuple[BaseModel, str]:
    job_args = {"password": _password(args), "max_depth": args.max_depth, "max_items": args.max_items}
    output = await _job_output(
        runner,
        "pdf_outline",
        job_args,
        document,
        untrusted=PdfOutlineUntrusted,
        output_model=PdfOutlineOutput,
        paged=(args.cursor, selection_key(max_depth=args.max_depth)),
    )
    lines = [f"{output.source}: {len(output.items)} outline item(s)" + (" (cut)" if output.truncated else "")]
    for item in output.items:
        where = f"page {item.page}" + (
            f" ({item.label})" if item.label and item.label != str(item.page) else ""
        )
        target = where if item.page else item.action
        lines.append(f"{'  ' * (item.level - 1)}- {item.title} -> {target}")
    return output, _text(lines + _more(output.cursor), output.warnings)


async def pdf_attachments(
    runner: JobRunner, args: PdfAttachmentsInput, document: Document
) -> tuple[BaseModel, str]:
    job_args = {
        "password": _password(args),
        "extract": args.extract,
        "max_bytes": args.max_bytes,
        "max_items": args.max_items,
    }
    output = await _job_output(
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
    return output, _text(lines + _more(output.cursor), output.warnings)


async def pdf_annotations(
    runner: JobRunner, args: PdfAnnotationsInput, document: Document
) -> tuple[BaseModel, str]:
    job_args = {"password": _password(args), "pages": args.pages, "max_items": args.max_items}
    output = await _job_output(
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
    return output, _text(lines + _more(output.cursor), output.warnings)


async def pdf_forms(runner: JobRunner, args: PdfFormsInput, document: Document) -> tuple[BaseModel, str]:
    job_args = {"password": _password(args), "max_items": args.max_items}
    output = await _job_output(
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
    return output, _text(lines + _more(output.cursor), output.warnings)


async def pdf_security(
    runner: JobRunner, args: PdfSecurityInput, document: Document
) -> tuple[BaseModel, str]:
    job_args = {"password": _password(args)}
    output = await _job_output(
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
    lines.append(
        f"hidden text: {hidden.invisible_render_mode} invisible, {hidden.white_fill} white, "
        f"{hidden.off_page} off-page ({hidden.pages_scanned} page(s) scanned)"
    )
    lines.append(
        f"embedded files {output.embedded_files}, XFA {output.xfa}, rich media {output.rich_media}, "
        f"incremental updates {output.incremental_updates}, signatures {len(output.signatures)}"
    )
    return output, _text(lines, output.warnings)


async def pdf_search(runner: JobRunner, args: PdfSearchInput, document: Document) -> tuple[BaseModel, str]:
    options = args.model_dump(include={"query", "regex", "case_sensitive", "whole_word", "pages"})
    key = selection_key(**options)
    position = {"index": 0, "skip": 0}
    if args.cursor:
        position = decode_cursor(args.cursor, document.sha256, "pdf_search", key)
    job_args = options | {
        "password": _password(args),
        "context_chars": args.context_chars,
        "max_results": args.max_results,
        "time_budget_ms": args.time_budget_ms,
        "start_index": position.get("index", 0),
        "skip": position.get("skip", 0),
    }
    result, warnings = await runner.run_job("pdf_search", job_args, document, PdfSearchUntrusted)
    _learn_page_count(runner, document, result.page_count)
    output = _published(
        PdfSearchOutput, result, warnings, document, position=_Position("next", "pdf_search", key, position)
    )
    lines = [f"{output.source}: {len(output.hits)} hit(s) for {args.query!r}"]
    for hit in output.hits:
        label = f" ({hit.label})" if hit.label != str(hit.page) else ""
        lines.append(f"page {hit.page}{label}: ...{hit.before}[{hit.text}]{hit.after}...")
    if output.cursor:
        lines.append(f"(more hits: call again with the same arguments and cursor={output.cursor})")
    return output, _text(lines, output.warnings)


def _png_block(png: bytes) -> types.ImageContent:
    return types.ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png")


async def pdf_render(
    runner: JobRunner, args: PdfRenderInput, document: Document
) -> tuple[BaseModel, Content]:
    job_args = {
        "password": _password(args),
        "page": args.page,
        "dpi": args.dpi,
        "max_pixels": args.max_pixels,
    }
    result, warnings = await runner.run_job("pdf_render", job_args, document, PdfRenderUntrusted)
    _learn_page_count(runner, document, result.page_count)
    png, digest = checked_png(result.png_base64, result.width_px, result.height_px, args.max_pixels)
    output = PdfRenderOutput(
        **_source(document),
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
    return output, [types.TextContent(type="text", text=_text(lines, output.warnings)), _png_block(png)]


async def pdf_images(
    runner: JobRunner, args: PdfImagesInput, document: Document
) -> tuple[BaseModel, Content]:
    key = selection_key(pages=args.pages)
    start = _start(args.cursor, document, "pdf_images", key)
    job_args = {
        "password": _password(args),
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
        blocks.append(_png_block(png))
    output = _published(
        PdfImagesOutput,
        result,
        warnings,
        document,
        position=_Position("next_start", "pdf_images", key, {"start": start}),
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
    return output, [types.TextContent(type="text", text=_text(lines, output.warnings)), *blocks]


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
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
        ),
        ToolSpec(
            name="pdf_read",
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
        ),
        ToolSpec(
            name="pdf_outline",
            title="PDF bookmarks",
            description="Bookmarks in reading order: title, level, target page and label, action.",
            input_model=PdfOutlineInput,
            output_model=PdfOutlineOutput,
            run=pdf_outline,
            category="structure",
        ),
        ToolSpec(
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
        ),
        ToolSpec(
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
        ),
        ToolSpec(
            name="pdf_forms",
            title="PDF form fields",
            description=(
                "AcroForm fields (name, type, value, options, flags, page, rect) and whether XFA is present."
            ),
            input_model=PdfFormsInput,
            output_model=PdfFormsOutput,
            run=pdf_forms,
            category="structure",
        ),
        ToolSpec(
            name="pdf_security",
            title="PDF active-content inventory",
            description=(
                "Triage a PDF before trusting it: JavaScript and other actions, rich media, XFA, "
                "attachments, encryption, incremental updates, signatures, hidden text (invisible, "
                "white, off-page: a prompt-injection signal). Nothing runs."
            ),
            input_model=PdfSecurityInput,
            output_model=PdfSecurityOutput,
            run=pdf_security,
            category="security",
        ),
        ToolSpec(
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
        ),
        ToolSpec(
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
        ),
        ToolSpec(
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
        ),
    )
}
