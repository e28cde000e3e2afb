"""What one principal may hold before its calls run (``http/quotas.py``), attacked over real
sockets against the real server with real tokens:

- one principal opening session after session gets ``429`` at ``--sessions-per-principal``
  (it used to fill the server-wide cap, and every other principal got ``503``), and opening a
  session spends a token of its rate;
- a principal with a concurrency of 2 sending three large bodies at once gets ``429`` for the
  third before it is read (all three used to be buffered and parsed first), while a small body
  still passes;
- a large inline call costs the server about twice its body at its peak (it was seven times).
"""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pdfs
import pytest
from http_server import AUDIENCE, ISSUER, Keys, RunningServer, http_server

VERSION = "2025-11-25"
ACCEPT = "application/json, text/event-stream"
SESSIONS_CAP = 3
MIB = 1 << 20
TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


@pytest.fixture(scope="module")
def server(keys: Keys, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    folder = tmp_path_factory.mktemp("admission")
    root = folder / "root"
    root.mkdir()
    pdfs.write(root / "report.pdf", pdfs.text_pdf(["Admitted."]))
    jwks = folder / "jwks.json"
    jwks.write_text(json.dumps(keys.jwks()))
    policy = folder / "policy.toml"
    policy.write_text(
        f'[defaults]\nroots = ["{root}"]\n\n'
        '[[principal]]\nsubject = "pair"\nconcurrency = 2\n\n'
        '[[principal]]\nsubject = "slow-opener"\nrate_per_minute = 2\n'
    )
    with http_server(
        root,
        folder / "server.log",
        "--auth-jwks",
        str(jwks),
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        AUDIENCE,
        "--policy",
        str(policy),
        "--sessions-per-principal",
        str(SESSIONS_CAP),
        "--max-body-mb",
        "40",
    ) as running:
        yield running


def _headers(token: str, session: str | None = None) -> dict[str, str]:
    headers = {
        "Accept": ACCEPT,
        "Content-Type": "application/json",
        "Authorization": f"Bearer {token}",
        "MCP-Protocol-Version": VERSION,
    }
    if session is not None:
        headers["Mcp-Session-Id"] = session
    return headers


def _initialize(client: httpx2.Client, server: RunningServer, token: str) -> httpx2.Response:
    hello = {
        "protocolVersion": VERSION,
        "capabilities": {},
        "clientInfo": {"name": "admission", "version": "0"},
    }
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
    headers = _headers(token)
    del headers["MCP-Protocol-Version"]  # an opening request names no version yet
    return client.post(server.url, json=body, headers=headers)


def _session(client: httpx2.Client, server: RunningServer, token: str) -> str:
    opened = _initialize(client, server, token)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    done = client.post(
        server.url,
        json={"jsonrpc": "2.0", "method": "notifications/initialized"},
        headers=_headers(token, session),
    )
    assert done.status_code == 202
    return session


def _refused_429(response: httpx2.Response, retry_after: str) -> str:
    assert response.status_code == 429
    assert response.headers["retry-after"] == retry_after
    error = response.json()
    assert error["jsonrpc"] == "2.0" and error["id"] is None
    return str(error["error"]["message"])


# -- sessions --------------------------------------------------------------------------------


def test_a_principal_cannot_hold_more_than_its_sessions(server: RunningServer, keys: Keys) -> None:
    with httpx2.Client(timeout=TIMEOUT_S) as client:
        alice = keys.token("alice")
        opened = [_session(client, server, alice) for _ in range(SESSIONS_CAP)]
        message = _refused_429(_initialize(client, server, alice), "60")
        assert message == f"{SESSIONS_CAP} sessions of this principal are open"
        assert _initialize(client, server, keys.token("bob")).status_code == 200  # others are not shut out
        closed = client.delete(server.url, headers=_headers(alice, opened[0]))
        assert closed.status_code == 200
        assert _initialize(client, server, alice).status_code == 200  # the closed one no longer counts


def test_opening_a_session_spends_the_rate(server: RunningServer, keys: Keys) -> None:
    with httpx2.Client(timeout=TIMEOUT_S) as client:
        token = keys.token("slow-opener")
        assert _initialize(client, server, token).status_code == 200
        assert _initialize(client, server, token).status_code == 200
        refused = _initialize(client, server, token)
        message = _refused_429(refused, refused.headers["retry-after"])
        assert message.startswith("rate limit of 2 calls a minute reached")
        assert 1 <= int(refused.headers["retry-after"]) <= 60


# -- bodies ----------------------------------------------------------------------------------


def _call_body(data: bytes, request_id: int) -> bytes:
    arguments = {"data": base64.b64encode(data).decode()}
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "pdf_info", "arguments": arguments},
    }
    return json.dumps(message).encode()


