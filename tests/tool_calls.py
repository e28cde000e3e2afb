"""Every tool's call, derived from the registry: the tests' lists of "every tool" come from here.

``every_call()`` gives one call per tool of ``pdf_airlock.server.tools.registry.TOOLS`` and one
per engine of a tool that has several (the read's ``fast`` and ``layout``), each with its
required arguments filled in from the tool's declared ``example``, so a new tool or engine joins
every such list by itself. A new required argument fails here loudly until the tool's
``example`` gives it a value. ``every_job()`` gives
the job (kind and arguments) the server sends for each of those calls, built by the tool's own
code (run up to its first job, which is recorded instead of run): for the tests that talk to
the pool directly.
"""

from __future__ import annotations

import typing
from typing import Any, Final

from pdf_airlock.server.tools.registry import TOOLS

__all__ = ["every_call", "every_job", "job_kinds", "job_of"]

_DOCUMENT_FIELDS: Final = frozenset({"path", "data"})
_ENGINE: Final = "engine"


def _engines(tool: str) -> tuple[str, ...]:
    field = TOOLS[tool].input_model.model_fields.get(_ENGINE)
    return typing.get_args(field.annotation) if field is not None else ()


def every_call(overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, tuple[str, dict[str, Any]]]:
    """Label -> (tool, arguments) for every tool and engine, in the registry's order: the label is
    the tool's name, or ``"<tool> <engine>"`` for each engine but the default. ``overrides``
    (by tool name) are merged into that tool's arguments."""
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, spec in TOOLS.items():
        args: dict[str, Any] = {
            field: spec.example[field]  # KeyError: a new required argument wants a value in ``example``
            for field, info in spec.input_model.model_fields.items()
            if info.is_required() and field not in _DOCUMENT_FIELDS
        }
        args |= (overrides or {}).get(name, {})
        calls[name] = (name, args)
        default = spec.input_model.model_fields[_ENGINE].default if _engines(name) else None
        for engine in _engines(name):
            if engine != default:
                calls[f"{name} {engine}"] = (name, args | {_ENGINE: engine})
    return calls


def job_kinds() -> frozenset[str]:
    """Every tool's job kind (the worker's ``TOOL_KINDS``: tests/unit/test_layout.py checks they match)."""
    from pdf_airlock.worker.parsers import TOOL_KINDS

    return frozenset(TOOL_KINDS)


class _Recorded(Exception):
    """The first job a tool asked for: (kind, job arguments)."""

    def __init__(self, kind: str, args: dict[str, Any]) -> None:
        super().__init__(kind)
        self.kind = kind
        self.job_args = args


class _Recorder:
    """A ``JobRunner`` that records the first job a tool asks for and stops the tool there. It
    has no room for optional jobs: a tool asks for its one whole job (a two-ended read, one)."""

    max_result_bytes = 16 << 20

    def __init__(self) -> None:
        from pdf_airlock.server.tools.page_counts import SelectionMemo

        self.selections = SelectionMemo()

    def progress(self) -> None:
        return None

    def start_detached(self, fn: Any) -> None:
        raise AssertionError("a tool started a job beside the call before its first job")

    async def slots_free(self, jobs: int) -> bool:
        return False

    def room_for_optional(self, jobs: int = 1, *, last_spare: bool = False) -> bool:
        return False

    async def run_job(self, kind: str, args: dict[str, Any], document: Any, model: Any, **_: Any) -> Any:
        raise _Recorded(kind, args)


def job_of(tool: str, arguments: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The job kind and arguments the server sends for a call of ``tool`` with ``arguments``
    (no ``path`` needed): the tool's own code builds them, up to its first job."""
    import anyio

    from pdf_airlock.server.boundary.paths import Document

    spec = TOOLS[tool]
    args = spec.input_model.model_validate({"path": "x.pdf", **arguments})
    document = Document(fd=-1, size=1, sha256="0" * 64, display="x.pdf")

    async def first_job() -> tuple[str, dict[str, Any]]:
        try:
            await spec.run(_Recorder(), args, document)
        except _Recorded as job:
            return job.kind, job.job_args
        raise AssertionError(f"{tool} ran no job")

    return anyio.run(first_job)


def every_job(overrides: dict[str, dict[str, Any]] | None = None) -> dict[str, tuple[str, dict[str, Any]]]:
    """Label -> (job kind, job arguments) of ``every_call``: what the sandbox sees of each."""
    return {label: job_of(tool, args) for label, (tool, args) in every_call(overrides).items()}
