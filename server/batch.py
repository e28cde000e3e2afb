"""Pipeline mode: ``pdf-airlock batch TOOL PATHS... --jobs N --out results.jsonl``.

Runs one tool over many documents through the same supervisor, pool and sandbox as the MCP
server, ``--jobs`` at a time. Writes one JSON line per document (appended, flushed per line):
``{"path", "sha256", "ok": true, "result": {...}}`` or ``{"path", "sha256", "ok": false,
"error": {code, message, retryable, details}}``; tools that return images (``pdf_render``,
``pdf_images`` with ``extract``) add ``"images": [{"mime_type", "data_base64"}]``. Resumable:
documents whose sha256 already has a line in the output are skipped. A progress bar goes to
stderr. Exit status 0 when every document succeeded, 1 when any failed, 2 on bad usage.
"""

from __future__ import annotations

import functools
import json
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import anyio
from tqdm import tqdm

from server.app import App
from server.config import DEFAULTS, Settings
from server.errors import ToolError
from server.pool import Pool

__all__ = ["run_batch"]


def expand(paths: list[Path]) -> Iterator[Path]:
    """Files as given; directories recursively for ``*.pdf`` (sorted, so runs are repeatable)."""
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() == ".pdf")
        else:
            yield path


def done_digests(out: Path) -> set[str]:
    if not out.exists():
        return set()
    digests = set()
    for line in out.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            digests.add(str(json.loads(line)["sha256"]))
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line from an interrupted run: that document runs again
    return digests


async def _one(
    app: App, tool: str, arguments: dict[str, Any], path: Path, skip: set[str]
) -> dict[str, Any] | None:
    try:
        document = app.policy.open_path(str(path.resolve()))
    except ToolError as error:
        return {"path": str(path), "sha256": None, "ok": False, "error": error.to_dict()}
    digest = document.sha256
    document.close()
    if digest in skip:
        return None
    result = await app.call_tool(tool, arguments | {"path": str(path.resolve())})
    line: dict[str, Any] = {"path": str(path), "sha256": digest, "ok": not result.is_error}
    structured = result.structured_content or {}
    line["error" if result.is_error else "result"] = (
        structured.get("error") if result.is_error else structured
    )
    images = [block for block in result.content if block.type == "image"]
    if images:  # pdf_render, pdf_images with extract: the PNGs themselves
        line["images"] = [{"mime_type": block.mime_type, "data_base64": block.data} for block in images]
    return line


async def _run(
    settings: Settings,
    tool: str,
    arguments: dict[str, Any],
    *,
    files: list[Path],
    out: TextIO,
    skip: set[str],
) -> Counter[str]:
    outcomes: Counter[str] = Counter()
    queue = iter(files)
    bar = tqdm(total=len(files), unit="doc", file=sys.stderr, dynamic_ncols=True)
    async with Pool(
        settings.workers, len(files) + 1, DEFAULTS.zygote_start_timeout_s, settings.kill_grace_s
    ) as pool:
        app = App(settings, pool)

        async def worker() -> None:
            for path in queue:
                line = await _one(app, tool, arguments, path, skip)
                if line is None:
                    outcomes["skipped"] += 1
                else:
                    outcomes["ok" if line["ok"] else line["error"]["code"]] += 1
                    out.write(json.dumps(line, ensure_ascii=False) + "\n")
                    out.flush()
                bar.update(1)

        async with anyio.create_task_group() as tg:
            for _ in range(settings.workers):
                tg.start_soon(worker)
    bar.close()
    return outcomes


def run_batch(settings: Settings, tool: str, arguments: dict[str, Any], paths: list[Path], out: Path) -> int:
    files = list(expand(paths))
    skip = done_digests(out)
    with out.open("a", encoding="utf-8") as handle:
        outcomes = anyio.run(
            functools.partial(_run, settings, tool, arguments, files=files, out=handle, skip=skip)
        )
    failed = sum(count for code, count in outcomes.items() if code not in ("ok", "skipped"))
    summary = ", ".join(f"{code}: {count}" for code, count in sorted(outcomes.items()))
    sys.stderr.write(f"pdf-airlock batch: {len(files)} document(s); {summary}\n")
    return 1 if failed else 0
