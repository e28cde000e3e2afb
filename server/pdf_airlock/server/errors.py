"""The closed error taxonomy of tool calls, supervisor side.

Every failed ``tools/call`` becomes a ``CallToolResult`` with ``isError: true`` and
``structuredContent.error = {code, message, retryable, details}``. Codes reported by a job child
are checked against ``CODES``; anything else becomes ``internal``.
"""

from __future__ import annotations

from typing import Any, Final

from pdf_airlock.worker.contract import WORKER_CODES

__all__ = ["CODES", "RETRYABLE", "ToolError"]

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
