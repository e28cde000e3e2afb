"""The direct ``tools/call`` route of the HTTP transport (``pdf_airlock.server.http.direct``): it is
taken, it answers byte for byte as the SDK's route does (status, content type, body), it counts
and audits calls the same, and cancelling a direct call (by ``notifications/cancelled`` or by
going away) kills its job child.

Two real servers on real ports over the same folder, one with the route (the default) and one
without (``PDF_AIRLOCK_DIRECT_CALLS=0``), driven with raw HTTP so every byte is seen.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from conftest import initialize_request
from http_server import RunningServer, http_server

from pdf_airlock.server.mcp.direct_calls import DIRECT_CALLS_ENV
from pdf_airlock.server.mcp.handshake import HANDSHAKE_VERSIONS

CALLS: list[dict[str, Any]] = [
    {"name": "pdf_info", "arguments": {"path": "hello.pdf"}},
    {"name": "pdf_read", "arguments": {"path": "hello.pdf", "pages": "2"}},
    {"name": "pdf_read", "arguments": {"path": "long.pdf", "max_chars": 700}},  # a cursor
    {"name": "pdf_read", "arguments": {"path": "missing.pdf"}},  # a typed error: not_found
    {"name": "pdf_read", "arguments": {"path": "hello.pdf", "max_chars": "lots"}},  # invalid_arguments
    {"name": "pdf_read", "arguments": {"path": "not-a-pdf.pdf"}},  # a hostile file's typed error
    {"name": "pdf_read"},  # no arguments at all
    {"name": "no_such_tool", "arguments": {}},  # -32602 from the SDK on both servers
    {"name": "pdf_read", "arguments": {"path": "hello.pdf"}, "extra": 1},  # unusual: the SDK's
]
DIRECT = 7  # the calls above the route takes
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
# A cursor's tag is signed with each process's own key (pdf_airlock.server.tools.cursors).
_CURSOR_TAG = re.compile(rb"(eyJ[A-Za-z0-9_-]+)\.[A-Za-z0-9_-]{22}")
_CALLS_METRIC = re.compile(r'^pdf_airlock_calls_total\{outcome="([^"]*)",tool="([^"]*)"\} ([0-9.]+)$', re.M)


@pytest.fixture(scope="module")
def servers(docs: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[bool, RunningServer]]:
    """{direct route on: server, off: server}, both logging at debug, cache off."""
    logs = tmp_path_factory.mktemp("http-direct")
    flags = ("--log-level", "debug", "--cache-mb", "0")
    with (
        http_server(docs, logs / "direct.log", *flags) as direct,
        http_server(docs, logs / "sdk.log", *flags, env={DIRECT_CALLS_ENV: "0"}) as sdk,
    ):
        yield {True: direct, False: sdk}


class Session:
    """One MCP session over raw HTTP: ``initialize``, ``notifications/initialized``, then posts."""

    def __init__(self, url: str, version: str, capabilities: dict[str, Any] | None = None) -> None:
        self.url = url
        self.http = httpx2.Client(timeout=60)
        opening = initialize_request(version)
        opening["params"]["capabilities"] = capabilities or {}
        opened = self.http.post(url, json=opening, headers=HEADERS)
        assert opened.status_code == 200, opened.text
        self.headers = {
            **HEADERS,
            "Mcp-Session-Id": opened.headers["mcp-session-id"],
            "Mcp-Protocol-Version": version,
        }
        ready = self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert ready.status_code == 202

    def post(self, message: dict[str, Any], **headers: str) -> httpx2.Response:
        return self.http.post(self.url, json=message, headers={**self.headers, **headers})

    def call(self, request_id: int, params: dict[str, Any]) -> httpx2.Response:
        return self.post({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})

    def close(self) -> None:
        self.http.close()


def answer(response: httpx2.Response) -> bytes:
    """The JSON-RPC answer a POST carried: the JSON body, or an SSE stream's last message (the
    SDK's route streams an answer that takes longer than ``JSON_HOLD_S``)."""
    if response.headers["content-type"].startswith("text/event-stream"):
        data = [line[6:] for line in response.content.splitlines() if line.startswith(b"data: ")]
        return _CURSOR_TAG.sub(rb"\1.TAG", data[-1])
    return _CURSOR_TAG.sub(rb"\1.TAG", response.content)


