"""structlog configuration: JSON lines on stderr only (stdout belongs to the protocol)."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Iterator

import structlog

__all__ = ["configure_logging", "lines_to", "report_logger"]

_STAMPED: list[structlog.typing.Processor] = [
    structlog.processors.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


class _LogStream:
    """Where every log line is written: stderr, or while ``lines_to`` holds, a function given
    each whole line (a progress bar on stderr puts them above itself)."""

    def __init__(self) -> None:
        self.sink: Callable[[str], None] | None = None
        self.partial = ""

    def write(self, text: str) -> int:
        if self.sink is None:
            return sys.stderr.write(text)
        self.partial += text  # print() writes a line and its newline separately
        *lines, self.partial = self.partial.split("\n")
        for line in lines:
            self.sink(line)
        return len(text)

    def flush(self) -> None:
        if self.sink is None:
            sys.stderr.flush()


_STREAM = _LogStream()


def configure_logging(level: str = "info") -> None:
    """structlog's own events, and records from the standard library's ``logging`` (asyncio, the
    MCP SDK, other libraries: warnings and up) and Python warnings, all as one JSON object a
    line on stderr."""
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    handler = logging.StreamHandler(_STREAM)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *_STAMPED],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    logging.basicConfig(handlers=[handler], level=max(numeric, logging.WARNING), force=True)
    logging.captureWarnings(True)  # ``warnings.warn`` too, as the "py.warnings" logger
    structlog.configure(
        processors=[*_STAMPED, structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=_STREAM),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )


def report_logger() -> structlog.typing.FilteringBoundLogger:
    """A logger whose events are written whatever ``--log-level`` is (a command's own progress
    and summary), in the same JSON and to the same stream as the logs."""
    return structlog.wrap_logger(  # type: ignore[no-any-return]
        structlog.PrintLogger(file=_STREAM),  # type: ignore[arg-type]
        processors=[*_STAMPED, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(logging.NOTSET),
    )


@contextlib.contextmanager
def lines_to(sink: Callable[[str], None]) -> Iterator[None]:
    """Hand every whole log line to ``sink`` instead of writing it to stderr, until the end."""
    _STREAM.sink, _STREAM.partial = sink, ""
    try:
        yield
    finally:
        if _STREAM.partial:
            sink(_STREAM.partial)
        _STREAM.sink, _STREAM.partial = None, ""
