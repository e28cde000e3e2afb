"""``pdf-airlock batch``: one JSON line per document, typed errors, resumable by sha256."""

from __future__ import annotations

import base64
import fcntl
import hashlib
import io
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from conftest import HELLO_PAGES, PROJECT

from pdf_airlock.server.batch.inputs import Unlisted, documents


def batch(
    out: Path, *paths: Path, tool: str = "pdf_read", extra: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pdf_airlock.server", "batch", tool, *map(str, paths), "--out", str(out)]
    command += ["--jobs", "2", *extra]
    return subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, timeout=120, check=False)


def events(run: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    """stderr, every line of which is a JSON object (stderr is not a terminal: no bar)."""
    return [json.loads(line) for line in run.stderr.splitlines()]


def outcomes(run: subprocess.CompletedProcess[str]) -> object:
    """The count of each outcome in the run's one closing ``batch_done`` event."""
    [done] = [event for event in events(run) if event["event"] == "batch_done"]
    return done["outcomes"]


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
    assert outcomes(first) == {"ok": 2, "not_a_pdf": 1, "encrypted": 1}
    assert by_name["hello.pdf"]["ok"] is True
    assert by_name["hello.pdf"]["result"]["pages"][0]["text"] == HELLO_PAGES[0]
    assert by_name["hello.pdf"]["sha256"] == hashlib.sha256((folder / "hello.pdf").read_bytes()).hexdigest()
    assert by_name["not-a-pdf.pdf"]["error"]["code"] == "not_a_pdf"
    shutil.copy(docs / "long.pdf", folder / "new.pdf")
    second = batch(out, folder)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert second.returncode == 0
    assert outcomes(second) == {"skipped": 4, "ok": 1}
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


def run_json(out: Path, *paths: Path, tool: str, arguments: dict[str, object], extra: tuple[str, ...] = ()):
    command = [sys.executable, "-m", "pdf_airlock.server", "batch", tool, *map(str, paths), "--out", str(out)]
    command += ["--jobs", "2", "--json", json.dumps(arguments), *extra]
    run = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, timeout=120, check=False)
    return run, [json.loads(line) for line in out.read_text().splitlines()]


def test_batch_follows_cursors_to_the_whole_result(docs: Path, tmp_path: Path) -> None:
    """A line holds every page, hit and item, however small the parts: the same as one part."""
    _, [whole] = run_json(tmp_path / "whole.jsonl", docs / "long.pdf", tool="pdf_read", arguments={})
    run, [parted] = run_json(
        tmp_path / "parts.jsonl", docs / "long.pdf", tool="pdf_read", arguments={"max_chars": 700}
    )
    texts = [page["text"] for page in whole["result"]["pages"]]
    assert run.returncode == 0 and outcomes(run) == {"ok": 1}
    assert len(texts) == 20 and sum(map(len, texts)) > 10 * 700  # so the parted run took 10+ parts
    assert whole["complete"] is True and whole["result"]["cursor"] is None
    assert parted["complete"] is True and parted["result"]["cursor"] is None
    assert [page["text"] for page in parted["result"]["pages"]] == texts
    assert all(page["complete"] and page["offset"] == 0 for page in parted["result"]["pages"])

    query = {"query": "lorem", "context_chars": 5}
    _, [found] = run_json(tmp_path / "hits.jsonl", docs / "long.pdf", tool="pdf_search", arguments=query)
    parts = query | {"max_results": 7}
    _, [parted] = run_json(tmp_path / "parted.jsonl", docs / "long.pdf", tool="pdf_search", arguments=parts)
    assert len(found["result"]["hits"]) == 20 * 40  # 40 on each of 20 pages: the parts cut pages
    assert parted["result"]["hits"] == found["result"]["hits"]
    assert parted["result"]["pages_searched"] == found["result"]["pages_searched"] == 20

    _, [info] = run_json(tmp_path / "info.jsonl", docs / "long.pdf", tool="pdf_info", arguments={})
    assert info["result"]["cursor"] is None and len(info["result"]["pages"]) == 20


