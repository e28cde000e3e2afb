"""The job child: forked by the zygote as a spare, parses one document and exits.

A spare sandboxes itself for the limits and sandbox request it was forked for; with no job
waiting yet, it faults in a few MiB of heap that it keeps for the job and runs a tiny warm-up
parse of a trusted document (so a first parse's page faults happen before any job). It then
blocks on its spare socket for exactly one job: the job message with the input fd and the
result pipe, which land on fds 3 and 4. It then closes the socket, so only fds 0-4 are open
while the document is parsed. Assumes nothing about the input document.

Opt-in (``Limits.documents`` > 1, the supervisor's ``--documents-per-child``): the child keeps
its socket and, after a job's envelope, closes fds 3 and 4 and waits for another job of the same
input (the supervisor sends it only jobs of one root and one client), up to ``documents`` jobs,
each with a renewed CPU budget (``pdf_airlock.worker.sandbox.rlimits.renew_cpu``). It stops
early, closing its socket before the envelope's EOF so the supervisor never sends it more, after
a job that failed or tripped a lazy load. docs/security.md ("What documents share") says what
the documents of one such child share.

The job message and the reply are ``pdf_airlock.worker.contract``'s ``Job`` and ``Reply``. The
only way out is one reply (an ``Answer`` or a ``Failure``) written to the result pipe, bounded by
``max_result_bytes``, then an explicit close of the pipe (the supervisor may answer at that EOF).
The supervisor treats that reply as untrusted. The job's ``limits`` are applied here: the
sandbox's when the spare is made, qpdf's decode caps and OCR's before each parse. The process
never returns to the zygote's code: every path ends in ``os._exit``.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import json
import os
import socket
import traceback
from typing import Any, Final, NoReturn

from pdf_airlock.worker import deadline, progress, strict_loads
from pdf_airlock.worker.contract import PROBE_KIND, Answer, Failure, Job, ProtocolError, Reply, WorkerError
from pdf_airlock.worker.parsers import get_parser, read
from pdf_airlock.worker.pdf.pages import RENDER_TOOL
from pdf_airlock.worker.probe import run_probe
from pdf_airlock.worker.sandbox.layers import (
    CHILD_INPUT_FD,
    CHILD_RESULT_FD,
    SPARE_SOCKET_FD,
    Limits,
    SandboxPolicy,
    SandboxReport,
    enter_sandbox,
)
from pdf_airlock.worker.sandbox.process import set_name
from pdf_airlock.worker.sandbox.rlimits import renew_cpu

__all__ = ["EXIT_SANDBOX_FAILED", "run_spare"]

_READ_CHUNK: Final = 1 << 20
EXIT_OK: Final = 0
EXIT_SANDBOX_FAILED: Final = 71
EXIT_WRITE_FAILED: Final = 72
# Fraction of the job's memory budget that qpdf may spend decoding one stream.
_DECODE_SHARE: Final = 2
_MAX_JOB_MESSAGE: Final = 1 << 16
_JOB_FDS: Final = 2
_SPARE_NAME: Final = b"airlock-spare"
# The warm-up's job: a fast read of the trusted one-page document.
_WARM_KIND: Final = read.KIND
_WARM_ARGS: Final = {"max_chars": 1000, "engine": "fast", "pages": None, "password": None}
_WARM_DEADLINE_S: Final = 1.0
_JOB_NAME: Final = b"airlock-job"
# Heap a spare faults in and keeps for its job (at most this share of the job's memory budget),
# carved in blocks under glibc's smallest mmap threshold (128 KiB) so they come from the heap.
# A one-page read grows its heap by about 300 KiB; every page kept beyond what the job uses is a
# page fault of CPU spent for nothing (bench/perf/cpu_per_doc.py, the MCP row).
_HEAP_KEPT: Final = 1 << 20
_HEAP_KEPT_SHARE: Final = 16
_HEAP_BLOCK: Final = 64 << 10
_M_TRIM_THRESHOLD: Final = -1  # glibc <malloc.h>
_NO_TRIM: Final = 1 << 30
_ENGINE_ERRORS: Final = frozenset(
    {"PdfiumError", "PdfError", "QpdfRuntimeError", "DataDecodingError", "PSEOF", "PDFSyntaxError"}
)
# Pure-Python engines: whatever they raise from their own code is their reading of the document
# failing (pdfminer's LZW and TIFF-predictor decoders raise IndexError on damaged streams, its
# page-tree walk AttributeError on pages that are not references), never a bug of ours.
_PURE_PYTHON_ENGINES: Final = ("pdfminer",)
# The process's own symbols (libc's mallopt), opened in the zygote: a dlopen in the child is a load.
_PROGRAM: Final = ctypes.CDLL(None)


def _read_input(fd: int, max_bytes: int) -> bytes:
    """The whole input (a regular file or a memfd), read to EOF under the size cap. The first
    read asks for all of it at once: one buffer filled in place, where chunks and a join would
    fault in and copy every page twice (in a fresh child, half the page faults and the time).
    Reading on to EOF keeps a file that grew since it was measured whole, or over the cap."""
    chunk = os.pread(fd, min(os.lseek(fd, 0, os.SEEK_END), max_bytes) + 1, 0)
    chunks: list[bytes] = []
    total = 0
    while chunk:
        total += len(chunk)
        if total > max_bytes:
            raise WorkerError("output_limit", "the input grew past the size cap while being read")
        chunks.append(chunk)
        chunk = os.pread(fd, _READ_CHUNK, total)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _apply_limits(limits: Limits) -> None:
    """The job's limits that a library keeps in its own globals: qpdf's decode caps, OCR's."""
    from pdf_airlock.worker.pdf import ocr
    from pdf_airlock.worker.pdf.opening import apply_decode_limits

    apply_decode_limits(limits.memory_bytes // _DECODE_SHARE)
    ocr.apply_limits(limits.ocr)


def _execute(job: Job, limits: Limits, report: SandboxReport) -> Reply:
    try:
        _apply_limits(limits)
        if job.kind == PROBE_KIND:
            return Answer(run_probe(job.args, report))
        data = _read_input(CHILD_INPUT_FD, limits.max_input_bytes)
        parser = get_parser(job.kind)
        args = dict(job.args)
        progress.enable(bool(args.pop("report_progress", False)))
        result = parser(data, args)
    except strict_loads.LazyLoad as load:
        return _lazy_load_error(str(load))
    except Exception as exc:  # every failure becomes a typed error, not a crash
        return _error_for(exc)
    if strict_loads.violations():  # a library caught it, and may have returned wrong text
        return _lazy_load_error(strict_loads.violations()[0])
    return Answer(result)


def _lazy_load_error(detail: str) -> Failure:
    return Failure(
        "internal",
        f"a parser tried to load something after sandboxing ({detail}); the zygote's warm-up must preload it",
        {"lazy_load": detail},
    )


def _error_for(exc: Exception) -> Failure:
    if isinstance(exc, WorkerError):
        return Failure.of(exc)
    if isinstance(exc, MemoryError):
        return Failure("memory_limit", "the document needed more memory than the job's budget")
    if isinstance(exc, RecursionError):
        return Failure("malformed", "the document nests objects too deeply")
    if type(exc).__name__ in _ENGINE_ERRORS:  # an engine gave up on the document itself
        return Failure("malformed", f"the PDF engine could not parse the document ({type(exc).__name__})")
    where = _parser_frame(exc)
    engine = where.split(".", 1)[0].split(":", 1)[0]
    if engine in _PURE_PYTHON_ENGINES:
        return Failure(
            "malformed",
            f"the PDF engine could not parse the document ({engine}: {type(exc).__name__})",
            {"exception": type(exc).__name__, "frame": where},
        )
    return Failure(
        "internal",
        f"the parser failed ({type(exc).__name__} in {where}); the document may be unusual: try the "
        f"other engine (engine: fast or layout), fewer pages, or {RENDER_TOOL} to look at the pages",
        {"exception": type(exc).__name__, "frame": where},
    )


def _parser_frame(exc: BaseException) -> str:
    """``module:function:line`` of the innermost frame of the failure: code, never data (and no
    source lookup: the child can open no file)."""
    where = "unknown"
    for frame, line in traceback.walk_tb(exc.__traceback__):
        where = f"{frame.f_globals.get('__name__', '?')}:{frame.f_code.co_name}:{line}"
    return where


def _encode(reply: Reply, max_bytes: int) -> bytes:
    try:
        payload = json.dumps(reply.wire(), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError):
        payload = json.dumps(Failure("internal", "the parser produced a result that is not JSON").wire())
    encoded = payload.encode("utf-8", errors="replace")
    if len(encoded) > max_bytes:
        limit_error = Failure(
            "output_limit",
            f"the result is {len(encoded)} bytes, over the {max_bytes}-byte cap; select fewer pages",
            {"result_bytes": len(encoded), "max_result_bytes": max_bytes},
        )
        encoded = json.dumps(limit_error.wire()).encode()
    return encoded


def _receive_job(spare: socket.socket, flags: int = 0, *, keep: bool = False) -> Job | Failure | None:
    """The next job (BlockingIOError with MSG_DONTWAIT if it has not come yet); its two fds must
    land on 3 and 4. None: this spare was discarded (the supervisor or the zygote closed its socket).
    A ``Failure``: the job message did not have its shape (the reply to write for it).
    The socket is closed here unless ``keep`` (a child that may serve another job of its input)."""
    untrusted_fds = array.array("i")
    data, ancdata, msg_flags, _addr = spare.recvmsg(
        _MAX_JOB_MESSAGE, socket.CMSG_SPACE(_JOB_FDS * untrusted_fds.itemsize), flags
    )
    for level, kind, payload in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            untrusted_fds.frombytes(payload[: len(payload) - len(payload) % untrusted_fds.itemsize])
    if not keep or not data:
        spare.close()  # from here on only fds 0-4 are open
    if not data:
        return None
    if msg_flags & (socket.MSG_CTRUNC | socket.MSG_TRUNC) or list(untrusted_fds) != [
        CHILD_INPUT_FD,
        CHILD_RESULT_FD,
    ]:
        os._exit(EXIT_SANDBOX_FAILED)
    try:
        return Job.from_wire(data)
    except ProtocolError as exc:
        return Failure("internal", f"the job message is malformed ({exc})")


def _keep_heap(size: int) -> bool:
    """Fault in ``size`` bytes of heap now and keep them for the job. glibc hands freed memory
    at the top of the heap back to the kernel (trim), so without this the job's heap growth is
    fresh page faults on the critical path, most of a one-page read's faults (perf,
    ``exceptions:page_fault_user``). Trimming is turned off (the process exits after one job),
    then blocks are allocated, zero-filled and freed; the job reuses them. False, and nothing
    kept, without glibc's ``mallopt``."""
    try:
        if not _PROGRAM.mallopt(_M_TRIM_THRESHOLD, _NO_TRIM):
            return False
    except AttributeError:  # not glibc
        return False
    blocks = [bytearray(_HEAP_BLOCK) for _ in range(size // _HEAP_BLOCK)]
    del blocks
    return True


def _warm_job(limits: Limits) -> Job:
    """The warm-up's job, written and read back as a job message is."""
    sent = Job(0, _WARM_KIND, dict(_WARM_ARGS), limits, {}, _WARM_DEADLINE_S, _WARM_DEADLINE_S)
    return Job.from_wire(sent.to_wire())


def _warm_up(warm_pdf: bytes, limits: Limits) -> None:
    """The job's path once, inside the sandbox, over a trusted one-page document: the decode caps,
    a job message's JSON, the parse and the envelope's encoding. Their first-touch costs (copy-on-
    write faults on the zygote's pages, lazy set-up) are then paid before the job arrives; the
    job repeats each step itself. Best effort: the job runs either way."""
    try:
        _apply_limits(limits)
        job = _warm_job(limits)
        result = get_parser(job.kind)(warm_pdf, dict(job.args))
        _encode(Answer(result), limits.max_result_bytes)
    except Exception:  # noqa: S110 - an optimisation only; the job reports its own errors
        pass


def _serve(
    job: Job,
    served: int,
    limits: Limits,
    *,
    policy: SandboxPolicy,
    probed: dict[str, Any],
    report: SandboxReport,
) -> Reply:
    """Job number ``served`` of this child: it must match the spare's limits and sandbox (the
    sender makes sure); from the second on the CPU budget is renewed."""
    if job.limits != limits or SandboxPolicy.from_job(dict(job.sandbox), **probed) != policy:
        os._exit(EXIT_SANDBOX_FAILED)
    if served > 1:
        renew_cpu(limits)
    return _execute(job, limits, report)


def run_spare(
    parent_pid: int,
    spare_fd: int,
    limits: Limits,
    sandbox: dict[str, Any],
    *,
    probed: dict[str, Any],
    warm_pdf: bytes | None,
) -> NoReturn:
    """Sandbox this process for ``limits`` and the ``sandbox`` request, warm it unless ``warm_pdf``
    is None (a kept heap, then a warm-up parse, when no job is waiting yet), wait for one job on
    ``spare_fd``, run it, write the envelope, exit. Never returns; never runs twice."""
    try:
        policy = SandboxPolicy.from_job(dict(sandbox), **probed)
        if limits.nice:
            # Best effort: a container without setpriority still runs the job, at normal priority.
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, 0, limits.nice)
        set_name(_SPARE_NAME)
        if spare_fd != SPARE_SOCKET_FD:
            os.dup2(spare_fd, SPARE_SOCKET_FD, inheritable=False)
        # The socket object is made before seccomp: making one calls getsockname.
        spare = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, 0, fileno=SPARE_SOCKET_FD)
        report = enter_sandbox(parent_pid, {SPARE_SOCKET_FD: SPARE_SOCKET_FD}, limits, policy)
        strict_loads.install()
    except BaseException:  # a sandbox that cannot be built must not run the parser
        os._exit(EXIT_SANDBOX_FAILED)
    keep = limits.documents > 1
    # A deadline that runs out (OCR's per page) answers on the result pipe and ends the child.
    deadline.enable(CHILD_RESULT_FD, SPARE_SOCKET_FD if keep else -1)
    try:
        try:
            job = _receive_job(spare, socket.MSG_DONTWAIT, keep=keep)
        except BlockingIOError:  # no job waiting yet: warm up (off the critical path), then block
            if warm_pdf is not None:  # none for a cold spare (``batch``: CPU, not latency)
                _keep_heap(min(_HEAP_KEPT, limits.memory_bytes // _HEAP_KEPT_SHARE))
                _warm_up(warm_pdf, limits)
            job = _receive_job(spare, keep=keep)
        served = 0
        while job is not None:
            served += 1
            set_name(_JOB_NAME)
            reply = (
                job
                if isinstance(job, Failure)
                else _serve(job, served, limits, policy=policy, probed=probed, report=report)
            )
            last = served >= limits.documents or not reply.ok or bool(strict_loads.violations())
            if keep and last:
                spare.close()  # before the result's EOF: the supervisor then sees this child will not go on
            progress.write_all(CHILD_RESULT_FD, _encode(reply, limits.max_result_bytes))
            os.close(CHILD_RESULT_FD)  # EOF now: the supervisor may answer before this exit is reaped
            if last:
                break
            os.close(CHILD_INPUT_FD)  # fds 3 and 4 free again for the next job's
            set_name(_SPARE_NAME)
            job = _receive_job(spare, keep=True)
    except BaseException:  # nothing may escape the child's exit path
        os._exit(EXIT_WRITE_FAILED)
    os._exit(EXIT_OK)
