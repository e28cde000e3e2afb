"""The interface tools need from the server: run a job kind on an open document.

Implemented by ``server.app.App``; a Protocol so tool code and the page-range splitter can be
typed without importing the application core.
"""

from __future__ import annotations

from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from server.joboutput import ProgressFn
from server.paths import Document

__all__ = ["JobRunner"]

ModelT = TypeVar("ModelT", bound=BaseModel)


class JobRunner(Protocol):
    workers: int

    def progress(self) -> ProgressFn | None:
        """The current call's progress callback, if the client asked for progress."""

    async def run_job(
        self, kind: str, args: dict[str, Any], document: Document, model: type[ModelT], *, report: bool = True
    ) -> tuple[ModelT, list[str]]:
        """Run ``kind`` in a sandboxed job child; returns the validated result and warnings."""