def test_batch_stops_at_the_document_cap_with_the_cursor(docs: Path, tmp_path: Path) -> None:
    _, [whole] = run_json(tmp_path / "whole.jsonl", docs / "long.pdf", tool="pdf_read", arguments={})
    key = tmp_path / "state.key"  # shared by the batch and the later call: cursors pass between them
    run, [capped] = run_json(
        tmp_path / "capped.jsonl",
        docs / "long.pdf",
        tool="pdf_read",
        arguments={"max_chars": 700},
        extra=("--max-document-mb", "0.002", "--cache-key-file", str(key)),
    )
    assert run.returncode == 1 and outcomes(run) == {"incomplete": 1}
    assert capped["ok"] is True and capped["complete"] is False
    pages = capped["result"]["pages"]
    texts = [page["text"] for page in whole["result"]["pages"]]
    assert 2 <= len(pages) < 20
    assert [page["text"] for page in pages[:-1]] == texts[: len(pages) - 1]
    assert texts[len(pages) - 1].startswith(pages[-1]["text"])
    # The cursor goes on from there, in a later call that shares the key file (and only there).
    arguments = {"path": "long.pdf", "max_chars": 100_000, "cursor": capped["result"]["cursor"]}
    command = [sys.executable, "-m", "pdf_airlock.server", "call", "pdf_read", "--root", str(docs)]
    command += ["--log-level", "error", "--json", json.dumps(arguments)]
    stranger = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, timeout=120, check=False)
    refused = json.loads(stranger.stdout)["structuredContent"]["error"]
    assert refused["code"] == "invalid_arguments" and "not one this server issued" in refused["message"]
    command += ["--cache-key-file", str(key)]
    rest = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, timeout=120, check=True)
    more = json.loads(rest.stdout)["structuredContent"]["pages"]
    cut = pages[-1]
    assert cut["complete"] is False  # 700-character parts of pages of about 490 cut the last one
    assert more[0]["page"] == cut["page"] and more[0]["offset"] == len(cut["text"])
    assert cut["text"] + more[0]["text"] == texts[len(pages) - 1]
    assert [page["text"] for page in more[1:]] == texts[len(pages) :]


