"""The closed error taxonomy of tool calls, supervisor side.

Every failed ``tools/call`` becomes a ``CallToolResult`` with ``isError: true`` and
``structuredContent.error = {code, message, retryable, details}``. Codes reported by a job child
are checked against ``CODES``; anything else becomes ``internal``.
"""

from __future__ import annotations

from typing import Any, Final

from pdf_airlock.worker.contract import WORKER_CODES

__all__ = ["CODES", "RETRYABLE", "ToolError", "from_untrusted"]

# The job child's codes (the contract) and the ones only the supervisor reports.
CODES: Final[frozenset[str]] = WORKER_CODES | frozenset(
    {
        "path_denied",
        "not_found",
        "not_a_file",
        "too_large",
        "cpu_limit",
        "crashed",
        "sandbox_violation",
        "cancelled",
        "overloaded",
        "worker_unavailable",
    }
)

RETRYABLE: Final[frozenset[str]] = frozenset({"overloaded", "worker_unavailable", "cancelled"})

_MAX_MESSAGE_CHARS: Final = 500
_MAX_DETAIL_KEYS: Final = 16


class ToolError(Exception):
    """A typed tool failure; ``message`` is short and never contains document bytes."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        if code not in CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}

    @property
    def retryable(self) -> bool:
        return self.code in RETRYABLE

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            "retryable": self.retryable,
            "details": self.details,
        }


def _scalar(value: object) -> bool:
    return isinstance(value, (int, float, bool)) or value is None


def from_untrusted(untrusted_error: object) -> ToolError:
    """Build a ToolError from a job child's error object, keeping only what is well-formed."""
    from pdf_airlock.server.policy.sanitize import clean_text

    if not isinstance(untrusted_error, dict):
        return ToolError("crashed", "the job child returned a malformed error")
    untrusted_code = untrusted_error.get("code")
    untrusted_message = untrusted_error.get("message")
    untrusted_details = untrusted_error.get("details")
    code = untrusted_code if isinstance(untrusted_code, str) and untrusted_code in CODES else "internal"
    message = clean_text(untrusted_message)[0] if isinstance(untrusted_message, str) else "parse failed"
    details: dict[str, Any] = {}
    if isinstance(untrusted_details, dict):
        for key, value in list(untrusted_details.items())[:_MAX_DETAIL_KEYS]:
            if isinstance(key, str) and _scalar(value):
                details[clean_text(key)[0][:64]] = value
    return ToolError(code, message[:_MAX_MESSAGE_CHARS], details)
