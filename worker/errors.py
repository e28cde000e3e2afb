"""Error codes the job child may report, and the exception that carries them.

This is the worker's own copy of the closed set of codes that cross the trust boundary; the
supervisor keeps its copy in ``server/errors.py`` and maps anything unknown to ``internal``.
Messages must never contain document bytes or passwords.
"""

from __future__ import annotations

from typing import Final

__all__ = ["CODES", "WorkerError"]

CODES: Final[frozenset[str]] = frozenset(
    {
        "not_a_pdf",
        "encrypted",
        "wrong_password",
        "malformed",
        "page_out_of_range",
        "memory_limit",
        "output_limit",
        "decompression_limit",
        "invalid_arguments",
        "timeout",
        "internal",
    }
)


class WorkerError(Exception):
    """A failure the job child reports as a typed error instead of a result."""

    def __init__(self, code: str, message: str, details: dict[str, object] | None = None) -> None:
        if code not in CODES:
            raise ValueError(f"unknown worker error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