def test_batch_cuts_a_torn_last_line_and_reads_that_document_again(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    batch(out, docs / "hello.pdf", docs / "columns.pdf")
    lines = out.read_text().splitlines()
    torn = next(line for line in lines if json.loads(line)["path"].endswith("columns.pdf"))
    kept = [line for line in lines if line != torn]
    out.write_text(kept[0] + "\n" + torn[: len(torn) // 2])  # killed mid-write: no newline
    second = batch(out, docs / "hello.pdf", docs / "columns.pdf")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert second.returncode == 0
    [cut] = [event for event in events(second) if event["event"] == "batch_torn_line_cut"]
    assert cut["bytes"] == len(torn[: len(torn) // 2]) and cut["out"] == str(out)
    assert outcomes(second) == {"skipped": 1, "ok": 1}
    assert sorted(Path(line["path"]).name for line in lines) == ["columns.pdf", "hello.pdf"]


def test_batch_refuses_an_output_another_run_is_writing(docs: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    done = {"path": "a.pdf", "sha256": "00", "ok": True, "complete": True, "result": {}}
    out.write_text(json.dumps(done) + '\n{"path": "b.pdf')  # b.pdf: the other run is writing it
    before = out.read_bytes()
    with out.open("a") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX)
        refused = batch(out, docs / "hello.pdf")
    assert refused.returncode == 2
    assert [event["event"] for event in events(refused)] == ["batch_output_locked"]
    assert out.read_bytes() == before  # its line in progress is not taken for a torn one
    after = batch(out, docs / "hello.pdf")
    assert after.returncode == 0 and "batch_torn_line_cut" in [event["event"] for event in events(after)]


def test_batch_runs_a_retryable_failure_again_on_resume(docs: Path, tmp_path: Path) -> None:
    """A line with a ``retryable`` error (overloaded, worker_unavailable, cancelled) does not
    settle its document: the next run reads it again. Any other line does."""
    out = tmp_path / "results.jsonl"
    names = ("hello.pdf", "long.pdf")
    digest = {name: hashlib.sha256((docs / name).read_bytes()).hexdigest() for name in names}
    earlier = [
        {"path": "hello.pdf", "sha256": digest["hello.pdf"], "ok": False,
         "error": {"code": "worker_unavailable", "message": "", "retryable": True, "details": {}}},
        {"path": "long.pdf", "sha256": digest["long.pdf"], "ok": False,
         "error": {"code": "timeout", "message": "", "retryable": False, "details": {}}},
    ]  # fmt: skip
    out.write_text("".join(json.dumps(line) + "\n" for line in earlier))
    run = batch(out, docs / "hello.pdf", docs / "long.pdf")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert run.returncode == 0 and outcomes(run) == {"skipped": 1, "ok": 1}
    assert len(lines) == 3 and lines[-1]["sha256"] == digest["hello.pdf"] and lines[-1]["ok"] is True


def test_batch_gives_every_pdf_entry_of_a_folder_a_line(docs: Path, tmp_path: Path) -> None:
    """A FIFO, a dangling link and a link outside the roots each get their typed error; a linked
    directory is walked once, a link back up the tree not again; other names are not documents."""
    folder = tmp_path / "in"
    (folder / "sub").mkdir(parents=True)
    shutil.copy(docs / "hello.pdf", folder / "hello.pdf")
    shutil.copy(docs / "columns.pdf", folder / "sub" / "columns.PDF")
    os.mkfifo(folder / "pipe.pdf")
    (folder / "gone.pdf").symlink_to(folder / "removed.pdf")
    (folder / "elsewhere.pdf").symlink_to(docs / "long.pdf")
    (folder / "sub" / "up").symlink_to(folder)
    (folder / "linked").symlink_to(folder / "sub")
    (folder / "notes.txt").write_text("not a document")
    out = tmp_path / "results.jsonl"
    run = batch(out, folder, extra=("--root", str(folder)))
    lines = {line["path"]: line for line in map(json.loads, out.read_text().splitlines())}
    codes = {Path(path).relative_to(folder).as_posix(): line.get("error") for path, line in lines.items()}
    assert run.returncode == 1
    assert {name: error and error["code"] for name, error in codes.items()} == {
        "elsewhere.pdf": "path_denied",
        "gone.pdf": "not_found",
        "hello.pdf": None,
        "pipe.pdf": "not_a_file",
        "linked/columns.PDF": None,  # "linked" sorts before "sub": the directory is walked once
    }
    assert outcomes(run) == {"ok": 2, "path_denied": 1, "not_found": 1, "not_a_file": 1}


def test_a_folder_that_cannot_be_listed_is_named(tmp_path: Path) -> None:
    """``pdf_airlock.server.batch.inputs`` reports a directory it cannot list instead of skipping it. As root
    the
    listing is refused by walking as another user in a forked child."""
    top = Path(tempfile.mkdtemp(dir="/tmp"))  # traversable by that user, unlike pytest's tmp_path
    try:
        top.chmod(0o755)
        (top / "a.pdf").write_bytes(b"%PDF-1.4\n")
        (top / "locked").mkdir()
        (top / "locked" / "b.pdf").write_bytes(b"%PDF-1.4\n")
        (top / "locked").chmod(0)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through the pipe
            try:
                if os.geteuid() == 0:
                    os.setgroups([])
                    os.setgid(65534)
                    os.setuid(65534)
                found = [
                    {"unlisted": str(item.path), "reason": item.reason}
                    if isinstance(item, Unlisted)
                    else str(item)
                    for item in documents([top], [top])
                ]
                os.write(write, json.dumps(found).encode())
            finally:
                os._exit(0)
        os.close(write)
        with os.fdopen(read) as pipe:
            found = json.loads(pipe.read())
        os.waitpid(pid, 0)
    finally:
        (top / "locked").chmod(0o755)
        shutil.rmtree(top)
    assert found == [str(top / "a.pdf"), {"unlisted": str(top / "locked"), "reason": "Permission denied"}]


def test_batch_stderr_is_json_with_progress_events_when_not_a_terminal(docs: Path, tmp_path: Path) -> None:
    extra = ("--progress-seconds", "0.05", "--log-level", "info")
    run = batch(tmp_path / "out.jsonl", docs / "hello.pdf", docs / "long.pdf", extra=extra)
    found = events(run)  # every line is JSON, the server's info logs among them
    progress = [event for event in found if event["event"] == "batch_progress"]
    assert run.returncode == 0 and outcomes(run) == {"ok": 2}
    assert "tool_call" in [event["event"] for event in found]
    assert progress and all(event["total"] == 2 for event in progress)  # the start-up alone takes 0.05 s
    assert [event["done"] for event in progress] == sorted(event["done"] for event in progress)


def test_batch_bar_keeps_log_lines_whole_above_it(docs: Path, tmp_path: Path) -> None:
    extra = ("--progress", "bar", "--log-level", "info")
    run = batch(tmp_path / "out.jsonl", docs / "hello.pdf", docs / "long.pdf", extra=extra)
    # What a terminal shows of each line is what follows its last carriage return.
    shown = [line.rsplit("\r", 1)[-1] for line in run.stderr.split("\n")]
    logged = [json.loads(line) for line in shown if line.startswith("{")]
    assert run.returncode == 0 and "2/2" in run.stderr and "ok=2" in run.stderr
    assert [event["event"] for event in logged].count("tool_call") == 2
    assert logged[-1]["event"] == "batch_done" and logged[-1]["outcomes"] == {"ok": 2}
    assert "zygote_spawned" in [event["event"] for event in logged]  # logged after the bar was drawn
    assert all(line.startswith("{") or "{" not in line for line in shown)  # no bar before a log line


def _copies(docs: Path, folder: Path, count: int) -> None:
    folder.mkdir()
    original = (docs / "hello.pdf").read_bytes()
    for number in range(count):  # new bytes each: none is skipped as already read
        (folder / f"copy-{number:03}.pdf").write_bytes(original + f"\n% copy {number}\n".encode())


def _started(out: Path, command: list[str]) -> tuple[subprocess.Popen[str], list[int]]:
    """The run, once its first line is written, and its zygote's pid."""
    run = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=PROJECT)
    deadline = time.monotonic() + 60
    while not (out.exists() and out.stat().st_size) and time.monotonic() < deadline:
        time.sleep(0.01)
    return run, [child.pid for child in psutil.Process(run.pid).children()]


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_a_signal_stops_a_run_and_the_next_run_goes_on(
    docs: Path, tmp_path: Path, signum: signal.Signals, status: int
) -> None:
    """SIGTERM lets the documents in flight finish, SIGINT cancels them; either way every line
    written is whole, the zygote is gone, stderr says so in JSON, and the next run reads exactly
    the documents without a line."""
    folder, out = tmp_path / "in", tmp_path / "results.jsonl"
    _copies(docs, folder, 300)
    command = [
        sys.executable,
        "-m",
        "pdf_airlock.server",
        "batch",
        "pdf_read",
        str(folder),
        "--out",
        str(out),
    ]
    run, zygotes = _started(out, [*command, "--jobs", "1"])
    run.send_signal(signum)
    _, stderr = run.communicate(timeout=60)
    found = [json.loads(line) for line in stderr.splitlines()]
    [done] = [event for event in found if event["event"] == "batch_done"]
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert run.returncode == status
    assert done["interrupted"] == signum.name and done["finished"] is False
    assert 0 < len(written) == done["outcomes"]["ok"] < 300
    assert zygotes and not any(psutil.pid_exists(pid) for pid in zygotes)
    again = batch(out, folder)
    assert again.returncode == 0 and outcomes(again) == {"skipped": len(written), "ok": 300 - len(written)}
    paths = [line["path"] for line in map(json.loads, out.read_text().splitlines())]
    assert sorted(paths) == sorted(str(path) for path in folder.iterdir())


@pytest.mark.parametrize("out", ["/dev/full", "folder", "missing/results.jsonl"])
def test_batch_refuses_an_output_that_is_not_a_regular_file(docs: Path, tmp_path: Path, out: str) -> None:
    """Refused before anything is read from it: ``/dev/full`` reads zeros forever."""
    (tmp_path / "folder").mkdir()
    run = batch(tmp_path / out, docs / "hello.pdf")
    [refused] = events(run)
    assert run.returncode == 2 and refused["event"] == "batch_output_refused"
    assert (
        refused["reason"]
        == {
            "/dev/full": "not a regular file",
            "folder": "Is a directory",
            "missing/results.jsonl": "No such file or directory",
        }[out]
    )


def test_a_line_that_cannot_be_written_stops_the_run_and_the_next_run_mends_it(
    docs: Path, tmp_path: Path
) -> None:
    folder, out = tmp_path / "in", tmp_path / "results.jsonl"
    _copies(docs, folder, 20)
    command = [
        sys.executable,
        "-m",
        "pdf_airlock.server",
        "batch",
        "pdf_read",
        str(folder),
        "--out",
        str(out),
    ]
    limit = (4096, 4096)  # bytes any file of the run may grow to: a line crosses it
    run = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=120,
        check=False,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, limit),
    )
    found = events(run)
    [done] = [event for event in found if event["event"] == "batch_done"]
    assert run.returncode == 2 and "batch_output_failed" in [event["event"] for event in found]
    assert done["output_error"] == "File too large" and done["finished"] is False
    assert out.stat().st_size == 4096 and not out.read_bytes().endswith(b"\n")  # a line cut short
    again = batch(out, folder)
    assert again.returncode == 0 and "batch_torn_line_cut" in [event["event"] for event in events(again)]
    paths = [line["path"] for line in map(json.loads, out.read_text().splitlines())]
    assert sorted(paths) == sorted(str(path) for path in folder.iterdir())


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("pdf_nope", "{}", "unknown tool 'pdf_nope'"),
        ("pdf_read", '{"max_chars": "many"}', "max_chars: Input should be a valid integer"),
        ("pdf_read", '{"data": "JVBERi0="}', None),  # a path and inline data: one of the two
    ],
)
def test_batch_refuses_a_tool_or_arguments_that_would_fail_every_document(
    docs: Path, tmp_path: Path, tool: str, arguments: str, message: str | None
) -> None:
    """Before any document: each would get a settled ``invalid_arguments`` line, and a run with the
    typo mended would skip them all."""
    out = tmp_path / "results.jsonl"
    run = batch(out, docs / "hello.pdf", tool=tool, extra=("--json", arguments))
    [refused] = events(run)
    assert run.returncode == 2 and refused["event"] == "batch_invalid_arguments" and not out.exists()
    assert message is None or refused["message"].startswith(message)


