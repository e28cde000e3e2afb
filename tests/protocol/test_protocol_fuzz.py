"""Transport fuzzing with hypothesis against the real server over a raw pipe.

Whatever arrives on stdin (random bytes, invalid UTF-8, deep nesting, frames split at random
points, oversized lines), the server must answer the next ping and write nothing but JSON-RPC
frames to stdout.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import PROJECT, server_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

MAX_FILE_MB = 1  # message cap = 4/3 MiB + 1 MiB


class Pipe:
    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            server_command(root, "--max-file-mb", str(MAX_FILE_MB)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=PROJECT,
        )
        self.next_id = 1_000_000
        self.frames = 0
        self.ping()  # fixes the framing to newline-delimited before any fuzz arrives

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def ping(self) -> None:
        """Send a ping and read frames until its answer; every frame must be JSON-RPC."""
        self.next_id += 1
        self.write(b'\n{"jsonrpc": "2.0", "id": %d, "method": "ping"}\n' % self.next_id)
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line.endswith(b"\n"), f"server died or wrote a partial frame: {line[:200]!r}"
            frame: dict[str, Any] = json.loads(line)
            assert frame.get("jsonrpc") == "2.0"
            self.frames += 1
            if frame.get("id") == self.next_id:
                assert frame == {"jsonrpc": "2.0", "id": self.next_id, "result": {}}
                return


@pytest.fixture(scope="module")
def pipe(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("fuzzroot")
    server = Pipe(root)
    yield server
    server.proc.kill()
    server.proc.wait()


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(data=st.binary(max_size=2048))
def test_random_bytes(pipe: Pipe, data: bytes) -> None:
    pipe.write(data.replace(b"Content-Length", b"Content-Lengtx"))
    pipe.ping()


@FUZZ
@given(text=st.text(max_size=512))
def test_random_text_lines(pipe: Pipe, text: str) -> None:
    pipe.write(text.encode("utf-8", "surrogatepass") + b"\n")
    pipe.ping()


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=30,
)


@FUZZ
@given(obj=JSON_VALUES)
def test_random_json_values(pipe: Pipe, obj: object) -> None:
    pipe.write(json.dumps(obj).encode() + b"\n")
    pipe.ping()


@FUZZ
@given(cuts=st.lists(st.integers(min_value=1, max_value=60), max_size=8))
def test_frames_split_anywhere(pipe: Pipe, cuts: list[int]) -> None:
    pipe.next_id += 1
    message = b'{"jsonrpc": "2.0", "id": %d, "method": "ping"}\n' % pipe.next_id
    position = 0
    for cut in cuts:
        pipe.write(message[position : position + cut])
        position += cut
        time.sleep(0.001)
    pipe.write(message[position:])
    assert pipe.proc.stdout is not None
    assert json.loads(pipe.proc.stdout.readline()) == {"jsonrpc": "2.0", "id": pipe.next_id, "result": {}}


def test_deep_nesting_and_invalid_utf8(pipe: Pipe) -> None:
    pipe.write(b"[" * 200_000 + b"]" * 200_000 + b"\n")
    pipe.write(b'{"jsonrpc": "2.0", "id": 1, "method": "\xc3\x28"}\n')
    pipe.write(b'{"a":' * 50_000 + b"1" + b"}" * 50_000 + b"\n")
    pipe.ping()


def test_oversized_line_gets_a_clear_error(pipe: Pipe) -> None:
    cap = MAX_FILE_MB * (1 << 20) * 4 // 3 + (1 << 20)
    pipe.write(b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "pad": "' + b"x" * (cap + 10) + b'"}\n')
    assert pipe.proc.stdout is not None
    error = json.loads(pipe.proc.stdout.readline())
    assert error["id"] == 5 and error["error"]["code"] == -32600
    assert str(cap) in error["error"]["message"]
    pipe.ping()
