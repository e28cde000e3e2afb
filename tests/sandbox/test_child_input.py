"""How a job child reads its input fd: all of it, to EOF, never past the size cap."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pdf_airlock.worker import child
from pdf_airlock.worker.contract import WorkerError

CAP = 1 << 20


def _fd(path: Path, data: bytes) -> int:
    path.write_bytes(data)
    return os.open(path, os.O_RDONLY)


@pytest.mark.parametrize("size", [0, 1, 4096, CAP - 1, CAP])
def test_regular_file_is_read_whole(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    fd = _fd(tmp_path / "input.pdf", data)
    try:
        assert child._read_input(fd, CAP) == data
    finally:
        os.close(fd)


def test_memfd_is_read_whole_from_its_start() -> None:
    """Inline documents come as a memfd whose offset is at its end after writing."""
    data = os.urandom(3 * CAP // 2)
    fd = os.memfd_create("input")
    try:
        os.write(fd, data)
        assert child._read_input(fd, 2 * CAP) == data
    finally:
        os.close(fd)


def test_input_over_the_cap_is_refused(tmp_path: Path) -> None:
    fd = _fd(tmp_path / "big.pdf", b"x" * (CAP + 1))
    try:
        with pytest.raises(WorkerError) as raised:
            child._read_input(fd, CAP)
    finally:
        os.close(fd)
    assert raised.value.code == "output_limit"


def test_file_that_grew_after_it_was_measured_is_read_to_eof(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size is measured, then read: a file appended to in between must still be read to its
    end, and past the cap refused. The race cannot be timed from a test, so the measurement is
    made stale instead: lseek reports the size the file had before it grew."""
    data = os.urandom(CAP // 2)
    fd = _fd(tmp_path / "growing.pdf", data[:100])
    with open(tmp_path / "growing.pdf", "ab") as appender:
        appender.write(data[100:])
    real_lseek = os.lseek
    monkeypatch.setattr(os, "lseek", lambda fd, pos, how: min(real_lseek(fd, pos, how), 100))
    try:
        assert child._read_input(fd, CAP) == data
        with pytest.raises(WorkerError):
            child._read_input(fd, CAP // 4)
    finally:
        os.close(fd)


def test_spare_warm_up_runs_every_step_of_the_job_path() -> None:
    """The warm-up swallows its errors (it is only an optimisation), so its steps are checked
    here one by one: the job message is written and read back, names a parser, and the parse and
    the reply succeed on the trusted document each spare reads."""
    import json

    from pdf_airlock.worker.contract import Answer, Limits
    from pdf_airlock.worker.parsers import get_parser
    from pdf_airlock.worker.zygote import warm_pdf

    job = child._warm_job(
        Limits(memory_bytes=1 << 28, cpu_seconds=5, max_input_bytes=CAP, max_result_bytes=CAP)
    )
    assert job.kind == "pdf_read"
    result = get_parser(job.kind)(warm_pdf(), dict(job.args))
    assert result["page_count"] == 1 and "spare warm-up line" in result["pages"][0]["text"]
    envelope = json.loads(child._encode(Answer(result), CAP))
    assert envelope["ok"] is True and envelope["result"]["pages"] == result["pages"]
