"""The opening handshake answered before the SDK loads (pdf_airlock.server.mcp.handshake) is the
SDK's own answer.

Compared byte for byte with the SDK's answer for every protocol version, in process (the SDK's
``Server`` driven over memory streams) and end to end (a server with the early answer switched
off by ``PDF_AIRLOCK_FAST_HANDSHAKE=0``); requests sent before the SDK has loaded are answered in
order, and a handshake the early path does not vouch for is left to the SDK.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from conftest import ALL_TOOLS, PROJECT, connect, server_command
from mcp.shared.message import SessionMessage

from pdf_airlock.server.config import Settings
from pdf_airlock.server.mcp.handshake import (
    FAST_HANDSHAKE_ENV,
    HANDSHAKE_VERSIONS,
    INSTRUCTIONS,
    MODERN_VERSIONS,
    fast_answer,
    fast_frame,
)
from pdf_airlock.server.mcp.sdk_server import build_server
from pdf_airlock.server.pool.pool import Pool

CLIENT_INFO = {"name": "handshake-test", "version": "1.0"}
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
    "io.modelcontextprotocol/clientCapabilities": {},
}
CAPABILITIES = [
    {},
    {"roots": {"listChanged": True}, "sampling": {}, "elicitation": {"form": {}}},
    {"experimental": {"x": {}}, "tasks": {"requests": {"sampling": {"createMessage": {}}}}},
]
OFFERED = [*HANDSHAKE_VERSIONS, *MODERN_VERSIONS, "1999-01-01"]


def initialize(version: str, capabilities: dict[str, Any], request_id: int | str = 1) -> dict[str, Any]:
    params = {"protocolVersion": version, "capabilities": capabilities, "clientInfo": CLIENT_INFO}
    return {"jsonrpc": "2.0", "id": request_id, "method": "initialize", "params": params}


def discover(request_id: int | str = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "server/discover", "params": {"_meta": ENVELOPE}}


async def sdk_answer(request: dict[str, Any]) -> bytes:
    """What the SDK's own Server sends for ``request`` as a connection's first message."""
    server = build_server_for_test()
    in_send, in_recv = anyio.create_memory_object_stream[SessionMessage | Exception](4)
    out_send, out_recv = anyio.create_memory_object_stream[SessionMessage](4)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, in_recv, out_send, server.create_initialization_options())
        message = types.jsonrpc_message_adapter.validate_python(request, by_name=False)
        await in_send.send(SessionMessage(message))
        answer = await out_recv.receive()
        tg.cancel_scope.cancel()
    return answer.message.model_dump_json(by_alias=True, exclude_unset=True).encode()


def build_server_for_test() -> Any:
    from pdf_airlock.server.app.calls import App

    return build_server(App(Settings(roots=(PROJECT,)), Pool(1, 1, 1.0, 1.0)))


@pytest.mark.anyio
@pytest.mark.parametrize("version", OFFERED)
@pytest.mark.parametrize("capabilities", CAPABILITIES, ids=["none", "common", "nested"])
async def test_early_initialize_equals_the_sdk_answer(version: str, capabilities: dict[str, Any]) -> None:
    for request_id in (1, "init-\u00e9", 2**40):
        request = initialize(version, capabilities, request_id)
        result = fast_answer(request)
        if isinstance(request_id, str) and not request_id.isascii():
            assert result is None  # left to the SDK
            continue
        assert result is not None
        assert fast_frame(request, result) == await sdk_answer(request)


@pytest.mark.anyio
async def test_early_discover_equals_the_sdk_answer() -> None:
    request = discover(7)
    result = fast_answer(request)
    assert result is not None
    assert fast_frame(request, result) == await sdk_answer(request)


@pytest.mark.parametrize(
    "request_",
    [
        initialize("2025-11-25", {"roots": {"listChanged": "yes"}}),
        initialize("2025-11-25", {"roots": None}),
        initialize("2025-11-25", {"experimental": {"x": 1}}),
        {**initialize("2025-11-25", {}), "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
        {**initialize("2025-11-25", {}), "id": True},
        {**initialize("2025-11-25", {}), "jsonrpc": "1.0"},
        {
            **initialize("2025-11-25", {}),
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {**CLIENT_INFO, "icons": [{"src": "x"}]},
            },
        },
        {
            **discover(),
            "params": {"_meta": {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": "2025-11-25"}},
        },
        {**discover(), "params": {"_meta": {**ENVELOPE, "progressToken": 1}}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
    ],
)
def test_anything_unusual_is_left_to_the_sdk(request_: dict[str, Any]) -> None:
    assert fast_answer(request_) is None


class Pipe:
    def __init__(self, root: Path, fast: bool) -> None:
        env = {**os.environ, FAST_HANDSHAKE_ENV: "1" if fast else "0"}
        self.proc = subprocess.Popen(
            server_command(root, "--log-level", "debug"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=PROJECT,
            env=env,
        )

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
        self.proc.stdin.flush()

    def line(self) -> bytes:
        assert self.proc.stdout is not None
        return self.proc.stdout.readline()

    def close(self) -> list[dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0
        return [json.loads(line) for line in self.proc.stderr.read().splitlines() if line.startswith(b"{")]


def test_end_to_end_answer_is_the_sdk_answer_and_queued_requests_follow(docs: Path) -> None:
    """Everything is written at once, before the SDK can have loaded: nothing is lost, in order."""
    call = {"name": "pdf_read", "arguments": {"path": "hello.pdf", "pages": "2"}}
    messages = [
        initialize("2025-06-18", {"roots": {"listChanged": True}}),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": call},
    ]
    # Answered early, id 1 is answered at once: a repeat gets that answer again, before the rest.
    repeat = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    answers: dict[bool, list[bytes]] = {}
    for fast in (True, False):
        pipe = Pipe(docs, fast)
        started = time.monotonic()
        pipe.send(*messages, *([repeat] if fast else []))
        answers[fast] = [pipe.line() for _ in range(4 if fast else 3)]
        events = pipe.close()
        assert len([e for e in events if e.get("event") == "protocol_loaded"]) == 1
        for event in ("handshake_answered_early", "tools_list_answered_early"):
            assert len([e for e in events if e.get("event") == event]) == (1 if fast else 0)
        mismatches = {"early_handshake_mismatch", "early_tools_list_mismatch"}
        assert not [e for e in events if e.get("event") in mismatches]
        # the call waits for the zygote's warm-up, which loads every installed OCR language
        assert time.monotonic() - started < 90
    # Early, the list is answered before the repeated id that follows it in the input.
    initialized, tools_list, replayed, read_call = answers[True]
    assert initialized == answers[False][0]
    assert replayed == initialized
    tools = json.loads(tools_list)
    assert tools["id"] == 2 and {t["name"] for t in tools["result"]["tools"]} >= {"pdf_info", "pdf_read"}
    read = json.loads(read_call)
    assert read["id"] == 3 and read["result"]["structuredContent"]["pages"][0]["text"].startswith("Page two")
    assert [tools_list, read_call] == answers[False][1:]


def test_tools_list_snapshot_is_the_live_answer() -> None:
    """The tools/list snapshot (``python scripts/tools_list_snapshot.py``) is what the SDK's
    rules make of the tools now, for every handshake-era version."""
    sys.path.insert(0, str(PROJECT / "scripts"))
    from tools_list_snapshot import snapshot

    from pdf_airlock.server.mcp.early_tools_list import load_snapshot

    stored = load_snapshot()
    assert stored == snapshot(), "stale: run python scripts/tools_list_snapshot.py"
    assert stored["versions"] == list(HANDSHAKE_VERSIONS)
    assert {tool["name"] for tool in stored["result"]["tools"]} == ALL_TOOLS


def test_instructions_say_once_what_every_tool_shares() -> None:
    """The tools' schemas leave the shared rules to the instructions: the whole error taxonomy,
    the page selector syntax, the cursor rule and the fields every result carries."""
    from pdf_airlock.server.errors import CODES

    listed = INSTRUCTIONS.split("code is one of: ", 1)[1].rstrip(".")
    assert set(listed.split(", ")) == CODES
    for told in ("'1-3,7'", "'iv'", "cursor", "same arguments", "source", "sha256", "size_bytes", "base64"):
        assert told in INSTRUCTIONS, told


def test_unusual_handshake_waits_for_the_sdk(docs: Path) -> None:
    pipe = Pipe(docs, fast=True)
    request = initialize("2025-11-25", {})
    request["params"]["clientInfo"] = {**CLIENT_INFO, "icons": [{"src": "data:,"}]}
    pipe.send(request, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    answer = json.loads(pipe.line())
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert json.loads(pipe.line())["id"] == 2
    events = pipe.close()
    assert not [e for e in events if e.get("event") == "handshake_answered_early"]


@pytest.mark.anyio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_real_client_lists_and_calls_right_after_the_handshake(docs: Path, mode: str) -> None:
    async with connect(docs, mode=mode) as client:
        tools = await client.list_tools()
        assert {tool.name for tool in tools.tools} >= {"pdf_info", "pdf_read"}
        result = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "1"})
        assert not result.is_error
        assert result.structured_content is not None
        assert result.structured_content["pages"][0]["text"].startswith("Hello from page one.")


def test_serve_path_does_not_import_the_sdk() -> None:
    """What runs before the first answer: no mcp SDK, no tool models, no PDF engine."""
    code = (
        "import json, sys; import pdf_airlock.server.cli.main, pdf_airlock.server.stdio.startup; "
        "import pdf_airlock.server.stdio.transport, pdf_airlock.server.mcp.handshake; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, check=True, cwd=PROJECT, text=True
    )
    loaded = set(json.loads(out.stdout))
    assert not {m for m in loaded if m.split(".")[0] in {"mcp", "mcp_types", "pydantic", "pikepdf"}}
    assert (
        "pdf_airlock.server.tools.models" not in loaded and "pdf_airlock.server.mcp.sdk_server" not in loaded
    )