def test_batch_usage_errors_exit_2(docs: Path, tmp_path: Path) -> None:
    for extra in (("--json", "{bad"), ("--json", "[]"), ("--progress-seconds", "0")):
        run = batch(tmp_path / "results.jsonl", docs / "hello.pdf", extra=extra)
        assert run.returncode == 2 and run.stderr.startswith("pdf-airlock: "), extra


def test_a_run_of_another_tool_on_the_same_output_reads_every_document(docs: Path, tmp_path: Path) -> None:
    """Lines name their tool: a pdf_info run does not settle the documents for pdf_read. A line
    without ``tool`` (written before lines named theirs) still settles its document."""
    out = tmp_path / "results.jsonl"
    info = batch(out, docs / "hello.pdf", docs / "columns.pdf", tool="pdf_info")
    read = batch(out, docs / "hello.pdf", docs / "columns.pdf")
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert info.returncode == read.returncode == 0 and outcomes(read) == {"ok": 2}
    assert [line["tool"] for line in lines] == ["pdf_info"] * 2 + ["pdf_read"] * 2
    old = {key: value for key, value in lines[-1].items() if key != "tool"}
    out.write_text(json.dumps(old) + "\n")
    again = batch(out, docs / "hello.pdf", docs / "columns.pdf", tool="pdf_outline")
    assert outcomes(again) == {"skipped": 1, "ok": 1}


