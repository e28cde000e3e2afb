"""Sharded ``batch`` runs (``--shard I/N``, ``--shards N`` + ``JOB_COMPLETION_INDEX``) and
``batch-merge``: N shards as N real processes over one generated corpus read every document
exactly once, also after a shard is killed mid-way and run again; the merge reports a missing
shard and a duplicated document."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pdfs
import psutil
import pytest
from conftest import PROJECT

from pdf_airlock.server.batch.shard import Shard, ShardError, document_key, parse_shard, shard_files, shard_of

SHARDS = 3
CORPUS = 30
RUN_TIMEOUT_S = 180
KILL_CORPUS = 40
KILL_PAGES = 10
POLL_S = 0.01


def _corpus(root: Path, count: int, pages: int = 1) -> list[Path]:
    """``count`` small text PDFs, a third of them one folder down."""
    made = []
    for number in range(count):
        folder = root / "deeper" if number % 3 == 0 else root
        folder.mkdir(parents=True, exist_ok=True)
        text = [f"Document {number} page {page}" for page in range(1, pages + 1)]
        made.append(pdfs.write(folder / f"doc-{number:03d}.pdf", pdfs.text_pdf(text)))
    return made


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    _corpus(root, CORPUS)
    return root


def _command(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "pdf_airlock.server", *arguments]


def _batch(root: Path, out: Path, *extra: str) -> list[str]:
    return _command(
        "batch", "pdf_read", str(root), "--root", str(root), "--out", str(out), "--jobs", "1", *extra
    )


def _run(command: list[str], cwd: Path = PROJECT, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, cwd=cwd, timeout=RUN_TIMEOUT_S, check=False, **kwargs
    )


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _event(run: subprocess.CompletedProcess[str], name: str) -> dict[str, object]:
    [found] = [event for event in map(json.loads, run.stderr.splitlines()) if event["event"] == name]
    return found


def _shards_in_parallel(root: Path, out: Path, count: int) -> list[subprocess.CompletedProcess[str]]:
    runs = [
        subprocess.Popen(
            _batch(root, out, "--shard", f"{index}/{count}", "--progress", "none"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=PROJECT,
        )
        for index in range(count)
    ]
    done = []
    for process in runs:
        stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
        done.append(subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr))
    return done


def test_the_shard_of_a_key_is_fixed() -> None:
    """SHA-256 of the key, not Python's salted ``hash``: every process and machine agrees."""
    assert [shard_of(key, 16) for key in ("a.pdf", "deeper/b.pdf", "invoices/2024/c.pdf")] == [2, 6, 10]
    script = "from pdf_airlock.server.batch.shard import shard_of; print(shard_of('deeper/b.pdf', 16))"
    other = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == "6"
    assert Shard(3, 16).output(Path("out/results.jsonl")) == Path("out/results.shard-03-of-16.jsonl")
    assert parse_shard("0/1") == Shard(0, 1)
    for bad in ("3/3", "1", "-1/2", "0/0", "a/b"):
        with pytest.raises(ShardError):
            parse_shard(bad)


def test_a_document_key_is_its_path_under_the_root(tmp_path: Path) -> None:
    (tmp_path / "data" / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "data")
    assert document_key(tmp_path / "data" / "sub" / "x.pdf", [tmp_path / "data"]) == "sub/x.pdf"
    # Listed through a link to the root, or with the root given as its real path: the same key.
    assert document_key(tmp_path / "link" / "sub" / "x.pdf", [tmp_path / "data"]) == "sub/x.pdf"
    assert document_key(tmp_path / "data" / "x.pdf", [tmp_path / "link"]) == "x.pdf"
    assert document_key(tmp_path / "else.pdf", [tmp_path / "data"]) == str(tmp_path / "else.pdf")


