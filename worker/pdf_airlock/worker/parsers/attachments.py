"""``pdf_attachments``: embedded files, listed, and one of them extracted as bytes on request.

Input: untrusted bytes. Attachment names are shown as stored (cleaned of control characters)
and as a safe base name; names that try to climb directories are flagged. The attachment's bytes
are decoded by qpdf under the job's decode caps and never parsed. Where the embedded files
alone are encrypted and the password does not open them, the document still opens (see
``pdf_airlock.worker.pdf.decrypt``); nothing is listed then and a warning says why.
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
from typing import Any, Final

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.decrypt import attachments_locked
from pdf_airlock.worker.pdf.opening import clean_string, open_pikepdf

__all__ = ["DECRYPT_WARM_ARGS", "KIND", "run", "warm_up"]

KIND: Final = "pdf_attachments"
# The job arguments of this parser's warm-up on encrypted samples (``pdf_airlock.worker.warmup``).
DECRYPT_WARM_ARGS: Final[dict[str, Any]] = {"max_bytes": 100, "max_items": 10}


def _safe_name(name: str) -> str:
    base = posixpath.basename(name.replace("\\", "/")).strip() or "attachment"
    return "".join(ch if ch.isprintable() and ch not in '/\\:*?"<>|' else "_" for ch in base)[:255]


def _date(value: object) -> str | None:
    return None if value is None else clean_string(value, 64)


def _locked(count: int, wanted: str | None, password: str | None, warnings: list[str]) -> dict[str, Any]:
    """The answer when the attachments' contents are encrypted: their size and digest are unknown."""
    if wanted is not None:
        code = "wrong_password" if password else "encrypted"
        raise WorkerError(code, "the attachments are encrypted; pass the password that opens them")
    warnings.append(f"{count} attachment(s) not listed: their contents are encrypted")
    return {"attachments": [], "extracted": None, "next_start": None, "warnings": warnings}


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    wanted = args.get("extract")
    max_bytes = int(args["max_bytes"])
    start = int(args.get("start", 0))
    end = start + int(args["max_items"])
    next_start = None
    warnings: list[str] = []
    files: list[dict[str, Any]] = []
    extracted: dict[str, Any] | None = None
    with open_pikepdf(data, args.get("password"), warnings) as pdf:
        if attachments_locked(pdf):
            return _locked(len(pdf.attachments), wanted, args.get("password"), warnings)
        for index, (name, spec) in enumerate(pdf.attachments.items()):
            listed = start <= index < end
            if index >= end and next_start is None:
                next_start = index
            if not listed and (wanted is None or name != wanted):
                if next_start is not None and (wanted is None or extracted is not None):
                    break
                continue
            stored = clean_string(name, 1000)
            attached = spec.get_file()
            content = attached.read_bytes()
            entry = {
                "name": stored,
                "safe_name": _safe_name(stored),
                "path_traversal": ".." in stored.replace("\\", "/").split("/")
                or stored.startswith(("/", "\\")),
                "size": len(content),
                "mime_type": clean_string(attached.mime_type, 128) if attached.mime_type else None,
                "sha256": hashlib.sha256(content).hexdigest(),
                "created": _date(attached.creation_date),
                "modified": _date(attached.mod_date),
                "description": clean_string(spec.description, 1000) if spec.description else None,
            }
            if listed:
                files.append(entry)
            if wanted is not None and name == wanted:
                if len(content) > max_bytes:
                    raise WorkerError(
                        "output_limit",
                        f"the attachment is {len(content)} bytes, over max_bytes {max_bytes}",
                        {"size": len(content), "max_bytes": max_bytes},
                    )
                extracted = {"name": stored, "data_base64": base64.b64encode(content).decode()}
    if wanted is not None and extracted is None:
        raise WorkerError(
            "invalid_arguments", "no attachment has that name (names are listed without extract)"
        )
    return {"attachments": files, "extracted": extracted, "next_start": next_start, "warnings": warnings}


def warm_up(sample: bytes) -> None:
    listed = run(sample, {"max_bytes": 100, "max_items": 10, "extract": "warm-up.txt"})
    if listed["extracted"] is None:
        raise RuntimeError("pdf_attachments failed its warm-up")
