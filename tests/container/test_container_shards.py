"""Shards as containers: N containers of the image, one per shard, as the Indexed Job of
deploy/k8s/ runs them (``--shards N`` and ``JOB_COMPLETION_INDEX``, the Job's arguments), under
the production flags and the seccomp profile, over one generated corpus mounted read-only. One
container is killed mid-way (``docker kill``: SIGKILL to every process in it) and run again;
``batch-merge``, in a container as the merge Job runs it, then finds every document done once.

Runs when ``PDF_AIRLOCK_DOCKER=1`` and a Docker engine answers (as tests/container/test_container.py, whose
flags it uses); the local-process variant is tests/tools/test_shards.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path

import pdfs
import pytest
from test_container import IMAGE, owned_by_the_image, production_flags

from pdf_airlock.server.batch.shard import Shard, shard_of

pytestmark = [
    pytest.mark.skipif(os.environ.get("PDF_AIRLOCK_DOCKER") != "1", reason="PDF_AIRLOCK_DOCKER=1 not set"),
]

SHARDS = 3
CORPUS = 60
PAGES = 30  # enough for a shard to be still reading when it is killed
RUN_TIMEOUT_S = 600
POLL_S = 0.01
SETTLED_BEFORE_KILL = 2  # whole lines in the victim's file when it is killed
OUT = "/out/results.jsonl"


@pytest.fixture(autouse=True)
def _image() -> None:
    inspect = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, check=False)
    if inspect.returncode != 0:
        pytest.fail(f"PDF_AIRLOCK_DOCKER=1 but there is no image {IMAGE!r}: run scripts/container.sh build")


def _corpus(root: Path) -> list[str]:
    """``CORPUS`` text PDFs of ``PAGES`` pages, a third one folder down, readable by the image's
    user; their keys (paths under the root)."""
    keys = []
    for number in range(CORPUS):
        key = f"deeper/doc-{number:03d}.pdf" if number % 3 == 0 else f"doc-{number:03d}.pdf"
        (root / key).parent.mkdir(parents=True, exist_ok=True)
        text = [f"Document {number} page {page}" for page in range(1, PAGES + 1)]
        pdfs.write(root / key, pdfs.text_pdf(text)).chmod(0o644)
        keys.append(key)
    for folder in (root, root / "deeper"):
        folder.chmod(0o755)
    return keys


def _shard(data: Path, out: Path, index: int, name: str) -> list[str]:
    """``docker run`` of one pod of deploy/k8s/batch-job.yaml (its arguments; ``--jobs 1``)."""
    options = ["--name", name, "-e", f"JOB_COMPLETION_INDEX={index}"]
    flags = production_flags(data, f"{out}:/out", options=options)
    return ["docker", *flags, "batch", "pdf_read", "/data", "--root", "/data", "--shards", str(SHARDS),
            "--jobs", "1", "--out", OUT, "--progress", "json", "--documents-may-fail",
            "--require-sandbox", "seccomp"]  # fmt: skip


def _start(command: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _finish(process: subprocess.Popen[str]) -> subprocess.CompletedProcess[str]:
    stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _event(run: subprocess.CompletedProcess[str], name: str) -> dict[str, object]:
    [found] = [event for event in map(json.loads, run.stderr.splitlines()) if event["event"] == name]
    return found


def _paths(path: Path) -> list[str]:
    return [str(json.loads(line)["path"]) for line in path.read_text().splitlines()]


def test_shards_as_containers_read_every_document_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    keys = _corpus(data)
    out = owned_by_the_image(tmp_path / "out")
    share = Counter(shard_of(key, SHARDS) for key in keys)
    victim = max(range(SHARDS), key=lambda index: share[index])
    names = [f"pdf-airlock-shard-{os.getpid()}-{index}" for index in range(SHARDS)]
    shard_files = [out / Shard(index, SHARDS).output(Path(OUT)).name for index in range(SHARDS)]

    processes = [_start(_shard(data, out, index, names[index])) for index in range(SHARDS)]
    deadline = time.monotonic() + RUN_TIMEOUT_S
    mine = shard_files[victim]
    while not mine.exists() or mine.read_bytes().count(b"\n") < SETTLED_BEFORE_KILL:
        assert time.monotonic() < deadline and processes[victim].poll() is None, "no lines before the kill"
        time.sleep(POLL_S)
    subprocess.run(["docker", "kill", names[victim]], capture_output=True, check=True, timeout=60)
    runs = [_finish(process) for process in processes]
    written = mine.read_bytes()
    whole = written.count(b"\n")
    assert runs[victim].returncode != 0
    assert SETTLED_BEFORE_KILL <= whole < share[victim], (whole, share[victim])  # killed mid-way
    for index, run in enumerate(runs):
        if index != victim:
            assert run.returncode == 0, run.stderr[-2000:]
            assert _event(run, "batch_done")["outcomes"] == {"ok": share[index]}
    last_start = written.rstrip(b"\n").rfind(b"\n") + 1
    mine.write_bytes(written[: last_start + (len(written) - last_start) // 2])  # torn mid-line

    again = _finish(_start(_shard(data, out, victim, names[victim])))
    assert again.returncode == 0, again.stderr[-2000:]
    assert _event(again, "batch_done")["outcomes"] == {"skipped": whole - 1, "ok": share[victim] - whole + 1}
    assert "batch_torn_line_cut" in [event["event"] for event in map(json.loads, again.stderr.splitlines())]
    for index, path in enumerate(shard_files):
        assert {shard_of(p.removeprefix("/data/"), SHARDS) for p in _paths(path)} == {index}

    merge_flags = production_flags(data, f"{out}:/out")
    merge = subprocess.run(
        ["docker", *merge_flags, "batch-merge", OUT, "--merged", "/out/merged.jsonl",
         "--inputs", "/data", "--root", "/data"],
        capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert merge.returncode == 0, merge.stderr[-2000:]
    done = _event(merge, "batch_merge_done")
    assert (done["documents"], done["missing"], done["duplicates"]) == (CORPUS, 0, 0)
    merged = Counter(_paths(out / "merged.jsonl"))
    assert merged == Counter(f"/data/{key}" for key in keys)
    every = Counter(path for file in shard_files for path in _paths(file))
    assert set(every.values()) == {1}  # every document done exactly once, over all shard files
