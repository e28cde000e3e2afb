"""The on-disk result cache (``--cache-dir``): survives a restart, safe files, bounded, self-healing."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import mcp_types as types
from conftest import PROJECT, initialize_request, server_command

from server.cache import ResultCache

MIB = 1 << 20
SHA = "ab" * 32


def result(text: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content={"pages": [{"page": 1, "text": text}]},
        is_error=False,
    )


def entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.json"))


def test_entry_survives_a_new_cache_on_the_same_directory(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    first = ResultCache(MIB, directory, MIB)
    key = first.key(SHA, "pdf_read", {"path": "a.pdf", "pages": "1"})
    first.put(key, result("hello"), 100)
    second = ResultCache(MIB, directory, MIB)
    assert second.key(SHA, "pdf_read", {"pages": "1", "path": "a.pdf"}) == key
    assert second.get(key) == result("hello")
    assert (second.hits, second.disk_hits) == (1, 1)
    assert second.get(key) == result("hello") and second.disk_hits == 1  # now from memory
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    for path in [*entries(directory), directory / "salt"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not list(directory.glob(".*.tmp"))


def test_password_is_never_stored_and_its_results_stay_in_memory(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    cache = ResultCache(MIB, directory, MIB)
    key = cache.key(SHA, "pdf_read", {"path": "a.pdf", "password": "hunter2", "data": "QUJD"})
    cache.put(key, result("secret text"), 100)
    assert cache.get(key) is not None
    assert entries(directory) == []
    for path in directory.iterdir():
        assert b"hunter2" not in path.read_bytes() and b"secret text" not in path.read_bytes()
    # The salt is per directory: stable across restarts, different elsewhere.
    assert (
        ResultCache(MIB, directory, MIB).key(SHA, "pdf_read", {"path": "a.pdf", "password": "hunter2"}) == key
    )
    other = ResultCache(MIB, tmp_path / "other", MIB)
    assert other.key(SHA, "pdf_read", {"path": "a.pdf", "password": "hunter2"}) != key
    memory_only = ResultCache(MIB)
    assert memory_only.key(SHA, "pdf_read", {"path": "a.pdf", "password": "hunter2"}) != key


def test_corrupt_or_truncated_entries_are_misses_and_removed(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    cache = ResultCache(MIB, directory, MIB)
    keys = [cache.key(SHA, "pdf_read", {"pages": str(n)}) for n in range(4)]
    for key in keys:
        cache.put(key, result(key), 100)
    paths = {key: directory / f"{key}.json" for key in keys}
    paths[keys[0]].write_bytes(paths[keys[0]].read_bytes()[:20])  # truncated
    paths[keys[1]].write_text('{"format": 1, "key": "someone else", "result": {}}')  # wrong key
    body = json.loads(paths[keys[2]].read_text())
    body["result"]["isError"] = True  # not a successful result
    paths[keys[2]].write_text(json.dumps(body))
    fresh = ResultCache(MIB, directory, MIB)
    for key in keys[:3]:
        assert fresh.get(key) is None
        assert not paths[key].exists()
    assert fresh.get(keys[3]) == result(keys[3])


def test_disk_budget_removes_least_recently_used_first(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    cache = ResultCache(MIB, directory, MIB)
    keys = [cache.key(SHA, "pdf_read", {"pages": str(n)}) for n in range(10)]
    for index, key in enumerate(keys):
        cache.put(key, result("x" * 500), 600)
        os.utime(directory / f"{key}.json", (1000 + index, 1000 + index))
    budget = sum(path.stat().st_size for path in entries(directory)) + 100
    reopened = ResultCache(MIB, directory, budget)
    assert reopened.get(keys[0]) is not None  # a hit makes it the most recently used
    for extra in range(3):
        reopened.put(reopened.key(SHA, "pdf_read", {"pages": f"new-{extra}"}), result("x" * 500), 600)
    assert sum(path.stat().st_size for path in entries(directory)) <= budget
    left = {path.stem for path in entries(directory)}
    assert keys[0] in left and keys[9] in left
    assert keys[1] not in left and keys[2] not in left and keys[3] not in left


def audit(stderr: bytes) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in stderr.splitlines() if line.startswith(b"{")]
    return [event for event in events if event.get("event") == "tool_call"]


def one_call(root: Path, cache_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    call = {"name": "pdf_read", "arguments": {"path": "hello.pdf", "pages": "2"}}
    messages = [
        initialize_request(),
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
    ]
    proc = subprocess.Popen(
        server_command(root, "--cache-dir", str(cache_dir)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=PROJECT,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in messages))
    proc.stdin.flush()
    proc.stdout.readline()
    answer = json.loads(proc.stdout.readline())
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0 and out == b""
    [event] = audit(err)
    return answer["result"], event


def test_second_server_answers_from_disk_without_a_job(docs: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "results"
    first, first_event = one_call(docs, cache_dir)
    assert "cache" not in first_event and first_event["jobs"] == 1
    assert len(entries(cache_dir)) == 1
    again, again_event = one_call(docs, cache_dir)
    assert again == first
    assert again_event["cache"] == "hit" and "jobs" not in again_event and "job_wall_ms" not in again_event
    assert again["structuredContent"]["pages"][0]["text"].startswith("Page two")


def test_cache_dir_of_another_kind_is_refused(tmp_path: Path) -> None:
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    out = subprocess.run(
        server_command(tmp_path, "--cache-dir", str(not_a_dir)),
        capture_output=True,
        cwd=PROJECT,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode != 0 and b"--cache-dir" in out.stderr
