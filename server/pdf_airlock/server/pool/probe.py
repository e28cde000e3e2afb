"""The sandbox probe: a probe job in a real job child reports every sandbox layer.

Run at start-up by every front end (stdio, HTTP, batch: logged to stderr; with
``--require-sandbox`` a server refuses to start when a required layer is not active) and by
``pdf-airlock self-test`` (``pdf_airlock.server.cli.selftest``).
"""

from __future__ import annotations

import os
from typing import Any, Final

from pdf_airlock.server.config import Settings
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.worker.contract import PROBE_KIND, SANDBOX_LAYERS

__all__ = ["LAYERS", "missing_layers", "probe_layers", "summary"]

LAYERS: Final = SANDBOX_LAYERS
_PROBE_DEADLINE_S: Final = 10.0
_MAX_STATUS: Final = 200
_MAX_OCR_STATUS: Final = 1000  # the OCR line names every installed language (at most 64)


async def probe_layers(pool: Pool, settings: Settings, *, checks: bool = False) -> dict[str, str]:
    """Layer name -> status string, as reported by a real, sandboxed job child. With ``checks``
    the child also OCRs a trusted sample page, reported as ``ocr``, and renders one naming
    fonts it does not embed, reported as ``fonts``."""
    fd = os.memfd_create("pdf-airlock-probe", os.MFD_CLOEXEC)
    try:
        outcome = await pool.run(
            PROBE_KIND,
            {"ocr": checks, "fonts": checks},
            fd,
            limits=settings.job_limits(),
            deadline_s=_PROBE_DEADLINE_S,
        )
    finally:
        os.close(fd)
    untrusted = classify(outcome, settings.memory_bytes, _PROBE_DEADLINE_S)
    untrusted_layers = untrusted.get("layers")
    if not isinstance(untrusted_layers, dict):
        raise ToolError("crashed", "the probe child returned no layer report")
    layers = {name: str(untrusted_layers.get(name, "missing"))[:_MAX_STATUS] for name in LAYERS}
    if checks:
        layers["ocr"] = str(untrusted.get("ocr", "missing"))[:_MAX_OCR_STATUS]
        layers["fonts"] = str(untrusted.get("fonts", "missing"))[:_MAX_STATUS]
    return layers


def missing_layers(layers: dict[str, str], required: tuple[str, ...]) -> list[str]:
    return [name for name in required if not layers.get(name, "").startswith("active")]


def summary(layers: dict[str, Any]) -> dict[str, str]:
    return {name: str(status).split(":")[0] for name, status in layers.items()}
