"""The path policy on its own: containment, symlinks, file types, sizes, inline data."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import anyio
import pytest

from server.errors import ToolError
from server.paths import PathPolicy, _hash_fd


def code_of(policy: PathPolicy, raw: str) -> str:
    with pytest.raises(ToolError) as caught:
        policy.open_path(raw)
    return caught.value.code


def test_regular_file_opens_with_digest(docs: Path) -> None:
    policy = PathPolicy([docs], 1 << 30)
    document = policy.open_path("hello.pdf")
    try:
        data = (docs / "hello.pdf").read_bytes()
        assert document.sha256 == hashlib.sha256(data).hexdigest()
        assert document.size == len(data)
        assert document.display == "hello.pdf"
        assert os.pread(document.fd, 5, 0) == b"%PDF-"
    finally:
        document.close()


def test_escapes_and_types(docs: Path) -> None:
    policy = PathPolicy([docs], 1 << 30)
    assert code_of(policy, "escape.pdf") == "path_denied"
    assert code_of(policy, "sub/../../x.pdf") == "path_denied"
    assert code_of(policy, "fifo.pdf") == "not_a_file"
    assert code_of(policy, "nothing-here.pdf") == "not_found"
    assert code_of(policy, "with\x00nul.pdf") == "invalid_arguments"


def test_root_itself_proc_is_refused(tmp_path: Path) -> None:
    policy = PathPolicy([Path("/")], 1 << 30)
    assert code_of(policy, "/proc/self/environ") == "not_a_file"
    assert code_of(policy, "/dev/zero") == "not_a_file"


def test_size_cap(docs: Path) -> None:
    policy = PathPolicy([docs], 100)
    assert code_of(policy, "hello.pdf") == "too_large"


def test_inline_is_sealed_memfd() -> None:
    policy = PathPolicy([Path("/nonexistent")], 1 << 20)
    document = policy.open_inline(base64.b64encode(b"%PDF-1.7 inline").decode())
    try:
        assert os.pread(document.fd, 100, 0) == b"%PDF-1.7 inline"
        with pytest.raises(PermissionError):
            os.pwrite(document.fd, b"x", 0)
    finally:
        document.close()
    with pytest.raises(ToolError) as caught:
        PathPolicy([Path("/")], 10).open_inline(base64.b64encode(b"0" * 100).decode())
    assert caught.value.code == "too_large"


def test_a_large_input_is_hashed_off_the_event_loop_with_the_same_digest(tmp_path: Path) -> None:
    """Over 4 MiB, ``open_path_async`` and ``open_inline_async`` hash in a worker thread: the
    same digest, size and checks, and a changed file is hashed again."""
    data = os.urandom(5 << 20)
    (tmp_path / "big.pdf").write_bytes(data)
    policy = PathPolicy([tmp_path], 1 << 30)

    async def opened() -> list[tuple[str, int, bytes]]:
        found = []
        for document in (
            await policy.open_path_async("big.pdf"),
            await policy.open_path_async("big.pdf"),  # unchanged: the digest remembered
            await policy.open_inline_async(base64.b64encode(data).decode()),
        ):
            found.append((document.sha256, document.size, os.pread(document.fd, 16, 0)))
            document.close()
        (tmp_path / "big.pdf").write_bytes(data[:-1] + b"!")
        changed = await policy.open_path_async("big.pdf")
        found.append((changed.sha256, changed.size, os.pread(changed.fd, 16, 0)))
        changed.close()
        return found

    digest = hashlib.sha256(data).hexdigest()
    first, again, inline, changed = anyio.run(opened)
    assert first == again == inline == (digest, len(data), data[:16])
    assert changed == (hashlib.sha256(data[:-1] + b"!").hexdigest(), len(data), data[:16])
    with pytest.raises(ToolError) as caught:
        anyio.run(PathPolicy([tmp_path], 4 << 20).open_path_async, "big.pdf")
    assert caught.value.code == "too_large"


def test_hashing_reads_no_more_than_one_byte_past_the_cap(tmp_path: Path) -> None:
    """A file someone keeps appending to after its ``fstat`` is read up to the cap and one byte,
    then refused as too_large, instead of read for as long as it grows."""
    (tmp_path / "growing.pdf").write_bytes(b"%PDF-" + b"x" * 99_995)
    fd = os.open(tmp_path / "growing.pdf", os.O_RDONLY)
    try:
        assert _hash_fd(fd, 1001) == (hashlib.sha256(b"%PDF-" + b"x" * 996).hexdigest(), 1001)
        assert _hash_fd(fd, 1 << 30)[1] == 100_000
    finally:
        os.close(fd)
