"""The probe job (``contract.PROBE_KIND``): what ``pdf-airlock self-test`` and every server's
start-up learn from a real, sandboxed job child.

It reads no document: the child reports the sandbox layers it entered, and, when asked, OCRs
the trusted sample page under the job's OCR limits and renders the fallback fonts' page
(``pdf_airlock.worker.fonts.check``).
"""

from __future__ import annotations

from typing import Any

from pdf_airlock.worker import fonts
from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.parsers import read
from pdf_airlock.worker.pdf import ocr
from pdf_airlock.worker.pdf.sample import SAMPLE_TEXT, tiny_pdf
from pdf_airlock.worker.sandbox.layers import SandboxReport

__all__ = ["run_probe"]


def run_probe(args: dict[str, Any], report: SandboxReport) -> dict[str, Any]:
    """The layers ``report`` says were entered, their set-up times, ``ocr`` with ``args["ocr"]``
    and ``fonts`` with ``args["fonts"]``."""
    probe: dict[str, Any] = {"layers": report.layers, "micros": report.micros}
    if args.get("ocr"):
        probe["ocr"] = self_check()
    if args.get("fonts"):
        probe["fonts"] = fonts.self_check()
    return probe


def self_check() -> str:
    """In a sandboxed child (``pdf-airlock self-test``): OCR the trusted sample page with
    the read parser under the job's OCR limits (``ocr.apply_limits``) and say how it went, as a layer
    status: ``active: ...``, ``unavailable: ...`` or ``failed: ...``."""
    if not ocr.available():
        return f"unavailable: {ocr.unavailable_reason()}"
    try:
        page = read.run(tiny_pdf(), {"max_chars": 1000, "ocr": "force"})["pages"][0]
    except WorkerError as exc:
        return f"failed: {exc.code}: {exc.message}"
    except (RuntimeError, MemoryError) as exc:
        return f"failed: {type(exc).__name__}"
    if SAMPLE_TEXT not in page["text"]:
        return "failed: the sample page was misread"
    detection = (
        "scripts and orientation detected" if ocr.detects() else "no script detection (osd not installed)"
    )
    return (
        f"active: read the sample page (confidence {page['ocr_confidence']}); {detection}; "
        f"languages: {', '.join(ocr.languages())}"
    )
