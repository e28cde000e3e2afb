"""Reading one document from both ends at once: the read tool's "two-ended" read.

The supervisor never parses a PDF, so it does not know the page count before a job tells it. Instead of asking
first (one more job), it runs two job children on the same arguments, each streaming every page it finishes as
a line on its result pipe before its envelope (``pdf_airlock.worker.progress``,
``pdf_airlock.worker.parsers.read``):

- the **forward** child is exactly the single-child read (``max_chars``, ``start_offset``, the
  cut page, ``next``). It is authoritative: if it fails before the answer is complete, the
  call fails with its error, as it would with one child.
- the **backward** child walks the same selection from its last position down to position 1,
  whole pages, ignoring ``max_chars``. It is started when the forward child's ``selection`` line says there
  are at least ``_MIN_BACKWARD_POSITIONS`` positions (a one-page document never pays for it), or at once when
  an earlier read of the same bytes and selection found that many (``pdf_airlock.server.tools.page_counts``;
  one that found fewer reads with the single child), and only if the pool has room for it
  (``Pool.room_for_optional``): a worker slot free at that
  moment (it never queues, so it never causes an ``overloaded``; with nothing queued at most ``workers - 1``
  run) and an idle spare that stays idle after it takes one; without room then, it is tried again as pages
  come in (the zygote refills its spares meanwhile). Its lines count only if its ``selection`` line agrees
  with the forward child's; if it fails, it is ignored. When, at the average page size so far, ``max_chars``
  will run out well below the last page, a child reading from the end is restarted (once) just past that
  point, so both children work on the answer's pages; a backward child whose pages would all be cut off is
  cancelled.

Pages are placed in position order from the start, from whichever child has them. As soon as
the prefix reaches the end of the selection or spends ``max_chars`` (the page that does not
fit is cut exactly as the child cuts it), the answer is built and both children are killed.
It is the single child's answer, byte for byte: the same pages, offsets, flags, ``next``
(hence cursor), counts, the warnings of the pages returned, the same text hygiene and its
"removed N characters" warning, and the same ``output_limit`` error when the single envelope
would be over ``max_result_bytes``. A forward child whose stream overflows the cap (its lines
take a few bytes more than one envelope) is re-run as a single child, so that edge answers as
before. Every line is untrusted: strict pydantic models, bounded ints, each child's positions in
order, pages within the page count, offsets and ``complete`` as the protocol allows.

Why the spare rule: each job takes one of the zygote's pre-forked spares, and the zygote refills at once when
none is left idle. With as many cores as workers (the default), the two refills' forks and warm-up parses then
run beside the two children and cost more than the second child saves (on 2 cores, without the rule, a
10-page read was slower two-ended than with one child). Hence the pool's default of ``spares = workers + 1``.
``python -m bench.perf.mcp_bench`` measures this path against in-process extraction (``docs/performance.md``).
Calls back to back may leave the zygote no time to refill: the backward child is then tried again as pages
come, and without room the forward child reads alone. At most two children read one
document: with more cores, more documents are read at once instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Generic, Literal, TypeVar

import anyio
import structlog
from pydantic import BaseModel, Field, ValidationError

from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.boundary.sanitize import clean_text, removal_warnings
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.child_output import ProgressFn
from pdf_airlock.server.tools.base import JobRunner
from pdf_airlock.server.tools.untrusted import (
    MAX_COUNT,
    MAX_OFFSET,
    Bounded,
    Confidence,
    Hidden,
    OcrLanguages,
    OcrRotation,
    TextLayer,
    TextSource,
    UntrustedModel,
)

__all__ = ["MIN_TWO_ENDED_BYTES", "two_ended_read"]


# -- the lines a streamed read writes before its envelope (untrusted) --------------------


class StreamedSelection(UntrustedModel):
    """A streamed read's first line (``pdf_airlock.server.tools.read_two_ended``)."""

    page_count: int = Field(ge=0, le=MAX_COUNT)
    selected_pages: int = Field(ge=0, le=MAX_COUNT)


class StreamedPage(UntrustedModel):
    """One page of a streamed read; ``position`` is its index after ``start_index``."""

    position: int = Field(ge=0, le=MAX_COUNT)
    page: int = Field(ge=1, le=MAX_COUNT)
    text: str
    offset: int = Field(ge=0, le=MAX_OFFSET)
    complete: bool
    text_layer: TextLayer
    text_source: TextSource
    ocr_confidence: Confidence | None
    hidden: Hidden = Field(default_factory=list)
    ocr_languages: OcrLanguages | None = None
    ocr_rotation: OcrRotation | None = None
    warnings: list[Bounded] = Field(max_length=100)


