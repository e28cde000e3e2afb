"""``pdf-airlock batch``: one JSON line per document, typed errors, resumable by sha256."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import HELLO_PAGES, PROJECT


def batch(out: Path, *paths: Path, tool: str = "pdf_read") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "server", "batch", tool, *map(str, paths), "--out", str(out)]
    command += ["--jobs", "2"]
    return subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, timeout=120, check=False)


def test_batch_writes_a_line_per_document_and_resumes(docs: Path, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("hello.pdf", "columns.pdf", "not-a-pdf.pdf", "encrypted.pdf"):
        shutil.copy(docs / name, folder / name)
    out = tmp_path / "results.jsonl"
    first = batch(out, folder)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    by_name = {Path(line["path"]).name: line for line in lines}
    assert first.returncode == 1
    assert "ok: 2" in first.stderr and "not_a_pdf: 1" in first.stderr and "encrypted: 1" in first.stderr
    assert by_name["hello.pdf"]["ok"] is True
    assert by_name["hello.pdf"]["result"]["pages"][0]["text"] == HELLO_PAGES[0]
    assert by_name["hello.pdf"]["sha256"] == hashlib.sha256((folder / "hello.pdf").read_bytes()).hexdigest()
    assert by_name["not-a-pdf.pdf"]["error"]["code"] == "not_a_pdf"
    shutil.copy(docs / "long.pdf", folder / "new.pdf")
    second = batch(out, folder)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert second.returncode == 0
    assert "skipped: 4" in second.stderr and "ok: 1" in second.stderr
    assert len(lines) == 5 and Path(lines[-1]["path"]).name == "new.pdf"


def test_batch_keeps_rendered_images(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "renders.jsonl"
    run = batch(out, docs / "hello.pdf", docs / "not-a-pdf.pdf", tool="pdf_render")
    lines = {Path(line["path"]).name: line for line in map(json.loads, out.read_text().splitlines())}
    assert run.returncode == 1
    image = lines["hello.pdf"]["images"][0]
    png = base64.b64decode(image["data_base64"])
    assert image["mime_type"] == "image/png" and png.startswith(b"\x89PNG\r\n\x1a\n")
    assert hashlib.sha256(png).hexdigest() == lines["hello.pdf"]["result"]["image"]["png_sha256"]
    assert "images" not in lines["not-a-pdf.pdf"]
