"""Pipeline mode: ``pdf-airlock batch TOOL PATHS... --jobs N --out results.jsonl``.

Runs one tool over many documents through the same supervisor, pool and sandbox as the MCP
server, ``--jobs`` at a time. Writes one JSON line per document (appended, flushed per line):
``{"path", "sha256", "tool", "ok": true, "result": {...}}`` or ``{"path", "sha256", "tool",
"ok": false, "error": {code, message, retryable, details}}``; a tool that returns images (a
page's picture, an extracted image) adds ``"images": [{"mime_type", "data_base64"}]``.

A line holds the whole result: a paged tool's cursors are followed and its parts joined
(``pdf_airlock.server.batch.whole``); a tool's declared ``batch_arguments`` are added unless given
(the text tools ask for the largest ``max_chars`` a part).
A document whose joined result passes ``max_document_bytes`` stops there, with ``"complete": false`` and the
``cursor`` to go on from (``pdf-airlock call`` takes it); it counts as ``incomplete``. Every successful line
says ``"complete"``.

Resumable: documents whose sha256 already has a line of the same tool in the output are skipped (a line names
its ``tool``), unless that line is a ``retryable`` error (the later line then stands for the document); a torn
last line (a run killed mid-write) is cut off first, so that document runs again and the file stays one JSON
object a line. Which files are documents: ``pdf_airlock.server.batch.inputs`` (a directory's ``*.pdf``
entries, none dropped in silence; one it cannot list is a failed line). Progress and the closing summary go to
stderr (``pdf_airlock.server.batch.report``). SIGTERM starts no more documents and gives those in flight
``--shutdown-grace`` to finish; SIGINT (or a second signal) stops at once. Exit status 0 when every document
was read whole, 1 when any failed or is incomplete, 2 on bad usage or when the output cannot be used
(``pdf_airlock.server.batch.output``: not a regular file, another run writing it) or a line could not be
written, 128 + the signal's number when one stopped the run (130, 143): the next run goes on.

With a ``shard`` (``pdf_airlock.server.batch.shard``) the run reads only the documents whose key
hashes to it, and ``out`` (and ``chunks``) become the shard's own files.
"""

from __future__ import annotations

import contextlib
import functools
import json
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import anyio
import structlog

from pdf_airlock.server.app.calls import App, validated
from pdf_airlock.server.batch.inputs import Unlisted, documents
from pdf_airlock.server.batch.output import Output, OutputLocked, OutputRefused
from pdf_airlock.server.batch.report import Report
from pdf_airlock.server.batch.shard import Shard, document_key
from pdf_airlock.server.batch.whole import join_part, owned, paged
from pdf_airlock.server.config import DEFAULTS, MIB, Settings
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.tools.registry import TOOLS

__all__ = ["run_batch"]

log = structlog.get_logger(__name__)
# Tools whose result has RAG chunks: ``--chunks`` writes them one a line.
CHUNKED_TOOLS: Final = frozenset(
    name for name, spec in TOOLS.items() if "chunks" in spec.output_model.model_fields
)


def _json_bytes(value: dict[str, Any]) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8", errors="replace"))


@dataclass(frozen=True, slots=True)
class _Job:
    app: App
    tool: str
    arguments: dict[str, Any]
    skip: set[str]
    max_document_bytes: int


async def _follow(job: _Job, arguments: dict[str, Any], whole: dict[str, Any]) -> Any:
    """Join the parts after ``whole`` (from ``parts.owned``) into it, until its cursor is null
    or it holds ``max_document_bytes`` of JSON; the error of a part that failed, else None."""
    size = _json_bytes(whole)
    # Later parts name no ``extract``: the cursor does not depend on it, and one copy is enough.
    rest = {name: value for name, value in arguments.items() if name != "extract"}
    while whole["cursor"] and size < job.max_document_bytes:
        part = await job.app.call_tool(job.tool, rest | {"cursor": whole["cursor"]})
        more = part.structured_content or {}
        if part.is_error:
            return more.get("error")
        join_part(job.tool, whole, more)
        size += _json_bytes(more)
    return None


def _failed(job: _Job, path: Path, error: ToolError) -> dict[str, Any]:
    """The line of a document that could not be opened (no sha256: the next run tries again)."""
    return {"path": str(path), "sha256": None, "tool": job.tool, "ok": False, "error": error.to_dict()}