def _padded_pdf(size: int) -> bytes:
    """A real one-page PDF followed by ``size`` bytes in all (bytes after %%EOF are ignored)."""
    pdf = pdfs.text_pdf(["Padded."])
    return pdf + b"\n%" + b"p" * (size - len(pdf) - 2)


class RawPost:
    """A POST sent by hand: its head with ``Expect: 100-continue`` first, its body later."""

    def __init__(self, server: RunningServer, token: str, session: str, body: bytes) -> None:
        self.body = body
        self.sock = socket.create_connection(("127.0.0.1", server.port), timeout=TIMEOUT_S)
        head = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{server.port}", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in _headers(token, session).items()]
        head.append("Expect: 100-continue")
        self.sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode())
        self.buffered = b""

    def status(self) -> tuple[int, dict[str, str]]:
        """The next response head's status and headers."""
        while b"\r\n\r\n" not in self.buffered:
            chunk = self.sock.recv(65536)
            assert chunk, self.buffered
            self.buffered += chunk
        head, _, self.buffered = self.buffered.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(lines[0].split()[1]), headers

    def answer(self) -> tuple[int, dict[str, Any]]:
        self.sock.sendall(self.body)
        status, headers = self.status()
        length = int(headers["content-length"])
        while len(self.buffered) < length:
            chunk = self.sock.recv(65536)
            assert chunk
            self.buffered += chunk
        return status, json.loads(self.buffered[:length])

    def close(self) -> None:
        self.sock.close()


def test_a_third_large_body_at_concurrency_two_is_429_before_it_is_read(
    server: RunningServer, keys: Keys
) -> None:
    token = keys.token("pair")
    with httpx2.Client(timeout=TIMEOUT_S) as client:
        session = _session(client, server, token)
    document = _padded_pdf(MIB)
    held = [RawPost(server, token, session, _call_body(document, n)) for n in (10, 11)]
    try:
        for post in held:  # "100 Continue": the server holds a body slot and asks for the body
            assert post.status()[0] == 100
        third = RawPost(server, token, session, _call_body(document, 12))
        try:
            status, headers = third.status()  # answered before a byte of its body was sent
            assert status == 429 and headers["retry-after"] == "1"
        finally:
            third.close()
        with httpx2.Client(timeout=TIMEOUT_S) as client:  # a small body needs no slot
            ping = client.post(
                server.url,
                json={"jsonrpc": "2.0", "id": 13, "method": "ping"},
                headers=_headers(token, session),
            )
            assert ping.status_code == 200
        for post in held:
            status, answer = post.answer()
            assert status == 200
            assert answer["result"]["structuredContent"]["page_count"] == 1
    finally:
        for post in held:
            post.close()
    again = RawPost(server, token, session, _call_body(document, 14))  # the slots were given back
    try:
        assert again.status()[0] == 100
        status, answer = again.answer()
        assert status == 200 and answer["result"]["isError"] is False
    finally:
        again.close()


def test_a_large_inline_call_costs_about_twice_its_body(server: RunningServer, keys: Keys) -> None:
    """A 100 MB inline call peaked at 968 MiB of the server's memory (the body was copied by the
    SDK's middleware, kept by the request, parsed, ASCII-encoded and decoded whole)."""
    token = keys.token("carol")
    with httpx2.Client(timeout=TIMEOUT_S) as client:
        session = _session(client, server, token)
        body = _call_body(_padded_pdf(24 * MIB), 20)
        Path(f"/proc/{server.process.pid}/clear_refs").write_text("5")  # the peak starts again here
        before_kib = server.status("VmRSS")
        answer = client.post(server.url, content=body, headers=_headers(token, session))
        peak_kib = server.status("VmHWM")
    assert answer.status_code == 200 and answer.json()["result"]["isError"] is False
    rise = (peak_kib - before_kib) * 1024
    assert rise < 2.5 * len(body), (len(body), rise)
