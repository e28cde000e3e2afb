"""What every tool module builds on: the tool's declaration (``ToolSpec``) and the steps every
tool takes from a job's validated result to its published answer.

A tool module (``pdf_airlock.server.tools.<name>``) declares ``TOOL = ToolSpec(...)``: its name,
title and description, its argument and result models, the coroutine that runs it, its
category and rank in ``tools/list``, for a tool that answers in parts how ``batch`` joins the
parts (``Paged``), and every other fact about it that some table would otherwise keep by hand:
the OAuth scope it needs, whether the approvals ask before it runs, ``batch``'s defaults for its
calls, and example arguments for the docs and the tests. ``pdf_airlock.server.tools.registry``
finds every such module; everything that lists tools derives its list from there.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, TypeVar

import mcp_types as types
from pydantic import BaseModel

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.child_output import LineFn, ProgressFn
from pdf_airlock.server.tools.cursors import decode_cursor, encode_cursor
from pdf_airlock.server.tools.models import READ_ENGINES, DocumentInput, output_schema
from pdf_airlock.server.tools.page_counts import SelectionMemo
from pdf_airlock.server.tools.schema import drop_titles

__all__ = [
    "CATEGORIES",
    "RESULT_SIZE_META",
    "Content",
    "Delivery",
    "JobRunner",
    "Paged",
    "Position",
    "ToolFn",
    "ToolSpec",
    "hidden_lines",
    "job_output",
    "learn_page_count",
    "more",
    "password",
    "png_block",
    "position_of",
    "published",
    "source",
    "start_of",
    "text_with_warnings",
]

ModelT = TypeVar("ModelT", bound=BaseModel)


class JobRunner(Protocol):
    """What a tool needs from the server: run a job kind on an open document (implemented by
    ``pdf_airlock.server.app.calls.App``; a Protocol, so tool code is typed without importing it).
    The pool decides when a job runs; a tool only says whether a job is optional."""

    max_result_bytes: int
    selections: (
        SelectionMemo  # what earlier reads' selections came to (``pdf_airlock.server.tools.page_counts``)
    )

    def progress(self) -> ProgressFn | None:
        """The current call's progress callback, if the client asked for progress."""

    def start_detached(self, fn: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """Run ``fn`` beside the current call, free to outlive its answer (a two-ended read's
        cancelled children unwind after the answer has gone out). ``fn`` must not raise."""

    async def slots_free(self, jobs: int) -> bool:
        """Whether ``jobs`` jobs started now would each get a worker slot at once."""

    def room_for_optional(self, jobs: int = 1, *, last_spare: bool = False) -> bool:
        """Whether ``jobs`` optional jobs (they only speed the call up) may start now; the pool
        decides (``pdf_airlock.server.pool.pool.Pool.room_for_optional``)."""

    async def run_job(
        self,
        kind: str,
        args: dict[str, Any],
        document: Document,
        model: type[ModelT],
        *,
        report: bool = True,
        on_line: LineFn | None = None,
    ) -> tuple[ModelT, list[str]]:
        """Run ``kind`` in a sandboxed job child; returns the validated result and warnings.
        ``on_line`` receives the child's ``selection``/``page`` lines (untrusted bytes) as they
        arrive, before the envelope."""


# The interface a tool needs from the server (``pdf_airlock.server.app.calls.App`` implements it).
Content = list[types.TextContent | types.ImageContent]
# A tool returns its structured result and either its text fallback or all its content blocks.
ToolFn = Callable[[JobRunner, Any, Document], Awaitable[tuple[BaseModel, str | Content]]]
# Joins the edge of two parts: (whole result so far, the next part, the whole's items, the next
# part's items) -> the next part's items still to append.
EdgeJoin = Callable[[dict[str, Any], dict[str, Any], list[Any], list[Any]], list[Any]]

CATEGORIES: Final = ("text", "structure", "security", "render")
# A tool's ``_meta`` key for how large its default answer may be, in characters: clients that read
# it (Claude Code) keep answers up to that size in the conversation instead of cutting them.
RESULT_SIZE_META: Final = "anthropic/maxResultSizeChars"
CATEGORY_META: Final = "io.pdf-airlock/category"


def _no_headings(_structured: dict[str, Any]) -> list[tuple[int, str]]:
    return []


@dataclass(frozen=True, slots=True)
class Delivery:
    """How a tool's whole answer becomes a resource (``deliver: "resource"``,
    ``pdf_airlock.server.app.delivery``): the arguments that make its answer as large as it goes
    (``whole``), the resource's MIME type, its text from the structured result, how many pages
    it covers, its headings (level, text), and the size of a default inline answer (published
    as the ``RESULT_SIZE_META`` hint)."""

    whole: Mapping[str, Any]
    mime_type: str
    text: Callable[[dict[str, Any]], str]
    pages: Callable[[dict[str, Any]], int]
    answer_chars: int
    headings: Callable[[dict[str, Any]], list[tuple[int, str]]] = field(default=_no_headings)


@dataclass(frozen=True, slots=True)
class Paged:
    """How one tool's parts join into a whole result (``pdf_airlock.server.batch.whole``): its
    paged list, the counts that cover one part only, the flags any part may raise, the other
    lists each part adds to, and what to do where two parts meet."""

    items: str
    summed: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    join_edge: EdgeJoin | None = None
    appended: tuple[str, ...] = ()


def _no_arguments() -> Mapping[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One MCP tool. ``rank`` orders ``tools/list`` (the tools an agent starts with come first);
    ``paged`` is None for a tool that always answers whole.

    The rest is what the layers above read from here instead of keeping a table: ``scope``, the
    OAuth scope a call needs beside the read scope (``pdf_airlock.server.http.guards``);
    ``triage``, a tool for looking at a risky document before trusting it, which the high-risk
    approval never asks about (``pdf_airlock.server.app.approvals``); ``extract_approval``, an
    ``extract`` hands an embedded file out, which the attachment approval asks about;
    ``batch_arguments``, what ``batch`` adds to every call unless given
    (``pdf_airlock.server.batch.run``); ``example``, arguments beside the document that make a
    meaningful call (the tests' calls of every tool take its required arguments from here)."""

    name: str
    title: str
    description: str
    input_model: type[DocumentInput]
    output_model: type[BaseModel]
    run: ToolFn
    category: str
    rank: int
    paged: Paged | None = None
    delivery: Delivery | None = None
    scope: str | None = None
    triage: bool = False
    extract_approval: bool = False
    batch_arguments: Mapping[str, Any] = field(default_factory=_no_arguments)
    example: Mapping[str, Any] = field(default_factory=_no_arguments)

    def to_mcp(self) -> types.Tool:
        meta: dict[str, Any] = {CATEGORY_META: self.category}
        if self.delivery is not None:
            meta[RESULT_SIZE_META] = self.delivery.answer_chars
        return types.Tool(
            name=self.name,
            title=self.title,
            description=self.description,
            input_schema=drop_titles(self.input_model.model_json_schema()),
            output_schema=output_schema(self.output_model),
            annotations=types.ToolAnnotations(
                title=self.title, read_only_hint=True, open_world_hint=False, idempotent_hint=True
            ),
            _meta=meta,
        )


def password(args: DocumentInput) -> str | None:
    return args.password.get_secret_value() if args.password is not None else None


def source(document: Document) -> dict[str, Any]:
    return {"source": document.display, "sha256": document.sha256, "size_bytes": document.size}


OutputT = TypeVar("OutputT", bound=BaseModel)


def position_of(token: str | None, document: Document, tool: str, key: str) -> dict[str, int]:
    """The position a cursor continues from: its decoded state, or ``{"index": 0, "offset": 0}``
    (the start of a text selection) without a cursor."""
    return decode_cursor(token, document.sha256, tool, key) if token else {"index": 0, "offset": 0}


def start_of(token: str | None, document: Document, tool: str, key: str) -> int:
    """The item index a ``{"start": n}`` cursor continues from (0 without a cursor)."""
    return decode_cursor(token, document.sha256, tool, key)["start"] if token else 0


@dataclass(frozen=True, slots=True)
class Position:
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


def published(
    output_model: type[OutputT],
    result: Any,
    warnings: list[str],
    document: Document,
    *,
    position: Position | None = None,
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
    return output_model(**source(document), **fields, **replaced, warnings=[*result.warnings, *warnings])


def learn_page_count(runner: JobRunner, document: Document, page_count: int) -> None:
    """A read of the whole document (``tools.read``) selects ``page_count`` pages: PDFium's count,
    which this tool's child reported as a read's forward child would (``tools.page_counts``). A
    read after such a tool then starts both its children at once."""
    for engine in READ_ENGINES:
        runner.selections.put((document.sha256, engine, None), page_count)


async def job_output(
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
        start = start_of(paged[0], document, kind, paged[1])
        job_args = job_args | {"start": start}
        position = Position("next_start", kind, paged[1], {"start": start})
    result, warnings = await runner.run_job(kind, job_args, document, untrusted)
    return published(output_model, result, warnings, document, position=position)


def more(cursor: str | None) -> list[str]:
    return [f"(more: call again with the same arguments and cursor={cursor})"] if cursor else []


def text_with_warnings(lines: list[str], warnings: list[str]) -> str:
    return "\n".join([*lines, *(f"warning: {warning}" for warning in warnings)])


def hidden_lines(page: int, runs: list[Any]) -> list[str]:
    """The text fallback of a page's hidden runs (``include_hidden``): a delimited block of its
    own, one run a line with its reason, never mixed into the page's text."""
    if not runs:
        return []
    return [
        f"--- hidden text on page {page}: a person would not see it (include_hidden) ---",
        *(f"[{run.reason}] {run.text}" for run in runs),
        f"--- end of hidden text on page {page} ---",
    ]


def png_block(png: bytes) -> types.ImageContent:
    return types.ImageContent(type="image", data=base64.b64encode(png).decode("ascii"), mime_type="image/png")
