"""The transport over a raw pipe: framing, parse errors, and stdout holding only protocol frames."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pdfs
import pytest
from conftest import PROJECT, initialize_request, server_command

INIT = initialize_request()
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
MAX_FILE_MB = 1
MESSAGE_CAP = MAX_FILE_MB * (1 << 20) * 4 // 3 + (1 << 20)  # the message cap --max-file-mb 1 sets


def oversized_call(request_id: object) -> bytes:
    """A ``tools/call`` past ``MESSAGE_CAP``, its id and method first, as clients write them."""
    params = {"name": "pdf_read", "arguments": {"path": "hello.pdf", "password": "x" * MESSAGE_CAP}}
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}).encode()


class RawServer:
    """The server as a child process with pipes; every stdout line must be a JSON-RPC frame."""

    def __init__(self, root: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            server_command(root, *extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=PROJECT,
        )

    def send_bytes(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode() + b"\n")

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), f"stdout ended or carried a partial frame: {line!r}"
        frame = json.loads(line)
        assert frame["jsonrpc"] == "2.0"
        return dict(frame)

    def close(self) -> bytes:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        self.proc.wait(timeout=10)
        return rest


@pytest.fixture
def raw(docs: Path) -> Any:
    server = RawServer(docs)
    yield server
    if server.proc.poll() is None:
        server.proc.kill()
        server.proc.wait()


def handshake(raw: RawServer) -> None:
    raw.send(INIT)
    assert raw.receive()["result"]["protocolVersion"] == "2025-11-25"
    raw.send(INITIALIZED)


def test_garbage_line_gets_parse_error_then_serving_continues(raw: RawServer) -> None:
    handshake(raw)
    raw.send_bytes(b"this is not json\n")
    error = raw.receive()
    assert error["id"] is None
    assert error["error"]["code"] == -32700
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert {tool["name"] for tool in raw.receive()["result"]["tools"]} >= {"pdf_info", "pdf_read"}
    assert raw.close() == b""
    assert raw.proc.returncode == 0


def test_invalid_utf8_batch_and_bad_request(raw: RawServer) -> None:
    handshake(raw)
    raw.send_bytes(b'{"jsonrpc": "2.0", "id": 5, "method": "ping\xff"}\n')
    assert raw.receive()["error"]["code"] == -32700
    raw.send_bytes(b"[]\n")
    assert raw.receive()["error"]["code"] == -32600
    raw.send({"jsonrpc": "1.0", "id": "abc", "method": 3})
    invalid = raw.receive()
    assert invalid["error"]["code"] == -32600 and invalid["id"] == "abc"
    raw.send({"jsonrpc": "2.0", "id": "str-id", "method": "ping"})
    pong = raw.receive()
    assert pong["id"] == "str-id" and pong["result"] == {}
    raw.send({"jsonrpc": "2.0", "id": 9, "method": "no/such/method"})
    assert raw.receive()["error"]["code"] == -32601


def test_tool_call_over_raw_pipe_and_clean_exit(raw: RawServer) -> None:
    handshake(raw)
    raw.send(
        {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": "pdf_read", "arguments": {"path": "hello.pdf", "pages": "1"}},
        }
    )
    response = raw.receive()
    assert response["id"] == 7
    assert response["result"]["structuredContent"]["pages"][0]["text"].startswith("Hello from page one.")
    started = time.monotonic()
    assert raw.close() == b""
    assert raw.proc.returncode == 0
    assert time.monotonic() - started < 5


def test_content_length_framing_is_answered_in_kind(docs: Path) -> None:
    proc = subprocess.Popen(
        server_command(docs),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=PROJECT,
    )
    body = json.dumps(INIT).encode()
    out, _ = proc.communicate(b"Content-Length: %d\r\n\r\n" % len(body) + body, timeout=30)
    header, _, payload = out.partition(b"\r\n\r\n")
    assert header.startswith(b"Content-Length: ")
    assert int(header.split(b":")[1]) == len(payload)
    assert json.loads(payload)["result"]["serverInfo"]["name"] == "pdf-airlock"


def test_stdout_holds_only_frames_across_hostile_calls(docs: Path) -> None:
    calls = [("bomb.pdf", "fast"), ("not-a-pdf.pdf", "fast"), ("glyphs.pdf", "layout"), ("hello.pdf", "fast")]
    lines = [json.dumps(INIT), json.dumps(INITIALIZED)]
    for number, (path, engine) in enumerate(calls, start=10):
        arguments = {"path": path, "engine": engine}
        lines.append(
            json.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": number,
                    "method": "tools/call",
                    "params": {"name": "pdf_read", "arguments": arguments},
                }
            )
        )
    proc = subprocess.Popen(
        server_command(docs),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=PROJECT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write("\n".join(lines[:2]).encode() + b"\n")
    proc.stdin.flush()
    frames = [json.loads(proc.stdout.readline())]
    for line in lines[2:]:
        proc.stdin.write(line.encode() + b"\n")
        proc.stdin.flush()
        frames.append(json.loads(proc.stdout.readline()))
    proc.stdin.close()
    assert proc.stdout.read() == b""
    assert proc.wait(timeout=10) == 0
    results = {frame["id"]: frame["result"] for frame in frames[1:]}
    codes = [results[n].get("structuredContent", {}).get("error", {}).get("code") for n in range(10, 14)]
    assert codes[0] in {"memory_limit", "decompression_limit"}
    assert codes[1] == "not_a_pdf"
    assert codes[2] in {"timeout", "cpu_limit"}
    assert codes[3] is None and results[13]["isError"] is False


def test_answers_over_a_full_pipe_arrive_whole_and_each_once(tmp_path: Path) -> None:
    """Eight calls whose answers (about 280 KB each) overfill the 1 MiB stdout pipe while the
    client reads nothing: an answer written straight from its call stops where the pipe is full
    and its rest goes out through the write loop, ahead of every later frame. Read afterwards,
    each answer arrives whole, once, and the same."""
    pdfs.write(tmp_path / "long.pdf", pdfs.text_pdf(pdfs.prose_pages(200)))
    raw = RawServer(tmp_path)
    try:
        handshake(raw)
        for number in range(8):
            arguments = {"path": "long.pdf", "max_chars": 2_000_000}
            params = {"name": "pdf_read", "arguments": arguments}
            raw.send({"jsonrpc": "2.0", "id": 100 + number, "method": "tools/call", "params": params})
        time.sleep(3)  # the server reads and answers meanwhile, until the pipe is full
        frames = [raw.receive() for _ in range(8)]
        assert sorted(frame["id"] for frame in frames) == list(range(100, 108))
        results = [frame["result"] for frame in frames]
        assert len(results[0]["structuredContent"]["pages"]) == 200
        assert all(result == results[0] for result in results)
        assert len(json.dumps(results[0])) > 200_000
        raw.send({"jsonrpc": "2.0", "id": 108, "method": "tools/list"})
        assert raw.receive()["id"] == 108
    finally:
        raw.close()


def test_an_oversized_request_is_refused_with_its_id_then_serving_continues(docs: Path) -> None:
    raw = RawServer(docs, "--max-file-mb", str(MAX_FILE_MB))
    try:
        handshake(raw)
        raw.send_bytes(oversized_call("too-big") + b"\n")
        error = raw.receive()
        assert error["id"] == "too-big" and error["error"]["code"] == -32600
        assert f"{MESSAGE_CAP}-byte limit" in error["error"]["message"]
        raw.send({"jsonrpc": "2.0", "id": 3, "method": "ping"})
        assert raw.receive() == {"jsonrpc": "2.0", "id": 3, "result": {}}
        assert raw.close() == b""
    finally:
        raw.proc.kill()
        raw.proc.wait()


def read_lsp_frame(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        byte = proc.stdout.read(1)
        assert byte, f"stdout ended inside a frame header: {header!r}"
        header += byte
    length = int(header.split(b":")[1])
    return dict(json.loads(proc.stdout.read(length)))


def test_an_oversized_content_length_frame_is_refused_in_kind_with_its_id(docs: Path) -> None:
    proc = subprocess.Popen(
        server_command(docs, "--max-file-mb", str(MAX_FILE_MB)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=PROJECT,
    )
    assert proc.stdin is not None
    try:
        for body in (
            json.dumps(INIT).encode(),
            oversized_call(41),
            b'{"jsonrpc":"2.0","id":42,"method":"ping"}',
        ):
            proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            proc.stdin.flush()
        assert read_lsp_frame(proc)["result"]["serverInfo"]["name"] == "pdf-airlock"
        error = read_lsp_frame(proc)
        assert error["id"] == 41 and error["error"]["code"] == -32600
        assert f"{MESSAGE_CAP}-byte limit" in error["error"]["message"]
        assert read_lsp_frame(proc) == {"jsonrpc": "2.0", "id": 42, "result": {}}
    finally:
        proc.kill()
        proc.wait()