def test_shards_as_processes_read_every_document_once(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    runs = _shards_in_parallel(corpus, out, SHARDS)
    assert [run.returncode for run in runs] == [0] * SHARDS, [run.stderr[-500:] for run in runs]
    count, files = shard_files(out)
    assert count == SHARDS and sorted(files) == list(range(SHARDS))
    seen: Counter[str] = Counter()
    for index, path in files.items():
        records = _records(path)
        assert all(record["ok"] for record in records)
        assert {shard_of(document_key(Path(str(r["path"])), [corpus]), SHARDS) for r in records} <= {index}
        seen.update(str(record["path"]) for record in records)
    assert len(seen) == CORPUS and set(seen.values()) == {1}
    assert all(0 < len(_records(path)) < CORPUS for path in files.values())  # the work was split

    merged = tmp_path / "merged.jsonl"
    merge = _run(_command("batch-merge", str(out), "--merged", str(merged), "--inputs", str(corpus)))
    assert merge.returncode == 0, merge.stderr
    done = _event(merge, "batch_merge_done")
    assert done["documents"] == CORPUS and done["missing"] == 0 and done["duplicates"] == 0
    assert sorted(str(r["path"]) for r in _records(merged)) == sorted(seen)


def test_merge_reports_a_missing_shard_and_a_duplicated_document(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    for index in (0, 2):  # shard 1 never ran
        run = _run(_batch(corpus, out, "--shard", f"{index}/{SHARDS}", "--progress", "none"))
        assert run.returncode == 0, run.stderr
    first = Shard(0, SHARDS).output(out)
    twice = first.read_text().splitlines()[0]
    with open(Shard(2, SHARDS).output(out), "a") as other:  # a document settled by two shards
        other.write(twice + "\n")
    merged = tmp_path / "merged.jsonl"
    merge = _run(_command("batch-merge", str(out), "--merged", str(merged), "--inputs", str(corpus)))
    done = _event(merge, "batch_merge_done")
    owned_by_1 = sorted(
        str(path) for path in _listed(corpus) if shard_of(document_key(path, [corpus]), SHARDS) == 1
    )
    assert merge.returncode == 1
    assert done["missing_shards"] == [1]
    assert sorted(item["path"] for item in done["missing_documents"]) == owned_by_1  # type: ignore[union-attr]
    assert {item["shard"] for item in done["missing_documents"]} == {1}  # type: ignore[union-attr]
    assert done["duplicated"] == [{"tool": "pdf_read", "path": json.loads(twice)["path"], "shards": [0, 2]}]
    paths = [str(record["path"]) for record in _records(merged)]
    assert len(paths) == len(set(paths)) == CORPUS - len(owned_by_1)  # one line each, even duplicated
    onto_a_shard = _run(_command("batch-merge", str(out), "--merged", str(first)))
    assert onto_a_shard.returncode == 2 and "shard files" in onto_a_shard.stderr
    assert first.read_text().splitlines()[0] == twice  # untouched


def _listed(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.pdf"))


def test_the_index_comes_from_the_indexed_job(corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    environment = os.environ | {"JOB_COMPLETION_INDEX": "2"}
    run = _run(_batch(corpus, out, "--shards", str(SHARDS), "--progress", "none"), env=environment)
    assert run.returncode == 0, run.stderr
    expected = [p for p in _listed(corpus) if shard_of(document_key(p, [corpus]), SHARDS) == 2]
    written = _records(Shard(2, SHARDS).output(out))
    assert sorted(str(record["path"]) for record in written) == sorted(map(str, expected))
    without = _run(
        _batch(corpus, out, "--shards", str(SHARDS)), env=os.environ | {"JOB_COMPLETION_INDEX": ""}
    )
    assert without.returncode == 2 and "JOB_COMPLETION_INDEX" in without.stderr


def test_a_list_file_shards_as_the_folder_does(corpus: Path, tmp_path: Path) -> None:
    """The same documents named one a line (relative to the working directory, comments and blank
    lines skipped) fall to the same shards as the folder walked."""
    listing = tmp_path / "inputs.txt"
    names = [str(path.relative_to(corpus)) for path in _listed(corpus)]
    listing.write_text("# the corpus\n\n" + "\n".join(names) + "\n")
    out = tmp_path / "listed.jsonl"
    command = _command("batch", "pdf_read", "--list", str(listing), "--root", str(corpus))
    run = _run([*command, "--out", str(out), "--shard", f"1/{SHARDS}", "--jobs", "1"], cwd=corpus)
    assert run.returncode == 0, run.stderr
    expected = sorted(name for name in names if shard_of(name, SHARDS) == 1)
    assert sorted(str(record["path"]) for record in _records(Shard(1, SHARDS).output(out))) == expected


def test_a_killed_shard_run_again_reads_each_document_once(tmp_path: Path) -> None:
    """SIGKILL mid-way, its last line cut in half as a kill mid-write leaves it: the run again
    cuts the torn line, skips what is settled, and reads the rest; the merge finds every
    document once."""
    root = tmp_path / "corpus"
    made = _corpus(root, KILL_CORPUS, pages=KILL_PAGES)
    out = tmp_path / "results.jsonl"
    mine = Shard(0, 1).output(out)
    process = subprocess.Popen(_batch(root, out, "--shard", "0/1"), cwd=PROJECT, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while (not mine.exists() or mine.read_bytes().count(b"\n") < 2) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    family = [process.pid, *(child.pid for child in psutil.Process(process.pid).children(recursive=True))]
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=RUN_TIMEOUT_S)
    written = mine.read_bytes()
    whole = written.count(b"\n")
    assert 2 <= whole < KILL_CORPUS  # killed mid-way, not after the end
    last_start = written.rstrip(b"\n").rfind(b"\n") + 1
    mine.write_bytes(written[: last_start + (len(written) - last_start) // 2])  # torn mid-line
    _wait_gone(family)

    again = _run(_batch(root, out, "--shard", "0/1", "--progress", "none"))
    assert again.returncode == 0, again.stderr
    done = _event(again, "batch_done")
    assert done["outcomes"] == {"skipped": whole - 1, "ok": KILL_CORPUS - whole + 1}
    assert any(json.loads(line)["event"] == "batch_torn_line_cut" for line in again.stderr.splitlines())
    paths = Counter(str(record["path"]) for record in _records(mine))
    assert paths == Counter(str(path) for path in made)

    merge = _run(
        _command("batch-merge", str(out), "--merged", str(tmp_path / "all.jsonl"), "--inputs", str(root))
    )
    assert merge.returncode == 0 and _event(merge, "batch_merge_done")["documents"] == KILL_CORPUS


def _wait_gone(pids: list[int]) -> None:
    """The killed supervisor's zygote and children die with it (parent-death signal)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while any(map(_alive, pids)):
        assert time.monotonic() < deadline, "the killed run's processes stayed"
        time.sleep(POLL_S)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_documents_may_fail_but_a_missing_layer_stops_the_run(tmp_path: Path) -> None:
    """``--documents-may-fail`` (the Job's flag) turns "some document failed" into 0; a required
    sandbox layer that is off is never mistaken for failed documents: exit 2, nothing read."""
    from test_sandbox import _docker_like_seccomp

    root = tmp_path / "corpus"
    _corpus(root, 2)
    pdfs.write(root / "not-a-pdf.pdf", b"<html>not a PDF</html>\n" * 40)
    failed = _run(_batch(root, tmp_path / "a.jsonl", "--progress", "none"))
    tolerated = _run(_batch(root, tmp_path / "b.jsonl", "--progress", "none", "--documents-may-fail"))
    assert (failed.returncode, tolerated.returncode) == (1, 0)
    assert _event(tolerated, "batch_done")["outcomes"] == {"ok": 2, "not_a_pdf": 1}

    out = tmp_path / "c.jsonl"
    extra = ("--documents-may-fail", "--require-sandbox", "namespaces", "--progress", "none")
    refused = _run(_batch(root, out, *extra), preexec_fn=_docker_like_seccomp)
    assert refused.returncode == 2
    done = _event(refused, "batch_done")
    assert done["refused"] == "required sandbox layer(s) not active: namespaces" and done["outcomes"] == {}
    assert out.read_text() == ""