def calls_counted(server: RunningServer) -> Counter[tuple[str, str]]:
    text = httpx2.get(server.base + "/metrics").text
    return Counter({(tool, outcome): float(n) for outcome, tool, n in _CALLS_METRIC.findall(text)})


def direct_ids(server: RunningServer) -> list[Any]:
    return [event.get("id") for event in server.log_events("tool_call_direct")]


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
def test_direct_route_answers_exactly_as_the_sdk(servers: dict[bool, RunningServer], version: str) -> None:
    base = 100 * (HANDSHAKE_VERSIONS.index(version) + 1)
    counted_before = {direct: calls_counted(server) for direct, server in servers.items()}
    responses: dict[bool, list[httpx2.Response]] = {}
    for direct, server in servers.items():
        session = Session(server.url, version)
        responses[direct] = [session.call(base + n, params) for n, params in enumerate(CALLS)]
        session.close()
    for params, ours, theirs in zip(CALLS, responses[True], responses[False], strict=True):
        assert ours.status_code == theirs.status_code == 200, params
        assert ours.headers["content-type"] == "application/json", params
        assert answer(ours) == answer(theirs), params
    # Taken for the plain calls of our tools, and only on the server that has the route.
    routed = [n for n in direct_ids(servers[True]) if isinstance(n, int) and base <= n < base + 100]
    assert routed == [base + n for n in range(DIRECT)]
    assert not direct_ids(servers[False])
    # The answers are what they should be, not merely equal.
    answers = [json.loads(answer(response)) for response in responses[True]]
    assert answers[0]["result"]["structuredContent"]["page_count"] == 3
    assert answers[1]["result"]["structuredContent"]["pages"][0]["text"].startswith("Page two")
    assert answers[3]["result"]["structuredContent"]["error"]["code"] == "not_found"
    assert answers[4]["result"]["structuredContent"]["error"]["code"] == "invalid_arguments"
    assert answers[5]["result"]["structuredContent"]["error"]["code"] == "not_a_pdf"
    assert answers[7]["error"]["code"] == -32602
    # Counted (Prometheus) and audited, principal included, as the SDK's route does.
    counted = {direct: calls_counted(server) - counted_before[direct] for direct, server in servers.items()}
    assert counted[True] == counted[False] and counted[True][("pdf_read", "not_found")] == 1
    audited = [
        event
        for event in servers[True].log_events("tool_call")
        if isinstance(event.get("request_id"), int) and base <= event["request_id"] < base + 100
    ]
    assert len(audited) == DIRECT + 1  # and the call with the extra param, through the SDK
    assert {event.get("principal") for event in audited} == {"anonymous"}


def test_what_needs_the_sdk_goes_through_it(servers: dict[bool, RunningServer]) -> None:
    """Progress (an SSE stream), a client that can be asked (a tool approvals may stop), a call
    before ``initialize``, and an unknown session are the SDK's, answered as before."""
    server = servers[True]
    before = len(direct_ids(server))
    session = Session(server.url, "2025-11-25", capabilities={"elicitation": {}})
    progress = {"name": "pdf_read", "arguments": {"path": "long.pdf"}, "_meta": {"progressToken": 1}}
    streamed = session.call(1, progress)
    assert streamed.headers["content-type"].startswith("text/event-stream")
    assert b"notifications/progress" in streamed.content
    asked = session.call(2, {"name": "pdf_read", "arguments": {"path": "hello.pdf"}})
    assert asked.headers["content-type"] == "application/json"  # a low-risk document: nothing asked
    assert not json.loads(asked.content)["result"]["isError"]
    triage = session.call(3, {"name": "pdf_security", "arguments": {"path": "hello.pdf"}})  # never asks
    assert not json.loads(triage.content)["result"]["isError"]
    assert direct_ids(server)[before:] == [3]
    unknown = session.post(
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "pdf_info"}},
        **{"Mcp-Session-Id": "0" * 32},
    )
    assert unknown.status_code == 404
    session.close()
    with httpx2.Client(timeout=30) as http:
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "pdf_info"}}
        assert http.post(server.url, json=call, headers=HEADERS).status_code == 400  # no session
    assert direct_ids(server)[before:] == [3]