async def _one(job: _Job, path: Path | Unlisted) -> dict[str, Any] | None:
    if isinstance(path, Unlisted):
        error = ToolError("path_denied", f"{str(path.path)!r} cannot be listed ({path.reason})")
        return _failed(job, path.path, error)
    resolved = str(path.resolve())
    try:
        document = await job.app.policy.open_path_async(resolved)
    except ToolError as error:
        return _failed(job, path, error)
    digest = document.sha256
    document.close()
    if digest in job.skip:
        return None
    arguments = job.arguments | {"path": resolved}
    arguments = dict(TOOLS[job.tool].batch_arguments) | arguments
    result = await job.app.call_tool(job.tool, arguments)
    line: dict[str, Any] = {"path": str(path), "sha256": digest, "tool": job.tool, "ok": not result.is_error}
    structured = result.structured_content or {}
    if result.is_error:
        line["error"] = structured.get("error")
        return line
    if structured.get("cursor") and paged(job.tool) is not None:
        structured = owned(structured)
        failed = await _follow(job, arguments, structured)
        if failed is not None:
            return line | {"ok": False, "error": failed}
    line.update(sha256=structured.get("sha256", digest), result=structured)
    line["complete"] = not structured.get("cursor")
    images = [block for block in result.content if block.type == "image"]
    if images:  # a rendered page, an extracted image: the PNGs themselves
        line["images"] = [{"mime_type": block.mime_type, "data_base64": block.data} for block in images]
    return line


async def _run(
    settings: Settings,
    tool: str,
    arguments: dict[str, Any],
    *,
    files: list[Path | Unlisted],
    out: Output,
    skip: set[str],
    max_document_bytes: int,
    report: Report,
    chunks: Output | None = None,
) -> None:
    queue = iter(files)
    in_flight = anyio.CancelScope()  # the documents being read: cancelled by a signal
    async with anyio.create_task_group() as ticking:
        ticking.start_soon(report.tick)  # from the start: the pool's start-up takes a while
        ticking.start_soon(_on_signals, in_flight, settings.shutdown_grace_s, report)
        async with Pool(
            settings.workers,
            len(files) + 1,
            DEFAULTS.zygote_start_timeout_s,
            settings.kill_grace_s,
            warm_spares=False,  # CPU per document, not one call's latency: bench/perf/cpu_per_doc.py
            resident_idle_s=settings.child_idle_s,
        ) as pool:
            if settings.require_layers:
                report.refused = await _sandbox_missing(pool, settings)
            job = _Job(App(settings, pool), tool, arguments, skip, max_document_bytes)

            async def worker() -> None:
                while not report.stopped and (path := next(queue, None)) is not None:
                    line = await _one(job, path)
                    if line is None:
                        report.add("skipped")
                    elif report.output_error is None:  # after a line cut short, no line may follow it
                        try:
                            if chunks is not None:  # first: a document with its line has its chunks
                                chunks.append_all(chunk_lines(line))
                            out.append(line)
                        except OSError as exc:  # a full disk, a file size limit: nothing more can land
                            report.output_error = exc.strerror or type(exc).__name__
                            log.error("batch_output_failed", reason=report.output_error)
                            in_flight.cancel()
                            return
                        report.add(_outcome(line))

            with in_flight:
                async with anyio.create_task_group() as tg:
                    for _ in range(settings.workers):
                        tg.start_soon(worker)
        ticking.cancel_scope.cancel()


async def _sandbox_missing(pool: Pool, settings: Settings) -> str | None:
    """Why the run may not start: a layer of ``--require-sandbox`` is not active (every document
    would fail, and the run would look like one of hostile documents); None when all are."""
    from pdf_airlock.server.pool.probe import missing_layers, probe_layers

    try:
        missing = missing_layers(await probe_layers(pool, settings), settings.require_layers)
    except ToolError as error:
        missing = [f"probe failed ({error.code})"]
    if not missing:
        return None
    log.error("batch_sandbox_missing", missing=missing)
    return f"required sandbox layer(s) not active: {', '.join(missing)}"


async def _on_signals(in_flight: anyio.CancelScope, grace_s: float, report: Report) -> None:
    """SIGTERM: start no more documents and give those in flight ``grace_s`` to finish (their
    lines are written). SIGINT, or a second signal: cancel them now (they have no line; the next
    run reads them)."""
    with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
        async for signum in signals:
            name = signal.Signals(signum).name
            if report.interrupted is None:
                report.interrupted = name
                now = signum == signal.SIGINT
                log.warning("batch_stopping", signal=name, grace_s=0 if now else grace_s)
                if not now:
                    in_flight.deadline = anyio.current_time() + grace_s
                    continue
            in_flight.cancel()


