"""The HTTP listener before any request reaches the app (``http/connections.py``), attacked as a
stranger without a token would: over real sockets against the real server.

- an unfinished 64 MiB header is refused ``431`` at ``--max-head-kb`` and costs the server no
  memory (its resident size is measured before and after);
- a connection that sends nothing, half a head, a head a byte at a time, half a body, or
  nothing after its answer is closed at its deadline (``408`` when a request was under way);
- 1,100 idle and half-sent sockets against a server whose open-file limit is 1,024 leave room
  for an authenticated call and for ``/healthz``;
- a ``Host`` that is not this server's (DNS rebinding) is ``421`` on every route.

Deadlines are checked from below (the server never closes early) and by the event (the close
comes), with a generous ceiling that only a server which never closes would reach.
"""

from __future__ import annotations

import json
import resource
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pdfs
import pytest
from http_server import AUDIENCE, ISSUER, Keys, RunningServer, http_server
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

MIB = 1 << 20
HEAD_CAP_KB = 64
NEVER_S = 30.0  # a close that has not come by now never will
SHORT_DEADLINE_S = 1.0  # --head-timeout and --keepalive-timeout of the deadline server
PARTIAL_HEAD = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
# What the 64 MiB attack may add to the server's resident size: the cap (64 KiB) and a read's
# buffers, with room for the allocator; before the cap it added 65 MiB per connection.
RSS_ALLOWANCE_KIB = 12 * 1024
ATTACK_HELD_FDS = 700  # of 1,024: the cap is 1,024 - --fd-reserve 256 = 768 connections


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("listener")
    pdfs.write(folder / "report.pdf", pdfs.text_pdf(["A report read under siege."]))
    return folder


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """Loopback, no auth, short deadlines."""
    log = tmp_path_factory.mktemp("listener-log") / "server.log"
    with http_server(
        root,
        log,
        "--head-timeout",
        str(SHORT_DEADLINE_S),
        "--keepalive-timeout",
        str(SHORT_DEADLINE_S),
        "--body-timeout",
        str(SHORT_DEADLINE_S),
    ) as running:
        yield running


def _connect(server: RunningServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=NEVER_S)
    sock.settimeout(NEVER_S)
    return sock


