"""The application core: one tool call from arguments to ``CallToolResult``.

Shared by every front end (stdio, HTTP, ``batch``, the ``call`` CLI). Tool errors never escape as
exceptions: every failure becomes ``isError: true`` with a typed ``structuredContent.error``.
Unexpected exceptions become ``internal``, with the traceback only in the server log. Each call
is recorded in its audit event (``pdf_airlock.server.app.audit``).
"""

from __future__ import annotations

import contextvars
import os
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Final, TypeVar

import anyio
import mcp_types as types
import structlog
from pydantic import BaseModel, ValidationError

from pdf_airlock.server.app.audit import begin as begin_audit
from pdf_airlock.server.app.audit import current as current_audit
from pdf_airlock.server.app.cache import KEY_BYTES, ResultCache, prepare_key_file
from pdf_airlock.server.app.delivery import delivered_result, whole_arguments
from pdf_airlock.server.app.resources import ResourceStore
from pdf_airlock.server.boundary.paths import Document, PathPolicy
from pdf_airlock.server.boundary.sanitize import clean_text, removal_warnings
from pdf_airlock.server.config import Settings
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.child_output import JobOutcome, LineFn, ProgressFn
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.server.tools.cursors import share_key
from pdf_airlock.server.tools.models import DeliveryInput, DocumentInput, OcrInput
from pdf_airlock.server.tools.page_counts import SelectionMemo
from pdf_airlock.server.tools.registry import TOOLS, ToolSpec

__all__ = ["App", "Gate", "InputRequired", "error_result"]

log = structlog.get_logger(__name__)
ModelT = TypeVar("ModelT", bound=BaseModel)
# A check run once a call's document is open, before the tool: may raise ``ToolError``.
Gate = Callable[[str, dict[str, Any], Document], Awaitable[None]]
_DEADLINE: contextvars.ContextVar[float] = contextvars.ContextVar("pdf_airlock_deadline", default=0.0)
_PROGRESS: contextvars.ContextVar[ProgressFn | None] = contextvars.ContextVar(
    "pdf_airlock_progress", default=None
)
# The cache key's entry for OCR's limits: an answer read under other ``--ocr-*`` limits (a disk
# entry outlives a restart) is not served.
_OCR_LIMITS_KEY: Final = "ocr_limits"
_PRINCIPAL: contextvars.ContextVar[str] = contextvars.ContextVar("pdf_airlock_principal", default="")


class InputRequired(Exception):
    """The call needs the client's input before it can go on (the 2026-07-28 era's
    multi-round-trip request): its ``InputRequiredResult`` is the call's answer this round."""

    def __init__(self, result: types.InputRequiredResult) -> None:
        super().__init__("input required")
        self.result = result


def error_result(error: ToolError) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"{error.code}: {error.message}")],
        structured_content={"error": error.to_dict()},
        is_error=True,
    )


def _clean_tree(value: Any) -> tuple[Any, int]:
    """Sanitise every string in an untrusted JSON tree; returns the tree and chars removed."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        removed = 0
        items = []
        for item in value:
            cleaned, count = _clean_tree(item)
            items.append(cleaned)
            removed += count
        return items, removed
    if isinstance(value, dict):
        removed = 0
        mapping = {}
        for key, item in value.items():
            clean_key, key_count = _clean_tree(key)
            cleaned, count = _clean_tree(item)
            mapping[clean_key] = cleaned
            removed += key_count + count
        return mapping, removed
    return value, 0


async def _report_cached(result: types.CallToolResult) -> None:
    """A call that asked for progress and is answered from the cache hears of it once: all the
    pages of its answer done, as a call that ran them would last report."""
    progress = _PROGRESS.get()
    if progress is not None:
        pages = (result.structured_content or {}).get("pages")
        done = max(1, len(pages) if isinstance(pages, list) else 0)
        await progress(done, done)


def _validation_message(exc: ValidationError) -> str:
    """Field locations and reasons only: pydantic's default text would echo the input values."""
    problems = [
        f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
    ]
    return "; ".join(problems[:10])


