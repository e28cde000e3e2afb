"""The MCP tools: their schemas, annotations, and the plain functions that implement them.

Every tool reads one document in a job child and returns ``(structured result, text)``. Tool
functions are independent of MCP framing so they can be tested and called directly (the CLI's
``call`` command uses them through ``server.app.App``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import mcp_types as types
from pydantic import BaseModel

from server.cursor import decode_cursor, encode_cursor, selection_key
from server.models import (
    DocumentInput,
    PdfAnnotationsInput,
    PdfAnnotationsOutput,
    PdfAnnotationsUntrusted,
    PdfAttachmentsInput,
    PdfAttachmentsOutput,
    PdfAttachmentsUntrusted,
    PdfFormsInput,
    PdfFormsOutput,
    PdfFormsUntrusted,
    PdfInfoInput,
    PdfInfoOutput,
    PdfInfoUntrusted,
    PdfOutlineInput,
    PdfOutlineOutput,
    PdfOutlineUntrusted,
    PdfReadInput,
    PdfReadOutput,
    PdfReadUntrusted,
    PdfSecurityInput,
    PdfSecurityOutput,
    PdfSecurityUntrusted,
    output_schema,
)
from server.paths import Document
from server.runner import JobRunner
from server.split import split_read

__all__ = ["CATEGORIES", "TOOLS", "JobRunner", "ToolSpec"]

ToolFn = Callable[[JobRunner, Any, Document], Awaitable[tuple[BaseModel, str]]]


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
            input_schema=self.input_model.model_json_schema(),
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


async def pdf_info(runner: JobRunner, args: PdfInfoInput, document: Document) -> tuple[BaseModel, str]:
    key = selection_key(pages=args.pages)
    start = decode_cursor(args.cursor, document.sha256, "pdf_info", key)["start"] if args.cursor else 0
    job_args = {"pages": args.pages, "password": _password(args), "start": start}
    result, warnings = await runner.run_job("pdf_info", job_args, document, PdfInfoUntrusted)
    cursor = None
    if result.next_start is not None:
        cursor = encode_cursor(document.sha256, "pdf_info", key, {"start": result.next_start})
    output = PdfInfoOutput(
        **_source(document),
        **result.model_dump(exclude={"next_start", "warnings"}),
        cursor=cursor,
        warnings=result.warnings + warnings,
    )
    return output, _info_text(output)


def _info_text(info: PdfInfoOutput) -> str:
    lines = [
        f"{info.source}: {info.page_count} page(s), PDF {info.pdf_version}, "
        f"{'encrypted' if info.encrypted else 'not encrypted'}, sha256 {info.sha256}",
    ]
    lines += [f"{key}: {value}" for key, value in info.metadata.items()]
    for page in info.pages:
        text = "text layer" if page.has_text else "no text layer"
        lines.append(
            f"page {page.page}: {page.width_pt} x {page.height_pt} pt, rotation {page.rotation}, {text}"
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
        result, warnings = await runner.run_job("pdf_read", job_args, document, PdfReadUntrusted)
    else:
        result, warnings = split
    cursor = None
    if result.next is not None:
        cursor = encode_cursor(document.sha256, "pdf_read", key, result.next.model_dump())
    output = PdfReadOutput(
        **_source(document),
        **result.model_dump(exclude={"next", "warnings"}),
        cursor=cursor,
        warnings=result.warnings + warnings,
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


OutputT = TypeVar("OutputT", bound=BaseModel)


async def _job_output(
    runner: JobRunner,
    kind: str,
    job_args: dict[str, Any],
    document: Document,
    *,
    untrusted: type[BaseModel],
    output_model: type[OutputT],
) -> OutputT:
    """Run a job whose published output is its validated result plus the source fields."""
    result, warnings = await runner.run_job(kind, job_args, document, untrusted)
    fields = result.model_dump(exclude={"warnings"})
    return output_model(**_source(document), **fields, warnings=[*getattr(result, "warnings", []), *warnings])


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
    )
    lines = [f"{output.source}: {len(output.items)} outline item(s)" + (" (cut)" if output.truncated else "")]
    for item in output.items:
        where = f"page {item.page}" + (
            f" ({item.label})" if item.label and item.label != str(item.page) else ""
        )
        target = where if item.page else item.action
        lines.append(f"{'  ' * (item.level - 1)}- {item.title} -> {target}")
    return output, _text(lines, output.warnings)


async def pdf_attachments(
    runner: JobRunner, args: PdfAttachmentsInput, document: Document
) -> tuple[BaseModel, str]:
    job_args = {"password": _password(args), "extract": args.extract, "max_bytes": args.max_bytes}
    output = await _job_output(
        runner,
        "pdf_attachments",
        job_args,
        document,
        untrusted=PdfAttachmentsUntrusted,
        output_model=PdfAttachmentsOutput,
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
    return output, _text(lines, output.warnings)


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
    )
    lines = [f"{output.source}: {len(output.annotations)} annotation(s)"]
    for note in output.annotations:
        target = note.uri or (f"page {note.target_page}" if note.target_page else note.action)
        hidden = " [hidden]" if note.hidden else ""
        text = f" {note.contents!r}" if note.contents else ""
        lines.append(f"page {note.page}: {note.subtype} -> {target}{text}{hidden}")
    return output, _text(lines, output.warnings)


async def pdf_forms(runner: JobRunner, args: PdfFormsInput, document: Document) -> tuple[BaseModel, str]:
    job_args = {"password": _password(args), "max_items": args.max_items}
    output = await _job_output(
        runner, "pdf_forms", job_args, document, untrusted=PdfFormsUntrusted, output_model=PdfFormsOutput
    )
    lines = [f"{output.source}: {len(output.fields)} form field(s)" + (", XFA present" if output.xfa else "")]
    for field in output.fields:
        where = f" (page {field.page})" if field.page else ""
        lines.append(f"{field.name} [{field.type}]{where} = {field.value!r}")
    return output, _text(lines, output.warnings)


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


TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            name="pdf_info",
            title="PDF document info",
            description=(
                "Page count, PDF version, encryption, Info metadata, producer, and per-page size, "
                "rotation and whether the page has a text layer. Parsed in a sandbox."
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
                "Text of the selected pages ('1-3,7'), page by page. At most max_chars characters per "
                "answer; a cursor continues where the answer stopped. engine='layout' follows reading "
                "order across columns (slower). Parsed in a sandbox."
            ),
            input_model=PdfReadInput,
            output_model=PdfReadOutput,
            run=pdf_read,
            category="text",
        ),
        ToolSpec(
            name="pdf_outline",
            title="PDF bookmarks",
            description=(
                "The outline (bookmarks) in reading order with nesting level, target page and page "
                "label; depth and size capped. Parsed in a sandbox."
            ),
            input_model=PdfOutlineInput,
            output_model=PdfOutlineOutput,
            run=pdf_outline,
            category="structure",
        ),
        ToolSpec(
            name="pdf_attachments",
            title="PDF attachments",
            description=(
                "Embedded files: stored and safe names, size, MIME type, sha256, dates, a flag for "
                "names that climb directories; with 'extract', one file's bytes as base64 (never "
                "parsed). Parsed in a sandbox."
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
                "Annotations of the selected pages: type, rectangle, contents, hidden flag, and for "
                "links the URI, the internal target page or the action kind (never followed). "
                "Parsed in a sandbox."
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
                "AcroForm fields: full name, type, value, options, flags, page and rectangle, and "
                "whether XFA is present. Parsed in a sandbox."
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
                "Triage before trusting a document: JavaScript and actions (open, page, annotation, "
                "field, name tree), Launch/URI/SubmitForm/ImportData, rich media, XFA, embedded "
                "files, encryption, incremental updates, signatures and their coverage, and text a "
                "reader would not see (invisible, white, off-page: a prompt-injection signal), with "
                "a risk summary. Nothing is executed. Parsed in a sandbox."
            ),
            input_model=PdfSecurityInput,
            output_model=PdfSecurityOutput,
            run=pdf_security,
            category="security",
        ),
    )
}