def test_a_folder_of_uploads_cannot_reach_the_host_through_links(docs: Path, tmp_path: Path) -> None:
    """Without --root the roots are what was named: a link in the folder to a document or a
    folder elsewhere (``/`` itself) is refused, not read or listed; a file named is read."""
    outside, uploads = tmp_path / "outside", tmp_path / "uploads"
    (outside / "more").mkdir(parents=True)
    uploads.mkdir()
    shutil.copy(docs / "hello.pdf", outside / "secret.pdf")
    shutil.copy(docs / "hello.pdf", outside / "more" / "also-secret.pdf")
    shutil.copy(docs / "hello.pdf", uploads / "upload.pdf")
    (uploads / "leak.pdf").symlink_to(outside / "secret.pdf")
    (uploads / "host").symlink_to(outside)
    (uploads / "root").symlink_to("/")
    out = tmp_path / "results.jsonl"
    run = batch(out, uploads, docs / "columns.pdf")
    lines = {Path(line["path"]).name: line for line in map(json.loads, out.read_text().splitlines())}
    assert {name: line.get("error", {}).get("code", "ok") for name, line in lines.items()} == {
        "upload.pdf": "ok",
        "leak.pdf": "path_denied",
        "host": "path_denied",
        "root": "path_denied",
        "columns.pdf": "ok",
    }
    assert "outside the allowed roots" in lines["host"]["error"]["message"]
    assert run.returncode == 1 and outcomes(run) == {"ok": 2, "path_denied": 3}


