"""The path policy on its own: containment, symlinks, file types, sizes, inline data."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

import pytest

from server.errors import ToolError
from server.paths import PathPolicy


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
