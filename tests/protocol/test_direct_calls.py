"""The direct ``tools/call`` route (pdf_airlock.server.mcp.direct_calls) answers byte for byte as the SDK
does."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest
from conftest import ALL_TOOLS, PROJECT, initialize_request, server_command

from pdf_airlock.server.mcp.direct_calls import DIRECT_CALLS_ENV
from pdf_airlock.server.mcp.handshake import FAST_HANDSHAKE_ENV, HANDSHAKE_VERSIONS

CALLS: list[dict[str, Any]] = [
    {"name": "pdf_info", "arguments": {"path": "hello.pdf"}},
    {"name": "pdf_read", "arguments": {"path": "hello.pdf", "pages": "2"}},
    {"name": "pdf_read", "arguments": {"path": "long.pdf", "max_chars": 700}},
    {"name": "pdf_search", "arguments": {"path": "hello.pdf", "query": "page"}},
    {"name": "pdf_render", "arguments": {"path": "hello.pdf", "page": 1, "dpi": 20}},
    {"name": "pdf_outline", "arguments": {"path": "hello.pdf"}},
    {"name": "pdf_read", "arguments": {"path": "missing.pdf"}},  # a tool error: isError
    {"name": "pdf_read", "arguments": {"path": "hello.pdf", "max_chars": "lots"}},  # invalid arguments
    {"name": "pdf_read", "arguments": {"path": "not-a-pdf.pdf"}},  # a hostile file's typed error
    {"name": "pdf_read"},  # no arguments at all
    {"name": "no_such_tool", "arguments": {}},  # -32602 from the SDK on both routes
    {"name": "pdf_read", "arguments": {"path": "hello.pdf"}, "extra": 1},  # unusual: the SDK's
    {"name": "pdf_read", "arguments": {"path": "hello.pdf"}, "_meta": {"progressToken": "p-1"}},
    {"name": "pdf_read", "arguments": {"path": "long.pdf"}, "_meta": {"progressToken": 7}},
]
DIRECT = 12  # the calls above the route takes: all but the unknown tool and the extra param


class Pipe:
    """A raw JSON-RPC pipe to a real server with the direct route on or off."""

    def __init__(self, root: Path, direct: bool) -> None:
        # The reference is the SDK alone: no direct route and no early answers before it loads.
        switch = "1" if direct else "0"
        env = {**os.environ, DIRECT_CALLS_ENV: switch, FAST_HANDSHAKE_ENV: switch}
        self.proc = subprocess.Popen(
            server_command(root, "--log-level", "debug", "--cache-mb", "0"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=PROJECT,
            env=env,
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def until_answer(self, request_id: int) -> list[bytes]:
        """Every frame up to and including the answer to ``request_id`` (progress first)."""
        assert self.proc.stdout is not None
        frames = []
        while True:
            frames.append(self.proc.stdout.readline())
            assert frames[-1], "the server closed stdout"
            if json.loads(frames[-1]).get("id") == request_id:
                return frames

    def close(self) -> list[dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        assert self.proc.wait(timeout=30) == 0
        return [json.loads(line) for line in self.proc.stderr.read().splitlines() if line.startswith(b"{")]


def session(root: Path, direct: bool, version: str) -> tuple[list[list[bytes]], list[dict[str, Any]]]:
    pipe = Pipe(root, direct)
    pipe.send(initialize_request(version))
    pipe.until_answer(1)
    pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    answers = []
    for number, params in enumerate(CALLS, start=2):
        pipe.send({"jsonrpc": "2.0", "id": number, "method": "tools/call", "params": params})
        answers.append(pipe.until_answer(number))
    return answers, pipe.close()


# A cursor's tag is signed with each process's own key (``pdf_airlock.server.tools.cursors``): compare bodies
# only.
_CURSOR_TAG = re.compile(rb"(eyJ[A-Za-z0-9_-]+)\.[A-Za-z0-9_-]{22}")


def unsigned(frames: list[bytes]) -> list[bytes]:
    return [_CURSOR_TAG.sub(rb"\1.TAG", frame) for frame in frames]


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_direct_route_answers_exactly_as_the_sdk(docs: Path, version: str) -> None:
    direct, direct_events = session(docs, True, version)
    sdk, sdk_events = session(docs, False, version)
    for params, ours, theirs in zip(CALLS, direct, sdk, strict=True):
        assert unsigned(ours) == unsigned(theirs), params
    routed = [event for event in direct_events if event.get("event") == "tool_call_direct"]
    assert len(routed) == DIRECT
    assert not [event for event in sdk_events if event.get("event") == "tool_call_direct"]
    # The answers are what they should be, not merely equal.
    answers = [json.loads(frames[-1]) for frames in direct]
    assert answers[1]["result"]["structuredContent"]["pages"][0]["text"].startswith("Page two")
    assert answers[6]["result"]["structuredContent"]["error"]["code"] == "not_found"
    assert answers[7]["result"]["structuredContent"]["error"]["code"] == "invalid_arguments"
    assert answers[8]["result"]["structuredContent"]["error"]["code"] == "not_a_pdf"
    assert answers[10]["error"]["code"] == -32602
    progress = [json.loads(frame) for frame in direct[-1][:-1]]
    assert [p["params"]["progress"] for p in progress] == list(range(1, 21))
    assert {p["params"]["progressToken"] for p in progress} == {7}
    assert answers[0]["result"]["structuredContent"]["page_count"] == 3


LISTS: list[dict[str, Any] | None] = [
    None,  # no params at all
    {},
    {"category": "text"},
    {"category": "render", "_meta": {"progressToken": "l-1"}},
    {"category": "nonsense"},  # -32602 from the SDK on both routes
    {"cursor": "abc"},  # the SDK's (it ignores the cursor: one page holds every tool)
    {"category": 3},  # the SDK's -32602
]
LISTED_DIRECT = 4  # the lists above the route takes


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_tools_list_answers_exactly_as_the_sdk(docs: Path, version: str) -> None:
    frames: dict[bool, list[bytes]] = {}
    events: dict[bool, list[dict[str, Any]]] = {}
    for direct in (True, False):
        pipe = Pipe(docs, direct)
        pipe.send(initialize_request(version))
        pipe.until_answer(1)
        pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        frames[direct] = []
        for number, params in enumerate(LISTS * 2, start=2):  # twice: the second from the stored one
            request = {"jsonrpc": "2.0", "id": number, "method": "tools/list"}
            pipe.send(request if params is None else request | {"params": params})
            [frame] = pipe.until_answer(number)
            frames[direct].append(frame)
        events[direct] = pipe.close()
    assert frames[True] == frames[False]
    answers = [json.loads(frame) for frame in frames[True]]
    assert len(answers[0]["result"]["tools"]) == len(ALL_TOOLS)
    assert {tool["name"] for tool in answers[2]["result"]["tools"]} == {
        "pdf_read",
        "pdf_markdown",
        "pdf_search",
    }
    assert [answers[n]["error"]["code"] for n in (4, 6)] == [-32602, -32602]
    assert answers[5]["result"] == answers[0]["result"]
    # Before the SDK has loaded a plain list is answered from the snapshot
    # (pdf_airlock.server.mcp.early_tools_list), after it by the direct route: either way not by the SDK.
    ours = {"tools_list_direct", "tools_list_answered_early"}
    assert len([event for event in events[True] if event.get("event") in ours]) == 2 * LISTED_DIRECT
    assert not [event for event in events[False] if event.get("event") in ours]


def plain(**params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "pdf_read", **params}}


@pytest.mark.parametrize(
    "message",
    [
        plain(arguments={"path": "a.pdf"}, extra=1),
        plain(arguments=[1]),
        plain(_meta={"progressToken": True}),
        plain(_meta={"progressToken": 1, "other": 2}),
        plain(_meta=None),
        {**plain(), "id": True},
        {**plain(), "id": "\u00e9"},
        {**plain(), "id": None},
        {**plain(), "jsonrpc": "1.0"},
        {**plain(), "method": "tools/list"},
        {**plain(), "params": {"name": "no_such_tool"}},
        {**plain(), "params": None},
    ],
)
def test_unusual_calls_are_left_to_the_sdk(message: dict[str, Any]) -> None:
    from pdf_airlock.server.mcp.direct_calls import DirectCalls

    route = DirectCalls(cast(Any, None), frozenset({"pdf_read"}))
    assert route.route(message, "2025-11-25") is None


def test_plain_calls_take_the_route_only_on_a_handshake_era_session() -> None:
    from pdf_airlock.server.mcp.direct_calls import DirectCalls

    route = DirectCalls(cast(Any, None), frozenset({"pdf_read"}))
    call = route.route(plain(arguments={"path": "a.pdf"}, _meta={"progressToken": "t"}), "2025-06-18")
    assert call is not None and call.request_id == 5 and call.progress_token == "t"
    assert route.route(plain(), "2026-07-28") is None
    assert route.route(plain(), None) is None  # the SDK answered initialize, or none was seen