class StreamLine(UntrustedModel):
    """A line a streamed read writes before its envelope: one of the two."""

    selection: StreamedSelection | None = None
    page: StreamedPage | None = None


ReadT = TypeVar("ReadT", bound=BaseModel)
log = structlog.get_logger(__name__)

MIN_TWO_ENDED_BYTES: Final = 8 * 1024
_MAX_WARNINGS: Final = 100  # what the child keeps, and what the read's untrusted model admits
# The envelope's own fields (ok, engine, counts, next, brackets) next to its pages' lines.
_ENVELOPE_BYTES: Final = 512
# Fewer positions than this are read by the forward child alone: a second child would start,
# open the document and reach the one or two pages it could take about when the first does.
_MIN_BACKWARD_POSITIONS: Final = 3
# The backward child is cancelled when the forward one should spend max_chars this many pages
# before the two would meet (an estimate: page sizes vary); a restarted one starts this many
# pages past where max_chars should run out.
_USELESS_MARGIN_PAGES: Final = 2

Direction = Literal["forward", "backward"]


@dataclass(slots=True)
class _Stream:
    """What one child has streamed so far: its pages by position, each with its line's size."""

    direction: Direction
    top: int | None = None  # backward only: the highest position to read (default: the last)
    selection: StreamedSelection | None = None
    pages: dict[int, tuple[StreamedPage, int]] = field(default_factory=dict)
    chars: int = 0
    expected: int = 0  # the only position this child may send next
    rejected: bool = False  # broke the protocol: its later lines are ignored
    ended: bool = False
    error: ToolError | None = None
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    finished: anyio.Event = field(default_factory=anyio.Event)

    def start(self, todo: int) -> int:
        """The first position this backward stream reads."""
        return todo - 1 if self.top is None else min(todo - 1, self.top)


