"""Protocol behaviour over a raw pipe: ids, notifications, concurrency, cancellation, shutdown."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
from conftest import ALL_TOOLS, PROJECT, initialize_request, server_command

INIT = initialize_request(request_id=0)


def call(request_id: Any, path: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "pdf_read", "arguments": {"path": path, **arguments}},
    }


SLOW = {"engine": "layout"}


class Server:
    def __init__(self, root: Path, tmp: Path, *extra: str) -> None:
        self.stderr_path = tmp / "stderr.log"
        self.stderr = self.stderr_path.open("wb")
        self.proc = subprocess.Popen(
            server_command(root, *extra),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            cwd=PROJECT,
        )
        self.send(INIT)
        assert self.receive()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        for _ in range(1000):  # the start-up sandbox probe job must not be mistaken for a call's job
            if b'"sandbox_layers"' in self.stderr_path.read_bytes():
                break
            time.sleep(0.01)
        for _ in range(1000):  # the probe is answered before its child has exited
            if not self.job_children():
                break
            time.sleep(0.01)

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.endswith(b"\n"), line
        return dict(json.loads(line))

    def descendants(self) -> list[psutil.Process]:
        return psutil.Process(self.proc.pid).children(recursive=True)

    def job_children(self) -> list[psutil.Process]:
        """Children of the zygote that hold a job (idle pre-forked spares are ``airlock-spare``)."""
        children = []
        for process in self.descendants():
            try:
                if "pdf_airlock.worker.zygote" in " ".join(process.cmdline()):
                    children += [child for child in process.children() if child.name() == "airlock-job"]
            except psutil.NoSuchProcess:
                continue
        return children

    def audit_events(self) -> list[dict[str, Any]]:
        self.stderr.flush()
        lines = self.stderr_path.read_text().splitlines()
        return [json.loads(line) for line in lines if '"tool_call"' in line]

    def wait_for_job(self) -> psutil.Process:
        for _ in range(500):
            children = self.job_children()
            if children:
                return children[0]
            time.sleep(0.01)
        raise AssertionError("no job child")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.stderr.close()


@pytest.fixture
def server(docs: Path, tmp_path: Path) -> Any:
    instance = Server(docs, tmp_path)
    yield instance
    instance.close()


def test_repeated_id_replays_the_answer_without_running_again(server: Server) -> None:
    server.send(call(5, "hello.pdf", pages="1"))
    first = server.receive()
    server.send(call(5, "hello.pdf", pages="2"))
    second = server.receive()
    assert second == first
    assert len(server.audit_events()) == 1


def test_id_in_flight_is_refused_and_ids_keep_their_type(server: Server) -> None:
    server.send(call("job-7", "slow.pdf", **SLOW))
    server.send(call("job-7", "hello.pdf"))
    refused = server.receive()
    assert refused["id"] == "job-7" and refused["error"]["code"] == -32600
    done = server.receive()
    assert done["id"] == "job-7" and "result" in done


def test_notifications_get_no_reply_and_bad_params_get_32602(server: Server) -> None:
    server.send({"jsonrpc": "2.0", "method": "notifications/unknown_thing", "params": {}})
    server.send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": {}}})
    answer = server.receive()
    assert answer["id"] == 3 and answer["error"]["code"] == -32602
    server.send({"jsonrpc": "2.0", "id": 4, "method": "no/such", "params": {}})
    unknown = server.receive()
    assert unknown["error"]["code"] == -32601 and unknown["error"]["data"] == "no/such"


def test_calls_run_in_parallel_and_answer_out_of_order(server: Server) -> None:
    server.send(call(20, "slow.pdf", **SLOW))
    server.send(call(21, "hello.pdf", pages="1"))
    assert server.receive()["id"] == 21
    assert server.receive()["id"] == 20


def test_cancel_kills_the_job_child_and_sends_no_result(server: Server) -> None:
    server.send(call(30, "glyphs.pdf", **SLOW))
    child = server.wait_for_job()
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 30}})
    child.wait(timeout=2)
    server.send({"jsonrpc": "2.0", "id": 31, "method": "ping"})
    assert server.receive() == {"jsonrpc": "2.0", "id": 31, "result": {}}
    server.send(call(32, "hello.pdf", pages="1"))
    assert server.receive()["id"] == 32  # nothing for id 30 came before it
    events = server.audit_events()
    assert [event["outcome"] for event in events if event["request_id"] == 30] == ["cancelled"], events


def test_overloaded_past_the_queue(docs: Path, tmp_path: Path) -> None:
    server = Server(docs, tmp_path, "--workers", "1", "--queue-depth", "0")
    try:
        server.send(call(40, "slow.pdf", **SLOW))
        server.wait_for_job()
        server.send(call(41, "hello.pdf"))
        answer = server.receive()
        assert answer["id"] == 41
        assert answer["result"]["structuredContent"]["error"] == {
            "code": "overloaded",
            "message": answer["result"]["structuredContent"]["error"]["message"],
            "retryable": True,
            "details": {"workers": 1, "queue_depth": 0},
        }
        assert server.receive()["id"] == 40
    finally:
        server.close()


def test_eof_kills_in_flight_jobs_and_exits_zero(server: Server) -> None:
    server.send(call(50, "glyphs.pdf", **SLOW))
    child = server.wait_for_job()
    family = server.descendants()
    assert server.proc.stdin is not None
    started = time.monotonic()
    server.proc.stdin.close()
    assert server.proc.wait(timeout=5) == 0
    elapsed = time.monotonic() - started
    assert elapsed < 2.0, elapsed
    assert server.proc.stdout is not None
    rest = [json.loads(line) for line in server.proc.stdout.read().splitlines()]
    assert all(
        frame["id"] == 50 and frame["error"]["code"] == -32000 for frame in rest
    )  # "Connection closed"
    _gone, alive = psutil.wait_procs([child, *family], timeout=2)
    assert alive == []


def test_sigterm_lets_in_flight_call_finish(server: Server) -> None:
    server.send(call(60, "slow.pdf", **SLOW))
    server.wait_for_job()
    server.proc.send_signal(signal.SIGTERM)
    answer = server.receive()
    assert answer["id"] == 60 and answer["result"]["isError"] is False
    assert server.proc.wait(timeout=10) == 0


def test_sigint_exits_at_once_and_leaves_nothing(server: Server) -> None:
    server.send(call(70, "glyphs.pdf", **SLOW))
    child = server.wait_for_job()
    family = server.descendants()
    server.proc.send_signal(signal.SIGINT)
    assert server.proc.wait(timeout=2) == 130
    _gone, alive = psutil.wait_procs([child, *family], timeout=2)
    assert alive == []


def test_cancelled_queued_call_never_starts(docs: Path, tmp_path: Path) -> None:
    server = Server(docs, tmp_path, "--workers", "1")
    try:
        server.send(call(80, "slow.pdf", **SLOW))
        server.wait_for_job()
        server.send(call(81, "hello.pdf"))  # queued behind 80: one worker
        server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 81}})
        assert server.receive()["id"] == 80
        server.send({"jsonrpc": "2.0", "id": 82, "method": "ping"})
        assert server.receive()["id"] == 82
        events = {event["request_id"]: event for event in server.audit_events()}
        assert events[81]["outcome"] == "cancelled"
        assert "job_wall_ms" not in events[81]  # no job child ever ran for it
        assert "job_wall_ms" in events[80]
    finally:
        server.close()


def test_repeat_is_served_from_cache_until_the_file_changes(docs: Path, tmp_path: Path) -> None:
    import shutil

    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(docs / "hello.pdf", root / "doc.pdf")
    server = Server(root, tmp_path)
    try:
        server.send(call(90, "doc.pdf", pages="1"))
        first = server.receive()["result"]
        server.send(call(91, "doc.pdf", pages="1"))
        again = server.receive()["result"]
        shutil.copy(docs / "columns.pdf", root / "doc.pdf")
        server.send(call(92, "doc.pdf", pages="1"))
        changed = server.receive()["result"]
        events = {event["request_id"]: event for event in server.audit_events()}
    finally:
        server.close()
    assert again == first
    assert events[91].get("cache") == "hit" and "job_wall_ms" not in events[91]
    assert "cache" not in events[92]
    assert changed["structuredContent"]["sha256"] != first["structuredContent"]["sha256"]
    assert changed["structuredContent"]["pages"][0]["text"].startswith("left A")


def test_tools_list_category_filter(server: Server) -> None:
    server.send({"jsonrpc": "2.0", "id": 100, "method": "tools/list", "params": {"category": "security"}})
    security = ["pdf_attachments", "pdf_security"]
    assert [tool["name"] for tool in server.receive()["result"]["tools"]] == security
    server.send({"jsonrpc": "2.0", "id": 101, "method": "tools/list", "params": {"category": "structure"}})
    structure = {"pdf_info", "pdf_tables", "pdf_outline", "pdf_annotations", "pdf_forms"}
    assert {tool["name"] for tool in server.receive()["result"]["tools"]} == structure
    server.send({"jsonrpc": "2.0", "id": 102, "method": "tools/list", "params": {"category": "nonsense"}})
    assert server.receive()["error"]["code"] == -32602
    server.send({"jsonrpc": "2.0", "id": 103, "method": "tools/list"})
    assert len(server.receive()["result"]["tools"]) == len(ALL_TOOLS)
    server.send({"jsonrpc": "2.0", "id": 104, "method": "tools/list", "params": {"category": "render"}})
    assert [tool["name"] for tool in server.receive()["result"]["tools"]] == ["pdf_render", "pdf_images"]