def chunk_lines(line: dict[str, Any]) -> list[dict[str, Any]]:
    """A chunked tool's line's RAG chunks, one record each, as a vector store ingests them:
    ``id`` (the document's sha256 and the chunk's number: stable, so a re-run upserts the same
    records), the document, and the chunk's text, heading path, pages and offsets."""
    result = line.get("result")
    if not line.get("ok") or not isinstance(result, dict):
        return []
    digest = line["sha256"]
    document = {"path": line["path"], "sha256": digest, "source": result.get("source")}
    return [
        {"id": f"{digest}:{number}", **document, **chunk}
        for number, chunk in enumerate(result.get("chunks", []))
    ]


def _outcome(line: dict[str, Any]) -> str:
    if not line["ok"]:
        return str(line["error"]["code"])
    return "ok" if line["complete"] else "incomplete"


def _usage_error(tool: str, arguments: dict[str, Any], chunks: Path | None) -> bool:
    """A typo in the tool's name or arguments would fail every document, and settle them all."""
    try:
        validated(tool, arguments | {"path": "document.pdf"})
    except ToolError as error:
        log.error("batch_invalid_arguments", tool=tool, message=error.message, **error.details)
        return True
    if chunks is not None and tool not in CHUNKED_TOOLS:
        chunked = ", ".join(sorted(CHUNKED_TOOLS))
        message = f"--chunks needs a tool with chunks ({chunked})"
        log.error("batch_invalid_arguments", tool=tool, message=message)
        return True
    return False


def _owned(files: list[Path | Unlisted], shard: Shard, roots: tuple[Path, ...]) -> list[Path | Unlisted]:
    """The documents (and unlisted folders) whose key falls to ``shard``."""
    return [
        found
        for found in files
        if shard.owns(document_key(found.path if isinstance(found, Unlisted) else found, roots))
    ]


def _opened(stack: contextlib.ExitStack, path: Path) -> Output | None:
    """An output file, locked for this run with its torn last line cut off; None (logged) if it
    cannot be used."""
    try:
        output = stack.enter_context(Output(path))
    except OutputRefused as refused:
        log.error("batch_output_refused", out=str(path), reason=refused.reason)
        return None
    except OutputLocked:
        log.error("batch_output_locked", out=str(path), note="another batch run is writing it")
        return None
    torn = output.cut_torn_tail()
    if torn:
        log.warning("batch_torn_line_cut", out=str(path), bytes=torn)
    return output


def run_batch(
    settings: Settings,
    tool: str,
    arguments: dict[str, Any],
    paths: list[Path],
    out: Path,
    *,
    max_document_bytes: int = DEFAULTS.batch_max_document_mb * MIB,
    progress: str = "auto",
    progress_every_s: float = DEFAULTS.batch_progress_s,
    chunks: Path | None = None,
    shard: Shard | None = None,
) -> int:
    if _usage_error(tool, arguments, chunks):
        return 2
    files = list(documents(paths, settings.roots))
    if shard is not None:
        files, listed = _owned(files, shard, settings.roots), len(files)
        out, chunks = shard.output(out), None if chunks is None else shard.output(chunks)
        log.info("batch_shard", shard=shard.name, documents=len(files), listed=listed, out=str(out))
    with contextlib.ExitStack() as stack:
        output = _opened(stack, out)
        chunk_output = _opened(stack, chunks) if chunks is not None and output is not None else None
        if output is None or (chunks is not None and chunk_output is None):
            return 2
        skip = output.done_digests(tool)
        with Report(progress, len(files), every_s=progress_every_s) as report:
            anyio.run(
                functools.partial(
                    _run,
                    settings,
                    tool,
                    arguments,
                    files=files,
                    out=output,
                    skip=skip,
                    max_document_bytes=max_document_bytes,
                    report=report,
                    chunks=chunk_output,
                )
            )
    if report.output_error is not None or report.refused is not None:
        return 2
    if report.interrupted is not None:
        return 128 + signal.Signals[report.interrupted].value
    return 0 if report.failed == 0 else 1