class _TwoEnded(Generic[ReadT]):
    """The merge: positions placed in order from 0 until the selection or the budget ends.

    ``start_backward`` starts a backward child's job (given the one it replaces, if any);
    ``room`` says whether one may start now. Both are called from ``on_line``: each line is
    handled where it is read, and the task waiting for the answer wakes only when the answer is
    complete, the forward child has ended, or there is progress to report."""

    def __init__(
        self,
        job_args: dict[str, Any],
        model: type[ReadT],
        kind: str,
        start_backward: Callable[[_Stream | None], object] = lambda _after: None,
        room: Callable[[], bool] = lambda: False,
        *,
        report_progress: bool = False,
        on_selection: Callable[[StreamedSelection], object] = lambda _selection: None,
    ) -> None:
        self.args = job_args
        self.model = model
        self.kind = kind
        self.start_backward = start_backward
        self.room = room
        self.report_progress = report_progress
        self.on_selection = on_selection
        self.start_index = int(job_args.get("start_index", 0))
        self.start_offset = int(job_args.get("start_offset", 0))
        self.remaining = int(job_args["max_chars"])
        self.forward = _Stream("forward")
        self.backward = _Stream("backward")
        self.changed = anyio.Event()
        self.placed = 0  # positions placed so far (the prefix)
        self.pages: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self.line_bytes = 0
        self.next: dict[str, int] | None = None
        self.done = False
        self.reported = 0
        self.backward_started = False
        self.restarted = False  # the backward child was restarted below where max_chars runs out
        self.from_backward = 0  # pages of the answer the backward child read
        self.over = False  # the call has its answer or has failed: no child starts any more

    # -- the children's jobs --------------------------------------------------------------

    async def run(
        self, runner: JobRunner, document: Document, stream: _Stream, after: _Stream | None = None
    ) -> None:
        """One child's job; a restarted backward child first waits for the one it replaces.
        Runs detached from the call (``JobRunner.start_detached``), so it never raises: an
        unexpected error is the stream's ``internal`` error, and nothing starts once the call
        has its answer (its document is closed then)."""
        args = self.args | {"stream": stream.direction}
        if stream.top is not None:
            args["backward_from"] = stream.top
        with stream.scope:
            try:
                if after is not None:
                    await after.finished.wait()
                if self.over:
                    return
                # Checked atomically with the job's admission: nothing awaits between this check
                # and the pool's count of admitted jobs. A restart may take the last idle spare:
                # it only happens on long reads, where a refill beside it costs little.
                optional = stream.direction == "backward"
                if optional and not runner.room_for_optional(last_spare=after is not None):
                    return
                await runner.run_job(
                    self.kind,
                    args,
                    document,
                    self.model,
                    report=False,
                    on_line=lambda line: self.on_line(stream, line),
                )
            except ToolError as error:
                stream.error = error
            except Exception:
                log.exception("two_ended_child_task_failed", direction=stream.direction)
                stream.error = ToolError("internal", "internal server error; see the server log")
            finally:
                stream.ended = True
                stream.finished.set()
                self.changed.set()

    # -- lines ----------------------------------------------------------------------------

    def on_line(self, stream: _Stream, untrusted_line: bytes) -> None:
        if stream.rejected or self.done:
            return
        try:
            # Parsed and checked in one pass by pydantic's own JSON parser: a third of the time of
            # json.loads then model_validate on a page line. It is the stricter of the two (no
            # NaN, no lone surrogate escapes), and the child never writes either.
            line = StreamLine.model_validate_json(untrusted_line)
        except ValidationError:  # bad UTF-8 and bad JSON too
            self._reject(stream, "unreadable line")
            return
        if (line.selection is None) == (line.page is None):
            self._reject(stream, "a line must hold one selection or one page")
        elif line.selection is not None:
            self._on_selection(stream, line.selection)
        elif line.page is not None:
            self._on_page(stream, line.page, len(untrusted_line))
        self._place()
        self._steer()
        if self.done or self.report_progress:
            self.changed.set()

    def _on_selection(self, stream: _Stream, selection: StreamedSelection) -> None:
        if stream.selection is not None:
            self._reject(stream, "a second selection line")
            return
        stream.selection = selection
        stream.expected = 0 if stream.direction == "forward" else stream.start(self._todo(selection))
        if stream.direction == "forward":
            self.on_selection(selection)
        both = self.forward.selection is not None and self.backward.selection is not None
        if both and self.forward.selection != self.backward.selection and not self.backward.rejected:
            self._reject(self.backward, "its selection differs from the forward child's")

    def _on_page(self, stream: _Stream, page: StreamedPage, size: int) -> None:
        selection = stream.selection
        if selection is None or page.position != stream.expected or page.page > selection.page_count:
            self._reject(stream, "a page out of order or out of range")
            return
        if stream.direction == "forward":
            offset = self.start_offset if page.position == 0 else 0
            valid = page.offset == offset and page.position < self._todo(selection)
        else:
            valid = page.position >= 1 and page.offset == 0 and page.complete
        if not valid:
            self._reject(stream, "a page the protocol does not allow")
            return
        stream.pages[page.position] = (page, size)
        stream.chars += len(page.text)
        stream.expected += 1 if stream.direction == "forward" else -1

    def _reject(self, stream: _Stream, reason: str) -> None:
        log.warning("stream_line_rejected", direction=stream.direction, reason=reason)
        stream.rejected = True
        if stream.direction == "backward":
            stream.pages.clear()

    def _backward_agrees(self) -> bool:
        return not self.backward.rejected and self.backward.selection == self.forward.selection

    def _todo(self, selection: StreamedSelection) -> int:
        """Positions to read: the selection after ``start_index``."""
        return max(0, selection.selected_pages - self.start_index)

    # -- the merge ------------------------------------------------------------------------

    @property
    def todo(self) -> int:
        return 0 if self.forward.selection is None else self._todo(self.forward.selection)

    def _place(self) -> None:
        if self.forward.selection is None:
            return
        back = self.backward.pages if self._backward_agrees() else {}
        while not self.done:
            if self.placed >= self.todo:
                self.done = True
                break
            found = self.forward.pages.get(self.placed)
            if found is None:
                found = back.get(self.placed)
                if found is None:
                    break
                self.from_backward += 1
            self._place_page(*found)

    def _place_page(self, page: StreamedPage, size: int) -> None:
        """Exactly the child's rule: whole pages while they fit; the page that does not is cut."""
        index = self.start_index + self.placed
        text = page.text
        self.line_bytes += size
        self.warnings += page.warnings
        if len(text) > self.remaining or (not page.complete and len(text) == self.remaining):
            self._take(page, text[: self.remaining], complete=False)
            self.next = {"index": index, "offset": page.offset + self.remaining}
            self.done = True
            return
        self._take(page, text, complete=page.complete)
        self.remaining -= len(text)
        self.placed += 1
        if not page.complete:
            self.next = {"index": index, "offset": page.offset + len(text)}
            self.done = True
        elif self.remaining == 0 and self.placed < self.todo:
            self.next = {"index": index + 1, "offset": 0}
            self.done = True

    def _take(self, page: StreamedPage, text: str, *, complete: bool) -> None:
        self.pages.append(
            {
                "page": page.page,
                "text": text,
                "offset": page.offset,
                "complete": complete,
                "text_layer": page.text_layer,
                "text_source": page.text_source,
                "ocr_confidence": page.ocr_confidence,
                "hidden": [run.model_dump() for run in page.hidden],
                **(
                    {"ocr_languages": page.ocr_languages, "ocr_rotation": page.ocr_rotation}
                    if page.text_source == "ocr"
                    else {}
                ),
            }
        )

    def backward_useless(self) -> bool:
        """True when, at the average page size so far, the forward child will spend max_chars
        well before the two children would meet: the backward pages would all be cut off."""
        ahead, behind = len(self.forward.pages), len(self.backward.pages)
        chars = self.forward.chars + self.backward.chars
        if not (ahead and behind and chars) or not self._backward_agrees():
            return False
        needed = math.ceil(self.remaining / (chars / (ahead + behind)))
        gap = self.backward.start(self.todo) + 1 - behind - self.placed
        return 2 * needed + _USELESS_MARGIN_PAGES < gap

    def restart_at(self) -> int | None:
        """Where a backward child reading from the end should restart instead, when, at the
        average page size the forward child has seen, ``max_chars`` runs out well below it:
        a few pages past that estimate (then both children work on the answer's pages). Once."""
        ahead, chars = len(self.forward.pages), self.forward.chars
        if self.restarted or self.backward.top is not None or not (ahead and chars):
            return None
        top = self.placed + math.ceil(self.remaining / (chars / ahead)) + _USELESS_MARGIN_PAGES
        reading = self.backward.start(self.todo) - len(self.backward.pages)
        worth = top - self.placed >= _MIN_BACKWARD_POSITIONS
        return top if worth and top + _USELESS_MARGIN_PAGES < reading else None

    # -- waiting, progress, the answer ----------------------------------------------------

    def _steer(self) -> None:
        """After each line: the backward child is started once the forward one has said how
        many positions there are, if enough are left and there is ``room`` (checked again as
        pages come: spares refill in the meantime); it is restarted lower, or cancelled, when
        ``max_chars`` will run out long before it."""
        if self.done or self.forward.ended:
            return
        if not self.backward_started:
            enough = self.todo - self.placed >= _MIN_BACKWARD_POSITIONS
            if self.forward.selection is not None and enough and self.room():
                self.backward_started = True
                self.start_backward(None)
        elif self.backward.ended:
            return
        elif top := self.restart_at():
            log.debug("backward_read_restarted", placed=self.placed, top=top, todo=self.todo)
            replaced, self.backward = self.backward, _Stream("backward", top=top)
            replaced.scope.cancel()
            self.restarted = True
            self.start_backward(replaced)
        elif self.backward_useless():
            log.debug("backward_read_cancelled", placed=self.placed, todo=self.todo)
            self.backward.scope.cancel()

    async def wait(self, progress: ProgressFn | None) -> None:
        """Until the answer is complete or the forward child has ended, reporting progress."""
        while not (self.done or self.forward.ended):
            self.changed = anyio.Event()  # before any await: a line during the report sets it
            await self._report(progress)
            if not (self.done or self.forward.ended):
                await self.changed.wait()
        if self.done:
            await self._report(progress)

    def covered(self) -> int:
        """Positions either child has read: the forward child's run from 0 plus the backward
        child's run down from its start that lies above it (both runs are contiguous)."""
        ahead = len(self.forward.pages)
        if not self._backward_agrees():
            return min(self.todo, ahead)
        above = min(len(self.backward.pages), self.backward.start(self.todo) + 1 - ahead)
        return min(self.todo, ahead + max(0, above))

    async def _report(self, progress: ProgressFn | None) -> None:
        while progress is not None and self.reported < self.covered():
            self.reported += 1
            await progress(self.reported, self.todo)

    def answer(self, max_result_bytes: int) -> tuple[ReadT, list[str]]:
        selection = self.forward.selection
        assert selection is not None and self.done
        kept = self.warnings[:_MAX_WARNINGS]
        raw = {
            "engine": str(self.args.get("engine", "fast")),
            "page_count": selection.page_count,
            "selected_pages": selection.selected_pages,
            "pages": self.pages,
            "next": self.next,
            "warnings": kept,
        }
        if self.line_bytes + _ENVELOPE_BYTES > max_result_bytes:
            _check_envelope_size(raw, max_result_bytes)
        removed = 0
        pages = []
        for page in self.pages:
            text, count = clean_text(page["text"])
            hidden = []
            for run in page["hidden"]:
                run_text, run_count = clean_text(run["text"])
                hidden.append(run | {"text": run_text})
                count += run_count
            pages.append(page | {"text": text, "hidden": hidden})
            removed += count
        warnings = []
        for warning in kept:
            text, count = clean_text(warning)
            warnings.append(text)
            removed += count
        try:
            result = self.model.model_validate(raw | {"pages": pages, "warnings": warnings})
        except ValidationError as exc:
            log.error("invalid_job_result", kind=self.kind, errors=exc.error_count())
            raise ToolError("crashed", "the job child returned a result that failed validation") from exc
        return result, removal_warnings(removed)