def _killed_reads(server: RunningServer, request_id: int) -> list[dict[str, Any]]:
    """The exits of the ``pdf_read`` jobs of the call ``request_id``, once its audit record says
    it was cancelled (a job's exit is logged when it has been reaped, after the record)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        audited = [
            e
            for e in server.log_events("tool_call")
            if e.get("request_id") == request_id and e.get("outcome") == "cancelled"
        ]
        if audited:
            jobs = set(audited[-1]["job_ids"])
            exits = [
                e for e in server.log_events("job_exit") if e.get("job") in jobs and e["kind"] == "pdf_read"
            ]
            if exits:
                return exits
        time.sleep(0.1)
    raise AssertionError(f"call {request_id} was not audited as cancelled with its read's exit")


SLOW = {"name": "pdf_read", "arguments": {"path": "slow.pdf", "engine": "layout"}}


def _slow_call_under_way(session: Session, request_id: int) -> tuple[threading.Thread, list[httpx2.Response]]:
    """A slow direct call on a thread of its own, half a second under way: the thread, and the
    list its answer goes into."""
    answers: list[httpx2.Response] = []
    caller = threading.Thread(target=lambda: answers.append(session.call(request_id, SLOW)))
    caller.start()
    time.sleep(0.5)
    return caller, answers


def test_cancelling_a_direct_call_kills_its_job(servers: dict[bool, RunningServer]) -> None:
    server = servers[True]
    session = Session(server.url, "2025-11-25")
    caller, answers = _slow_call_under_way(session, 7)
    with httpx2.Client(timeout=30) as other:  # the notification on a connection of its own
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
        sent = other.post(server.url, json=cancel, headers=session.headers)
    assert sent.status_code == 202
    caller.join(30)
    assert 7 in direct_ids(server)
    assert json.loads(answers[0].content) == {
        "jsonrpc": "2.0",
        "id": 7,
        "error": {"code": -32800, "message": "Request cancelled"},
    }
    reads = _killed_reads(server, 7)
    assert reads and all(e.get("abandoned") and e["exit"] == "SIGKILL" for e in reads)
    assert not json.loads(session.call(8, CALLS[0]).content)["result"]["isError"]  # it goes on
    session.close()


def test_a_client_that_goes_away_kills_its_direct_call(servers: dict[bool, RunningServer]) -> None:
    server = servers[True]
    session = Session(server.url, "2025-11-25")
    with pytest.raises(httpx2.TimeoutException):  # then the connection is closed
        session.http.post(
            server.url,
            json={"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": SLOW},
            headers=session.headers,
            timeout=httpx2.Timeout(30, read=0.5),
        )
    session.close()
    assert 9 in direct_ids(server)
    reads = _killed_reads(server, 9)
    assert reads and all(e.get("abandoned") and e["exit"] == "SIGKILL" for e in reads)


def test_ending_the_session_kills_its_direct_call(servers: dict[bool, RunningServer]) -> None:
    server = servers[True]
    session = Session(server.url, "2025-11-25")
    caller, answers = _slow_call_under_way(session, 11)
    with httpx2.Client(timeout=30) as other:
        assert other.delete(server.url, headers=session.headers).status_code == 200
    caller.join(30)
    assert 11 in direct_ids(server)
    assert answers[0].status_code == 500  # as the SDK's route answers a call its session outlived
    assert (
        json.loads(answers[0].content)["error"]["message"]
        == "Session terminated before the request completed"
    )
    reads = _killed_reads(server, 11)
    assert reads and all(e.get("abandoned") and e["exit"] == "SIGKILL" for e in reads)
    session.close()