def test_batch_markdown_writes_each_chunk_as_a_line_for_a_vector_store(tmp_path: Path) -> None:
    import markdown_docs

    folder = tmp_path / "in"
    folder.mkdir()
    markdown_docs.build(folder)
    (folder / "chart.png").unlink()
    out, chunks = tmp_path / "results.jsonl", tmp_path / "chunks.jsonl"
    extra = ("--chunks", str(chunks), "--json", '{"chunk_chars": 300}')
    first = batch(out, folder, tool="pdf_markdown", extra=extra)
    [line] = [json.loads(text) for text in out.read_text().splitlines()]
    records = [json.loads(text) for text in chunks.read_text().splitlines()]
    assert first.returncode == 0, first.stderr
    result = line["result"]
    assert (
        result["cursor"] is None
        and [(h["level"], h["text"]) for h in result["headings"]] == markdown_docs.HEADINGS
    )
    assert [record["id"] for record in records] == [
        f"{line['sha256']}:{n}" for n in range(len(result["chunks"]))
    ]
    assert [record["text"] for record in records] == [chunk["text"] for chunk in result["chunks"]]
    assert all(record["text"] == result["markdown"][record["start"] : record["end"]] for record in records)
    assert all(len(record["text"]) <= 300 and record["sha256"] == line["sha256"] for record in records)
    assert records[-1]["heading_path"] == ["Annual Report 2026", "3 Discussion"]
    again = batch(out, folder, tool="pdf_markdown", extra=extra)  # resumed: nothing new to write
    assert again.returncode == 0 and len(chunks.read_text().splitlines()) == len(records)
    refused = batch(tmp_path / "other.jsonl", folder, extra=("--chunks", str(tmp_path / "c.jsonl")))
    assert refused.returncode == 2
    assert any(event["event"] == "batch_invalid_arguments" for event in events(refused))


def test_batch_of_each_text_tool_leaves_hidden_text_out(tmp_path: Path) -> None:
    """A page hiding an instruction in white, another hiding one in a table cell: each text
    tool's whole result holds none of it, says so, and with include_hidden lists both (pdf_tables
    joins the runs of its parts, one table a part)."""
    import hidden_pdfs
    import pikepdf

    merged = pikepdf.new()
    for name in ("white_on_white", "hidden_table_cell"):
        with pikepdf.open(io.BytesIO(hidden_pdfs.HIDDEN[name].build())) as part:
            merged.pages.extend(part.pages)
    path = tmp_path / "hidden.pdf"
    merged.save(path)
    secret = ("APPROVED", "previous instructions")
    for tool, arguments in (
        ("pdf_read", {"ocr": "off"}),
        ("pdf_read", {"ocr": "off", "engine": "layout"}),
        ("pdf_markdown", {"ocr": "off"}),
        ("pdf_tables", {"max_tables": 1}),
        ("pdf_search", {"query": "APPROVED"}),
    ):
        run, [line] = run_json(tmp_path / f"{tool}.jsonl", path, tool=tool, arguments=arguments)
        assert run.returncode == 0 and line["complete"] is True, (tool, run.stderr[-500:])
        text = json.dumps(line["result"])
        assert not any(
            word in text for word in secret if not word.startswith("APPROVED") or tool != "pdf_search"
        )
        assert "a person would not see" in " ".join(line["result"]["warnings"]), tool
    _, [listed] = run_json(
        tmp_path / "listed.jsonl",
        path,
        tool="pdf_tables",
        arguments={"max_tables": 1, "include_hidden": True},
    )
    assert [(run["page"], run["reason"]) for run in listed["result"]["hidden"]] == [
        (1, "same_colour_as_background"),
        (2, "same_colour_as_background"),
    ]
    assert [table["page"] for table in listed["result"]["tables"]] == [2]
