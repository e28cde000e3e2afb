"""The job child: entered right after the zygote forks; parses one document and exits.

Assumes nothing about the input document. The only way out is one JSON envelope written to
the result pipe, bounded by ``max_result_bytes``:
``{"ok": true, "result": {...}}`` or ``{"ok": false, "error": {"code", "message", "details"}}``.
The supervisor treats that envelope as untrusted. The process never returns to the zygote's
code: every path ends in ``os._exit``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Final, NoReturn

from worker import progress
from worker.errors import WorkerError
from worker.parsers import get_parser
from worker.sandbox import (
    CHILD_INPUT_FD,
    CHILD_RESULT_FD,
    Limits,
    SandboxPolicy,
    SandboxReport,
    enter_sandbox,
)

__all__ = ["EXIT_SANDBOX_FAILED", "run_job"]

_READ_CHUNK: Final = 1 << 20
EXIT_OK: Final = 0
EXIT_SANDBOX_FAILED: Final = 71
EXIT_WRITE_FAILED: Final = 72
# Fraction of the job's memory budget that qpdf may spend decoding one stream.
_DECODE_SHARE: Final = 2
_ENGINE_ERRORS: Final = frozenset({"PdfiumError", "PdfError", "DataDecodingError", "PSEOF", "PDFSyntaxError"})


def _error(code: str, message: str, details: dict[str, object] | None = None) -> dict[str, Any]:
    return {"ok": False, "error": {"code": code, "message": message, "details": details or {}}}


def _read_input(fd: int, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.pread(fd, _READ_CHUNK, total)
        if not chunk:
            break
        total += len(chunk)
        if total > max_bytes:
            raise WorkerError("output_limit", "the input grew past the size cap while being read")
        chunks.append(chunk)
    return b"".join(chunks)


def _execute(job: dict[str, Any], limits: Limits, report: SandboxReport) -> dict[str, Any]:
    kind = str(job["kind"])
    try:
        if kind == "probe":
            return {"ok": True, "result": {"layers": report.layers, "micros": report.micros}}
        from worker.parsers.common import apply_decode_limits

        apply_decode_limits(limits.memory_bytes // _DECODE_SHARE)
        data = _read_input(CHILD_INPUT_FD, limits.max_input_bytes)
        parser = get_parser(kind)
        args = dict(job["args"])
        progress.enable(bool(args.pop("report_progress", False)))
        return {"ok": True, "result": parser(data, args)}
    except Exception as exc:  # every failure becomes a typed error, not a crash
        return _error_for(exc)


def _error_for(exc: Exception) -> dict[str, Any]:
    if isinstance(exc, WorkerError):
        return _error(exc.code, exc.message, exc.details)
    if isinstance(exc, MemoryError):
        return _error("memory_limit", "the document needed more memory than the job's budget")
    if isinstance(exc, RecursionError):
        return _error("malformed", "the document nests objects too deeply")
    if type(exc).__name__ in _ENGINE_ERRORS:  # an engine gave up on the document itself
        return _error("malformed", f"the PDF engine could not parse the document ({type(exc).__name__})")
    return _error("internal", f"the parser failed ({type(exc).__name__})")


def _encode(envelope: dict[str, Any], max_bytes: int) -> bytes:
    try:
        payload = json.dumps(envelope, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        payload = json.dumps(_error("internal", "the parser produced a result that is not JSON"))
    encoded = payload.encode("utf-8", errors="replace")
    if len(encoded) > max_bytes:
        limit_error = _error(
            "output_limit",
            f"the result is {len(encoded)} bytes, over the {max_bytes}-byte cap; select fewer pages",
            {"result_bytes": len(encoded), "max_result_bytes": max_bytes},
        )
        encoded = json.dumps(limit_error).encode()
    return encoded


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def run_job(
    job: dict[str, Any], parent_pid: int, input_fd: int, result_fd: int, probed: dict[str, Any]
) -> NoReturn:
    """Sandbox this process, run the job, write the envelope, exit. Never returns."""
    try:
        limits = Limits(**job["limits"])
        policy = SandboxPolicy.from_job(dict(job.get("sandbox", {})), **probed)
        report = enter_sandbox(parent_pid, input_fd, result_fd, limits, policy)
    except BaseException:  # a sandbox that cannot be built must not run the parser
        os._exit(EXIT_SANDBOX_FAILED)
    try:
        envelope = _execute(job, limits, report)
        _write_all(CHILD_RESULT_FD, _encode(envelope, limits.max_result_bytes))
    except BaseException:  # nothing may escape the child's exit path
        os._exit(EXIT_WRITE_FAILED)
    os._exit(EXIT_OK)