def _read_to_eof(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes (``TimeoutError`` if it never does)."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


# -- the head cap ----------------------------------------------------------------------------


def test_a_head_past_the_cap_is_431_and_closed(server: RunningServer) -> None:
    with _connect(server) as sock:
        sock.sendall(PARTIAL_HEAD + b"X-Big: " + b"a" * (HEAD_CAP_KB * 1024))
        answer = _read_to_eof(sock)
    assert answer.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert b"connection: close" in answer


def test_a_head_within_the_cap_is_served(server: RunningServer) -> None:
    with _connect(server) as sock:
        padding = b"X-Pad: " + b"a" * (HEAD_CAP_KB * 1024 - 200) + b"\r\n"
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n" + padding + b"Connection: close\r\n\r\n")
        answer = _read_to_eof(sock)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
    assert answer.endswith(b'{"status":"ok"}')


def test_unfinished_64_mib_headers_cost_the_server_no_memory(server: RunningServer) -> None:
    """Three at once, as the attack was run (it raised the resident size by 65 MiB each)."""
    before_kib = server.status("VmRSS")
    refused_before = len(server.log_events("http_head_too_large"))
    answers: list[bytes] = []

    def attack() -> None:
        with _connect(server) as sock:
            try:
                sock.sendall(PARTIAL_HEAD + b"X-Big: ")
                for _ in range(64):
                    sock.sendall(b"a" * MIB)
            except OSError:  # the server closed the connection while we were still sending
                pass
            try:
                answers.append(_read_to_eof(sock))
            except OSError:
                answers.append(b"")

    threads = [threading.Thread(target=attack) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(2 * NEVER_S)
    after_kib = server.status("VmRSS")
    assert after_kib - before_kib < RSS_ALLOWANCE_KIB, (before_kib, after_kib)
    assert len(server.log_events("http_head_too_large")) - refused_before == 3
    assert len(answers) == 3
    assert httpx2.get(server.base + "/healthz").status_code == 200


# -- deadlines -------------------------------------------------------------------------------


def _closed_after(sock: socket.socket) -> tuple[bytes, float]:
    started = time.monotonic()
    answer = _read_to_eof(sock)
    return answer, time.monotonic() - started


def test_a_connection_that_sends_nothing_is_closed_silently(server: RunningServer) -> None:
    with _connect(server) as sock:
        answer, waited = _closed_after(sock)
    assert answer == b""
    assert waited >= SHORT_DEADLINE_S * 0.9


def test_a_half_sent_head_is_408_at_its_deadline(server: RunningServer) -> None:
    with _connect(server) as sock:
        sock.sendall(PARTIAL_HEAD)
        answer, waited = _closed_after(sock)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert waited >= SHORT_DEADLINE_S * 0.9


def test_a_head_sent_a_byte_at_a_time_gets_no_more_time(server: RunningServer) -> None:
    """Each byte would reset an idle timer; the head's deadline runs from its first byte."""
    with _connect(server) as sock:
        started = time.monotonic()
        closed = False
        for byte in PARTIAL_HEAD * 10:
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            sock.settimeout(SHORT_DEADLINE_S / 10)
            try:
                sock.recv(65536)  # the server answered (408) or closed
            except TimeoutError:
                continue
            closed = True
            break
            assert time.monotonic() - started < NEVER_S
    assert closed
    assert time.monotonic() - started >= SHORT_DEADLINE_S * 0.9


def test_an_idle_kept_connection_is_closed(server: RunningServer) -> None:
    with _connect(server) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        answer, waited = _closed_after(sock)
    assert answer.startswith(b"HTTP/1.1 200 OK\r\n")  # answered, kept, then closed when idle
    assert waited >= SHORT_DEADLINE_S * 0.9


def test_a_body_not_sent_in_time_is_408_and_closed(server: RunningServer) -> None:
    with _connect(server) as sock:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n" + b'{"jsonrpc"'
        )
        answer, waited = _closed_after(sock)
    assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n")
    assert answer.endswith(b"Request body not received in time")
    assert waited >= SHORT_DEADLINE_S * 0.9


def test_the_body_of_an_answered_request_gets_no_more_time(server: RunningServer) -> None:
    """A request answered before its body was read (a refusal) cannot be kept open by sending
    the rest of the body slowly: it is closed at the idle deadline however the bytes trickle."""
    with _connect(server) as sock:
        sock.sendall(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 999999999999\r\n\r\n"
        )
        started = time.monotonic()
        answer = b""
        sock.settimeout(SHORT_DEADLINE_S / 5)
        while time.monotonic() - started < NEVER_S:
            try:
                sock.sendall(b"x")
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 413 ")  # over --max-body-mb: refused from its length
    assert time.monotonic() - started < NEVER_S


# -- connections and file descriptors --------------------------------------------------------


@pytest.mark.parametrize(
    "flags",
    [(), ("--head-timeout", "300", "--keepalive-timeout", "300")],
    ids=["defaults", "no-deadline-help"],
)
def test_1100_sockets_at_a_1024_fd_limit_leave_room_for_a_call_and_healthz(
    root: Path, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    """Before the cap, 1,100 idle and half-sent sockets made an authenticated call fail with
    "Too many open files", and ``/healthz`` with it. The cap holds without the deadlines'
    help too (they are long enough here for the attack to outlast the call)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1100 + 256
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"this process may open only {hard} files")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    keys = Keys()
    jwks = tmp_path / "jwks.json"
    jwks.write_text(json.dumps(keys.jwks()))
    auth = ("--auth-jwks", str(jwks), "--auth-issuer", ISSUER, "--auth-audience", AUDIENCE)
    held: list[socket.socket] = []
    with http_server(root, tmp_path / "server.log", *auth, *flags, nofile=1024) as server:
        rss_before = server.status("VmRSS")
        try:
            for n in range(1100):
                sock = socket.create_connection(("127.0.0.1", server.port), timeout=NEVER_S)
                if n % 2:
                    sock.sendall(PARTIAL_HEAD)
                held.append(sock)
            # The attack is real: the server takes them in and holds as many as its cap lets it.
            deadline = time.monotonic() + NEVER_S
            while server.open_fds() < ATTACK_HELD_FDS:
                assert time.monotonic() < deadline, server.open_fds()
                time.sleep(0.1)
            answer = anyio.run(_read_report, server, keys.token())
            assert "A report read under siege." in answer
            assert httpx2.get(server.base + "/healthz", timeout=NEVER_S).status_code == 200
            assert server.open_fds() < 1024
            rss_after = server.status("VmRSS")
        finally:
            for sock in held:
                sock.close()
        assert rss_after - rss_before < 64 * 1024, (rss_before, rss_after)  # 1,100 sockets, not MiBs each
        assert "Too many open files" not in server.log.read_text()


async def _read_report(server: RunningServer, token: str) -> str:
    headers = {"Authorization": f"Bearer {token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=NEVER_S) as http:
        async with Client(
            streamable_http_client(server.url, http_client=http), read_timeout_seconds=60
        ) as client:
            result = await client.call_tool("pdf_read", {"path": "report.pdf"})
    assert not result.is_error, result
    return str(result.content[0].text)  # type: ignore[union-attr]


# -- Host ------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/metrics", "/healthz", "/readyz", "/mcp"])
def test_a_foreign_host_is_421_on_every_route(server: RunningServer, path: str) -> None:
    """DNS rebinding: a page on evil.example whose name now resolves to 127.0.0.1."""
    refused = httpx2.get(server.base + path, headers={"Host": f"evil.example:{server.port}"})
    assert refused.status_code == 421
    assert refused.text == "Host not allowed"
    own = httpx2.get(server.base + "/healthz", headers={"Host": f"localhost:{server.port}"})
    assert own.status_code == 200


def test_an_allowed_host_passes(root: Path, tmp_path: Path) -> None:
    flags = ("--allow-host", "pdf.internal", "--allow-host", "127.0.0.1")
    with http_server(root, tmp_path / "server.log", *flags) as server:
        named = httpx2.get(server.base + "/metrics", headers={"Host": f"PDF.internal:{server.port}"})
        assert named.status_code == 200
        assert httpx2.get(server.base + "/metrics").status_code == 200  # Host: 127.0.0.1:port
        other = httpx2.get(server.base + "/metrics", headers={"Host": f"localhost:{server.port}"})
        assert other.status_code == 421  # the list replaces the default
