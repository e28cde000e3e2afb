"""``pdf-airlock call``: one tool through the same supervisor and sandbox, JSON on stdout."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import HELLO_PAGES, PROJECT


def call(root: Path, tool: str, arguments: dict[str, object]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pdf_airlock.server",
            "call",
            tool,
            "--json",
            json.dumps(arguments),
            "--root",
            str(root),
        ],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=60,
        check=False,
    )


def test_call_prints_result_json(docs: Path) -> None:
    done = call(docs, "pdf_read", {"path": "hello.pdf", "pages": "2"})
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["structuredContent"]["pages"][0]["text"] == HELLO_PAGES[1]
    audit = [json.loads(line) for line in done.stderr.splitlines() if '"tool_call"' in line]
    assert audit[0]["outcome"] == "ok" and audit[0]["tool"] == "pdf_read"
    assert HELLO_PAGES[1] not in done.stderr


def test_call_error_exit_status_and_no_password_in_logs(docs: Path) -> None:
    done = call(docs, "pdf_read", {"path": "encrypted.pdf", "password": "hunter2-secret"})
    assert done.returncode == 1
    assert json.loads(done.stdout)["structuredContent"]["error"]["code"] == "wrong_password"
    assert "hunter2-secret" not in done.stderr
    assert "hunter2-secret" not in done.stdout


def test_bundled_examples_read(tmp_path: Path) -> None:
    done = call(
        PROJECT / "examples", "pdf_read", {"path": "encrypted.pdf", "password": "airlock", "pages": "1"}
    )
    assert done.returncode == 0
    assert "Welcome to pdf-airlock" in json.loads(done.stdout)["structuredContent"]["pages"][0]["text"]


def test_job_nice_out_of_range_is_refused_before_starting(docs: Path) -> None:
    for value in ("20", "-1"):
        done = subprocess.run(
            [sys.executable, "-m", "pdf_airlock.server", "call", "pdf_info",
             "--json", '{"path": "hello.pdf"}', "--root", str(docs), "--job-nice", value],
            capture_output=True, text=True, cwd=PROJECT, timeout=60, check=False,
        )  # fmt: skip
        assert done.returncode != 0 and done.stdout == ""
        assert "--job-nice must be between 0 and 19" in done.stderr


def test_every_stderr_line_is_a_json_object(docs: Path) -> None:
    """The server's own events, and what the standard library's loggers (asyncio, the SDK) and
    Python warnings write, one JSON object a line: an audit pipeline reads stderr as JSON lines."""
    script = (
        "import logging, warnings, structlog\n"
        "from pdf_airlock.server.log import configure_logging\n"
        "configure_logging('info')\n"
        "structlog.get_logger('pdf_airlock.test').info('own_event', pages=2)\n"
        "logging.getLogger('asyncio').warning('Unknown child process pid %d', 15)\n"
        "logging.getLogger('asyncio').info('below the floor: not written')\n"
        "warnings.warn('an old API', DeprecationWarning, stacklevel=1)\n"
        "try:\n    1 / 0\n"
        "except ZeroDivisionError:\n    logging.getLogger('mcp.server').exception('failed')\n"
    )
    command = [sys.executable, "-W", "always", "-c", script]
    done = subprocess.run(command, capture_output=True, text=True, cwd=PROJECT, check=True)
    lines = [json.loads(line) for line in done.stderr.splitlines()]
    assert [(line.get("logger"), line["level"]) for line in lines] == [
        (None, "info"),
        ("asyncio", "warning"),
        ("py.warnings", "warning"),
        ("mcp.server", "error"),
    ]
    assert lines[0]["event"] == "own_event" and lines[0]["pages"] == 2
    assert lines[1]["event"] == "Unknown child process pid 15"
    assert "DeprecationWarning: an old API" in lines[2]["event"]
    assert "ZeroDivisionError" in lines[3]["exception"] and all("timestamp" in line for line in lines)
    call_done = call(docs, "pdf_info", {"path": "hello.pdf"})
    assert call_done.stderr and all(json.loads(line) for line in call_done.stderr.splitlines())
