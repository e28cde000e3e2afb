"""The real image in its HTTP mode: ``serve --transport streamable-http`` behind bearer-token
auth, under the production flags, driven by the real ``mcp`` client over a real port.

Runs when ``PDF_AIRLOCK_DOCKER=1`` and a Docker engine answers (as tests/container/test_container.py). The
project's private dockerd has no bridge network, so the container shares the host's network
(``--network host``) and binds a free port on all addresses, which the server allows only with
auth. It runs under seccomp/profile-http.json, the stdio profile plus what a listening server
needs (tests/protocol/test_http.py checks it is current).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import httpx2
import pdfs
import pytest
from conftest import PROJECT
from http_server import AUDIENCE, ISSUER, Keys, free_port
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = [
    pytest.mark.skipif(os.environ.get("PDF_AIRLOCK_DOCKER") != "1", reason="PDF_AIRLOCK_DOCKER=1 not set"),
    pytest.mark.anyio,
]

IMAGE = os.environ.get("PDF_AIRLOCK_IMAGE", "pdf-airlock")
# The stdio profile cannot accept a connection; the HTTP mode runs under seccomp/profile-http.json
# (scripts/seccomp_http_profile.py), or under Docker's own profile or none when asked.
_CHOSEN = os.environ.get("PDF_AIRLOCK_SECCOMP", "")
SECCOMP = _CHOSEN if _CHOSEN in ("default", "unconfined") else str(PROJECT / "seccomp" / "profile-http.json")
READY_TIMEOUT_S = 90.0


def _readable(folder: Path) -> Path:
    """pytest's folders are 0700: the image's unprivileged user must read this one."""
    for path in folder.iterdir():
        path.chmod(0o644)
    folder.chmod(0o755)
    return folder


async def test_http_mode_in_the_container(tmp_path: Path) -> None:
    keys = Keys()
    data = tmp_path / "data"
    config = tmp_path / "config"
    data.mkdir()
    config.mkdir()
    pdfs.write(data / "hello.pdf", pdfs.text_pdf(["Hello from the container."]))
    (config / "jwks.json").write_text(json.dumps(keys.jwks()))
    port = free_port()
    name = f"pdf-airlock-http-{port}"
    seccomp = [] if SECCOMP == "default" else ["--security-opt", f"seccomp={SECCOMP}"]
    command = [
        "docker", "run", "-d", "--rm", "--name", name, "--network", "host", "--read-only",
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges", *seccomp,
        "-v", f"{_readable(data)}:/data:ro", "-v", f"{_readable(config)}:/config:ro", IMAGE,
        "serve", "--transport", "streamable-http", "--host", "0.0.0.0", "--port", str(port),
        "--root", "/data", "--auth-jwks", "/config/jwks.json", "--auth-issuer", ISSUER,
        "--auth-audience", AUDIENCE,
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + READY_TIMEOUT_S
        while True:
            try:
                if httpx2.get(base + "/readyz", timeout=2).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, "the container's server did not become ready"
            time.sleep(0.5)
        assert httpx2.post(base + "/mcp", json={}).status_code == 401
        headers = {"Authorization": f"Bearer {keys.token()}"}
        async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
            transport = streamable_http_client(base + "/mcp", http_client=http)
            async with Client(transport, mode="legacy", read_timeout_seconds=60) as client:
                result = await client.call_tool("pdf_read", {"path": "hello.pdf"})
        assert not result.is_error
        assert "Hello from the container." in result.content[0].text  # type: ignore[union-attr]
    finally:
        subprocess.run(["docker", "stop", "-t", "10", name], capture_output=True, check=False, timeout=60)
