"""structlog configuration: JSON lines on stderr only (stdout belongs to the protocol)."""

from __future__ import annotations

import logging
import sys

import structlog

__all__ = ["configure_logging"]


def configure_logging(level: str = "info") -> None:
    """structlog's own events, and records from the standard library's ``logging`` (asyncio, the
    MCP SDK, other libraries: warnings and up) and Python warnings, all as one JSON object a
    line on stderr."""
    numeric = logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
    stamped: list[structlog.typing.Processor] = [
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *stamped],
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
        processors=[*stamped, structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