def _check_envelope_size(raw: dict[str, Any], max_result_bytes: int) -> None:
    """The single child refuses an envelope over the cap (``pdf_airlock.worker.child._encode``); so does the
    merged answer, with the same error, measured on the same encoding."""
    payload = json.dumps(
        {"ok": True, "result": raw}, ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )
    size = len(payload.encode("utf-8", errors="replace"))
    if size > max_result_bytes:
        raise ToolError(
            "output_limit",
            f"the result is {size} bytes, over the {max_result_bytes}-byte cap; select fewer pages",
            {"result_bytes": size, "max_result_bytes": max_result_bytes},
        )


async def two_ended_read(
    runner: JobRunner, job_args: dict[str, Any], document: Document, model: type[ReadT], kind: str
) -> tuple[ReadT, list[str]] | None:
    """The answer of job ``kind`` read from both ends, validated by ``model`` (the read tool's
    untrusted result), or None when this read should take the single child."""
    # The forward child takes a spare as a single child would; the backward one is gated later.
    if document.size < MIN_TWO_ENDED_BYTES or not await runner.slots_free(2):
        return None
    key = (document.sha256, str(job_args.get("engine", "fast")), job_args.get("pages"))
    known = runner.selections.get(key)
    if known is not None and known - int(job_args.get("start_index", 0)) < _MIN_BACKWARD_POSITIONS:
        return None  # an earlier read of these bytes found too few pages for two children
    progress = runner.progress()
    # The children's tasks are detached from this call: once the answer is complete they are
    # cancelled and unwind (kill messages, pipes, audit) after it has been written, not before.

    def start(stream: _Stream, after: _Stream | None = None) -> None:
        runner.start_detached(lambda: read.run(runner, document, stream, after))

    read = _TwoEnded(
        job_args,
        model,
        kind,
        lambda after: start(read.backward, after),
        lambda: runner.room_for_optional(1),
        report_progress=progress is not None,
        on_selection=lambda selection: runner.selections.put(key, selection.selected_pages),
    )
    start(read.forward)
    if known is not None and runner.room_for_optional(2):
        # Pages enough for two, as an earlier read found: the backward child starts now, not
        # after the forward child's selection line (``pdf_airlock.server.tools.page_counts``).
        read.backward_started = True
        read.start_backward(None)
    try:
        await read.wait(progress)
    finally:
        read.over = True
        read.forward.scope.cancel()
        read.backward.scope.cancel()
    if read.done:
        log.debug(
            "two_ended_read",
            positions=read.todo,
            answered=len(read.pages),
            from_backward=read.from_backward,
            backward_started=read.backward_started,
            selection_known=known is not None,
        )
        return read.answer(runner.max_result_bytes)
    error = read.forward.error
    if error is not None and error.code == "output_limit":
        # Streamed lines take a few bytes more than the single envelope: only the single child
        # can tell whether its own answer fits. Progress already sent must not start over.
        return await runner.run_job(kind, job_args, document, model, report=read.reported == 0)
    if error is not None:
        raise error
    raise ToolError("crashed", "the reading job child ended before it had streamed every page")
