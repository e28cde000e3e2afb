"""Judging a finished job: exit status and untrusted output become a result dict or a ToolError.

Classification (DESIGN.md, "Errors"): a deadline kill is ``timeout``; SIGXCPU is ``cpu_limit``;
SIGSYS is ``sandbox_violation``; a memory-exhaustion death (an abort or kill whose own peak RSS,
above what it inherited from the zygote, is near the budget) is ``memory_limit``; other signals
are ``crashed``; output over the cap is ``output_limit``; unreadable output, or a reply without
the shape of ``contract.Reply``, is ``crashed``. Only a clean exit with a well-formed reply
yields a result, which is still untrusted until the tool's model validates it. A job answered
on a complete envelope before its exit was reaped (``status`` None, see
``pdf_airlock.server.pool.pool``) is judged by that envelope alone; every job without one is
classified by its exit status as above.
"""

from __future__ import annotations

import json
import os
import signal
from typing import Any, Final

from pdf_airlock.server.boundary.sanitize import clean_text
from pdf_airlock.server.errors import CODES, ToolError
from pdf_airlock.server.pool.child_output import JobOutcome
from pdf_airlock.worker.contract import Answer, Failure, ProtocolError, decode_reply

__all__ = ["classify"]

# The budget is address space above the forked child's own (RLIMIT_AS, see
# pdf_airlock.worker.sandbox.rlimits). A failing allocation under it is usually a buffer doubling
# past the budget, so what the child itself made resident at that moment is about half the budget:
# an abort-like death whose peak RSS, less what the child started with (``base_rss_kb``, the
# zygote's anonymous memory: Tesseract's models alone are hundreds of MiB), is at or above this
# share of the budget is reported as memory exhaustion rather than a crash.
_MEMORY_NEAR_BUDGET: Final = 0.45
_EXIT_SANDBOX_FAILED: Final = 71
_MEMORY_SIGNALS: Final = frozenset(
    {signal.SIGABRT, signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGTRAP, signal.SIGKILL}
)


def _signal_error(sig: int, outcome: JobOutcome, memory_budget: int) -> ToolError:
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
    peak = int(outcome.rusage.get("maxrss_kb", 0)) * 1024
    inherited = int(outcome.rusage.get("base_rss_kb", 0)) * 1024
    details = {"signal": name, "peak_rss_bytes": peak}
    if sig == signal.SIGXCPU:
        return ToolError("cpu_limit", "the parse used up its CPU-time budget", details)
    if sig == signal.SIGSYS:
        return ToolError("sandbox_violation", "the parser attempted a forbidden system call", details)
    if sig in _MEMORY_SIGNALS and peak - inherited >= _MEMORY_NEAR_BUDGET * memory_budget:
        return ToolError("memory_limit", "the parse exhausted its memory budget", details)
    return ToolError("crashed", f"the parser crashed ({name})", details)


def _check_status(outcome: JobOutcome, status: int, memory_budget: int) -> None:
    if os.WIFSIGNALED(status):
        raise _signal_error(os.WTERMSIG(status), outcome, memory_budget)
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
    if code == _EXIT_SANDBOX_FAILED:
        raise ToolError("internal", "the sandbox could not be set up for this job")
    if code != 0:
        raise ToolError("crashed", f"the parser exited with status {code}", {"exit_status": code})


def classify(outcome: JobOutcome, memory_budget: int, deadline_s: float) -> dict[str, Any]:
    """Return the untrusted result dict of a successful job, or raise the matching ToolError."""
    if outcome.output_overflow:  # before "killed": the supervisor killed it for this very reason
        raise ToolError("output_limit", "the result exceeded the result-size cap; select fewer pages")
    if outcome.killed:
        raise ToolError("cancelled", "the call was cancelled")
    if outcome.deadline_hit:
        raise ToolError("timeout", f"the parse did not finish within {deadline_s:g} s (--timeout)")
    if outcome.status is not None:
        _check_status(outcome, outcome.status, memory_budget)
    untrusted_envelope: Any = outcome.untrusted_envelope
    if untrusted_envelope is None:
        try:
            untrusted_envelope = json.loads(outcome.untrusted_output)
        except (ValueError, UnicodeDecodeError, RecursionError) as exc:  # nested past the parser's depth
            raise ToolError("crashed", "the job child returned unreadable output") from exc
    try:
        untrusted_reply = decode_reply(untrusted_envelope)
    except ProtocolError as exc:
        part = str(exc).partition(":")[0]
        raise ToolError("crashed", _MALFORMED.get(part, _MALFORMED["envelope"])) from None
    if isinstance(untrusted_reply, Answer):
        return untrusted_reply.result
    raise from_untrusted(untrusted_reply)


# What a reply ``decode_reply`` refuses was missing, by the part it names.
_MALFORMED: Final = {
    "envelope": "the job child returned a malformed envelope",
    "result": "the job child returned no result",
    "error": "the job child returned a malformed error",
}
_MAX_MESSAGE_CHARS: Final = 500
_MAX_DETAIL_KEYS: Final = 16


def _scalar(value: object) -> bool:
    return isinstance(value, (int, float, bool)) or value is None


def from_untrusted(untrusted: Failure) -> ToolError:
    """Build a ToolError from a job child's ``Failure`` (its types checked, nothing else): a code
    the server knows or ``internal``, the message cleaned and cut, scalar details only."""
    code = untrusted.code if untrusted.code in CODES else "internal"
    message = clean_text(untrusted.message[: _MAX_MESSAGE_CHARS * 4])[0]
    details: dict[str, Any] = {}
    for key, value in list(untrusted.details.items())[:_MAX_DETAIL_KEYS]:
        if isinstance(key, str) and _scalar(value):
            details[clean_text(key[:256])[0][:64]] = value
    return ToolError(code, message[:_MAX_MESSAGE_CHARS], details)