def validated(name: str, arguments: dict[str, Any]) -> tuple[ToolSpec, Any]:
    """The tool named and its arguments as its input model; ``invalid_arguments`` otherwise."""
    spec = TOOLS.get(name)
    if spec is None:
        raise ToolError("invalid_arguments", f"unknown tool {name[:100]!r}", {"tools": ", ".join(TOOLS)})
    try:
        return spec, spec.input_model.model_validate(arguments)
    except ValidationError as exc:
        raise ToolError("invalid_arguments", _validation_message(exc)) from exc


class App:
    """Runs tool calls against one pool and one path policy."""

    def __init__(self, settings: Settings, pool: Pool) -> None:
        self.settings = settings
        self.pool = pool
        self.max_result_bytes = settings.max_result_bytes
        self.policy = PathPolicy(settings.roots, settings.max_file_bytes)
        # The --cache-key-file secret: cursors and approval states then pass between processes
        # sharing it (``tools.cursors``, ``approval_state``).
        self.key_secret: bytes | None = None
        if settings.cache_key_file is not None:
            self.key_secret = prepare_key_file(settings.cache_key_file, settings.cache_dir)
            share_key(self.key_secret)
        self.cache = ResultCache(
            settings.cache_bytes, settings.cache_dir, settings.cache_disk_bytes, settings.cache_key_file
        )
        self.selections = SelectionMemo()
        self.resources = ResourceStore(
            settings.resource_bytes,
            settings.resource_ttl_s,
            settings.resource_part_chars,
            self.key_secret or os.urandom(KEY_BYTES),
            directory=settings.cache_dir,
            disk_max_bytes=settings.resource_disk_bytes,
        )
        self._tools: list[types.Tool] | None = None

    def list_tools(self, category: str | None = None) -> list[types.Tool]:
        """Built once: the schemas never change while the server runs."""
        if self._tools is None:
            self._tools = [spec.to_mcp() for spec in TOOLS.values()]
        if category is None:
            return self._tools
        return [
            tool for tool, spec in zip(self._tools, TOOLS.values(), strict=True) if spec.category == category
        ]

    def restart_deadline(self) -> None:
        """Give the current call a whole ``--timeout`` from now (after waiting for a human)."""
        _DEADLINE.set(time.monotonic() + self.settings.timeout_s)

    def progress(self) -> ProgressFn | None:
        """The current call's progress callback, if the client asked for progress."""
        return _PROGRESS.get()

    def start_detached(self, fn: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """``fn`` in the pool's task group; the current call's audit event waits for it."""
        audit = current_audit()
        audit.detached_started()

        async def detached() -> None:
            try:
                await fn()
            finally:
                audit.detached_ended()

        self.pool.start_soon(detached)

    async def slots_free(self, jobs: int) -> bool:
        return await self.pool.slots_free(jobs)

    def room_for_optional(self, jobs: int = 1, *, last_spare: bool = False) -> bool:
        return self.pool.room_for_optional(jobs, last_spare=last_spare)

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
        # One --timeout per tool call, shared by all the jobs it runs (a two-ended read runs two).
        # The wall budget is --timeout; while the machine is too busy to give a job its CPU, the
        # zygote stretches it up to --busy-stretch times (``pdf_airlock.worker.zygote``, ``_Child``).
        deadline = self.settings.timeout_s
        call_deadline = _DEADLINE.get()
        if call_deadline:
            deadline = call_deadline - time.monotonic()
            if deadline <= 0:
                raise ToolError(
                    "timeout", f"the call did not finish within {self.settings.timeout_s:g} s (--timeout)"
                )
        max_wall = deadline + self.settings.timeout_s * (self.settings.busy_stretch - 1)
        limits = self.settings.job_limits()
        sandbox = self.settings.sandbox_spec()
        # A child may go on to the next document only of the same client and root (the pool does
        # so only when the limits allow it: --documents-per-child).
        share = f"{_PRINCIPAL.get()}\n{document.root}"
        progress = _PROGRESS.get() if report else None
        if progress is not None:
            args = args | {"report_progress": True}
        audit = current_audit()
        try:
            outcome: JobOutcome = await self.pool.run(
                kind,
                args,
                document.fd,
                limits=limits,
                deadline_s=deadline,
                max_wall_s=max_wall,
                sandbox=sandbox,
                share=share,
                on_progress=progress,
                on_line=on_line,
                # Every job the call started, abandoned ones too: each has a `job_exit` event with
                # its CPU and peak memory under the same id (one answered first reports there too).
                on_start=audit.job_started,
            )
        except anyio.get_cancelled_exc_class():
            # Parallel reads cancel the jobs they no longer need (the pool kills the child).
            audit.job_cancelled()
            raise
        audit.job_finished(outcome)
        untrusted_result = classify(outcome, self.settings.memory_bytes, self.settings.timeout_s)
        cleaned, removed = _clean_tree(untrusted_result)
        try:
            result = model.model_validate(cleaned)
        except ValidationError as exc:
            log.error("invalid_job_result", kind=kind, errors=exc.error_count())
            raise ToolError("crashed", "the job child returned a result that failed validation") from exc
        return result, removal_warnings(removed)

    @staticmethod
    async def _open(args: DocumentInput, paths: PathPolicy) -> Document:
        if args.path is not None:
            return await paths.open_path_async(args.path)
        assert args.data is not None
        return await paths.open_inline_async(args.data)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        request_id: object = None,
        progress: ProgressFn | None = None,
        *,
        principal: str | None = None,
        paths: PathPolicy | None = None,
        gate: Gate | None = None,
    ) -> types.CallToolResult:
        """Run one tool call; ``progress(done, total)`` is called per page when given.

        ``principal`` names the caller in the audit record (the HTTP transport's authenticated
        subject); ``paths`` replaces the server's path policy for this call (that principal's
        roots); ``gate(name, arguments, document)`` runs once the document is open and may refuse
        the call with a ``ToolError`` (a human's approval).
        """
        started = time.perf_counter()
        record = begin_audit(request_id, name)
        audit = record.event
        if principal is not None:
            audit["principal"] = principal
        _PROGRESS.set(progress)
        _PRINCIPAL.set(principal or "")
        _DEADLINE.set(time.monotonic() + self.settings.timeout_s)
        try:
            result = await self._call(name, arguments or {}, audit, paths or self.policy, gate)
            audit["outcome"] = "ok"
            return result
        except InputRequired:
            audit["outcome"] = "input_required"  # the client is asked, and calls again
            raise
        except ToolError as error:
            audit["outcome"] = error.code
            if error.code == "internal":  # names the parser's exception type and frame, never data
                audit["internal"] = error.message
            return error_result(error)
        except anyio.get_cancelled_exc_class():
            audit["outcome"] = "cancelled"  # the client cancelled or the server is stopping
            raise
        except Exception:
            log.exception("tool_call_crashed", tool=name)
            audit["outcome"] = "internal"
            return error_result(ToolError("internal", "internal server error; see the server log"))
        finally:
            audit["duration_ms"] = round((time.perf_counter() - started) * 1000, 2)
            record.answer()

    async def _call(
        self,
        name: str,
        arguments: dict[str, Any],
        audit: dict[str, Any],
        paths: PathPolicy,
        gate: Gate | None,
    ) -> types.CallToolResult:
        spec, args = validated(name, arguments)
        document = await self._open(args, paths)
        audit.update(sha256=document.sha256, bytes=document.size)
        try:
            if gate is not None:
                await gate(name, arguments, document)
            if isinstance(args, DeliveryInput) and args.deliver == "resource":
                return await self._deliver(spec, arguments, document, audit)
            return await self._cached(spec, args, arguments, document, audit)
        finally:
            document.close()

    async def _deliver(
        self, spec: ToolSpec, arguments: dict[str, Any], document: Document, audit: dict[str, Any]
    ) -> types.CallToolResult:
        """The tool's whole answer kept as a resource for this principal; the answer links to it
        (``pdf_airlock.server.app.delivery``)."""
        delivery = spec.delivery
        if delivery is None or self.resources.max_bytes <= 0:
            raise ToolError(
                "invalid_arguments", "this server does not deliver answers as resources (--resource-mb)"
            )
        whole = whole_arguments(delivery, arguments)
        _, args = validated(spec.name, whole)
        result = await self._cached(spec, args, whole, document, audit)
        structured = dict(result.structured_content or {})
        text = delivery.text(structured)
        size = len(text.encode("utf-8", "replace"))
        if size > self.resources.max_answer_bytes:
            raise ToolError(
                "output_limit",
                f"the whole answer is {size} bytes, over the {self.resources.max_answer_bytes} bytes one "
                "delivered answer may take (a quarter of --resource-mb): select fewer pages, or read "
                "it inline by cursor",
                {"size": size, "max_bytes": self.resources.max_answer_bytes},
            )
        fields = {
            "tool": spec.name,
            "source": document.display,
            "sha256": document.sha256,
            "mime_type": delivery.mime_type,
            "title": f"{spec.title}: {document.display}",
            "pages": delivery.pages(structured),
            "headings": delivery.headings(structured),
            "complete": structured.get("cursor") is None,
            "cursor": structured.get("cursor"),
        }
        key = self._cache_key(spec, args, whole, document)
        private = arguments.get("password") is not None
        delivered = self.resources.put(_PRINCIPAL.get(), key, fields, text, private=private)
        audit["delivered"] = {"bytes": delivered.size_bytes, "parts": delivered.parts}
        expires_in_s = max(0, int(delivered.expires - time.time()))
        return delivered_result(delivered, structured, self.settings.resource_part_chars, expires_in_s)

    async def run_on(self, name: str, arguments: dict[str, Any], document: Document) -> types.CallToolResult:
        """Another tool on the document the current call has open (a gate's triage): cached, and
        its jobs counted in the current call's audit record. Raises ``ToolError``."""
        spec, args = validated(name, arguments)
        return await self._cached(spec, args, arguments, document, None)

    def _cache_key(self, spec: ToolSpec, args: Any, arguments: dict[str, Any], document: Document) -> str:
        keyed = arguments | {"source": document.display}
        if isinstance(args, OcrInput) and args.ocr != "off":  # a disk entry may outlive --ocr-* settings
            keyed[_OCR_LIMITS_KEY] = self.settings.ocr.to_wire()
        # Whose calls the entry answers: this principal's only, unless --cache-scope shared.
        partition = "" if self.settings.cache_scope == "shared" else _PRINCIPAL.get()
        return self.cache.key(document.sha256, spec.name, keyed, partition)

    async def _cached(
        self,
        spec: ToolSpec,
        args: Any,
        arguments: dict[str, Any],
        document: Document,
        audit: dict[str, Any] | None,
    ) -> types.CallToolResult:
        cache_key = self._cache_key(spec, args, arguments, document)
        cached = self.cache.get(cache_key)
        if cached is not None:
            if audit is not None:
                audit["cache"] = "hit"
            await _report_cached(cached)
            return cached
        output, text = await spec.run(self, args, document)
        structured = output.model_dump(mode="json")
        if audit is not None:
            audit["pages"] = len(structured.get("pages", []))
        content = [types.TextContent(type="text", text=text)] if isinstance(text, str) else text
        result = types.CallToolResult(content=list(content), structured_content=structured, is_error=False)
        size = sum(len(block.text if block.type == "text" else block.data) for block in content)
        self.cache.put(cache_key, result, size * 2 + 1024)
        return result
