"""Resumable streams (``--resume-buffer-mb``) on the real server and a real port: a client whose
connection drops mid-call comes back with ``Last-Event-ID`` and gets what it missed, then the
answer; another session cannot replay that stream; without the flag there is nothing to resume.

The HTTP is spoken by hand (httpx) because a drop mid-stream is the point: the SDK's client
would send a cancellation when its call is abandoned, which is what a dropped connection is not.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
from http_server import RunningServer, http_server

VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
TIMEOUT_S = 60.0
CALL_ID = 7
PAGES = 20  # long.pdf of the ``docs`` fixture


def _headers(session: str | None = None, **more: str) -> dict[str, str]:
    headers = {"Accept": ACCEPT, "Content-Type": "application/json", "MCP-Protocol-Version": VERSION}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    return headers | more


def _session(client: httpx2.Client, server: RunningServer) -> str:
    hello = {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "resume", "version": "0"}}
    answer = client.post(
        server.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        headers=_headers(),
    )
    assert answer.status_code == 200, answer.text
    session = answer.headers["mcp-session-id"]
    done = client.post(
        server.url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=_headers(session),
    )
    assert done.status_code == 202
    return session


def _events(response: httpx2.Response) -> Iterator[tuple[str | None, dict[str, Any] | None]]:
    """(event id, parsed data) of each SSE event as it comes; data None for a priming event."""
    event_id: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if line.startswith("id:"):
            event_id = line[3:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line:
            if event_id is not None or data:
                text = "\n".join(data)
                yield event_id, json.loads(text) if text else None
            event_id, data = None, []


def _call() -> dict[str, Any]:
    arguments = {"path": "long.pdf", "engine": "layout", "max_chars": 200_000}
    params = {"name": "pdf_read", "arguments": arguments, "_meta": {"progressToken": "p"}}
    return {"jsonrpc": "2.0", "id": CALL_ID, "method": "tools/call", "params": params}


def _finished(server: RunningServer, request_id: int) -> bool:
    """The server has answered the call (its audit record is written as the answer goes)."""
    return any(event.get("request_id") == request_id for event in server.log_events("tool_call"))


def test_a_dropped_stream_is_resumed_and_only_by_its_session(docs: Path, tmp_path: Path) -> None:
    with (
        http_server(docs, tmp_path / "server.log", "--resume-buffer-mb", "4") as server,
        httpx2.Client(timeout=TIMEOUT_S) as client,
    ):
        session = _session(client, server)
        seen: list[dict[str, Any]] = []
        last_id = None
        with client.stream("POST", server.url, json=_call(), headers=_headers(session)) as response:
            assert response.headers["content-type"].startswith("text/event-stream")
            for event_id, data in _events(response):
                assert event_id, "every event of a resumable stream has an id"
                last_id = event_id
                if data is not None:
                    seen.append(data)
                    break  # the first progress notification: drop the connection here
        assert seen and seen[0]["method"] == "notifications/progress"
        assert last_id is not None

        other = _session(client, server)
        stranger = client.get(server.url, headers=_headers(other, **{"Last-Event-ID": last_id}))
        # Another session's store does not know the id: an empty replay, never the call's events.
        assert stranger.status_code == 200
        assert stranger.headers["content-type"].startswith("text/event-stream")
        assert [
            line for line in stranger.text.splitlines() if line.startswith("data:") and line[5:].strip()
        ] == []

        # Everything after the drop happens while nobody listens: the call runs to its end, so
        # every later event (progress and answer) can only come back through the replay.
        deadline = time.monotonic() + TIMEOUT_S
        while not _finished(server, CALL_ID):
            assert time.monotonic() < deadline, "the call never finished"
            time.sleep(0.05)

        resumed: list[dict[str, Any]] = []
        with client.stream(
            "GET", server.url, headers=_headers(session, **{"Last-Event-ID": last_id})
        ) as again:
            assert again.status_code == 200
            for _event_id, data in _events(again):
                if data is not None:
                    resumed.append(data)
                    if data.get("id") == CALL_ID:
                        break
    answer = resumed[-1]
    assert answer["id"] == CALL_ID and answer["result"]["isError"] is False
    pages = answer["result"]["structuredContent"]["pages"]
    assert [page["page"] for page in pages] == list(range(1, PAGES + 1))
    notes = [*seen, *resumed[:-1]]
    assert all(message["method"] == "notifications/progress" for message in notes)
    # Nothing lost, nothing twice, in order: every page's progress, the ones sent while the
    # client was away included.
    assert [message["params"]["progress"] for message in notes] == list(range(1, PAGES + 1))
    assert len(resumed) > 1


def test_without_the_flag_answers_carry_no_event_ids(docs: Path, tmp_path: Path) -> None:
    with http_server(docs, tmp_path / "server.log") as server, httpx2.Client(timeout=TIMEOUT_S) as client:
        session = _session(client, server)
        with client.stream("POST", server.url, json=_call(), headers=_headers(session)) as response:
            ids = [event_id for event_id, _data in _events(response)]
    assert ids and set(ids) == {None}


def test_a_negative_buffer_is_a_usage_error(docs: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pdf_airlock.server",
            "serve",
            "--transport",
            "streamable-http",
            "--root",
            str(docs),
            "--resume-buffer-mb",
            "-1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "--resume-buffer-mb must not be negative" in done.stderr
