"""Test helpers of the HTTP transport: signing keys and their JWKS, tokens, and the real server
(``pdf-airlock serve --transport streamable-http``) on a free port of 127.0.0.1."""

from __future__ import annotations

import json
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

ISSUER = "https://issuer.test"
AUDIENCE = "https://pdf-airlock.test/mcp"
START_TIMEOUT_S = 60.0


@dataclass
class Keys:
    """An RSA and an EC signing key in the JWKS, and an RSA key that is not."""

    rsa: rsa.RSAPrivateKey = field(default_factory=lambda: rsa.generate_private_key(65537, 2048))
    ec: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    stranger: rsa.RSAPrivateKey = field(default_factory=lambda: rsa.generate_private_key(65537, 2048))

    def jwks(self) -> dict[str, Any]:
        rsa_jwk = json.loads(RSAAlgorithm.to_jwk(self.rsa.public_key()))
        ec_jwk = json.loads(ECAlgorithm.to_jwk(self.ec.public_key()))
        return {
            "keys": [
                rsa_jwk | {"kid": "rsa-1", "alg": "RS256", "use": "sig"},
                ec_jwk | {"kid": "ec-1", "alg": "ES256", "use": "sig"},
            ]
        }

    def token(
        self,
        subject: str = "alice",
        scope: str = "pdf:read",
        *,
        groups: list[str] | None = None,
        issuer: str = ISSUER,
        audience: str = AUDIENCE,
        lifetime_s: int = 600,
        not_before_s: int = 0,
        key: str = "rsa",
    ) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {
            "iss": issuer,
            "aud": audience,
            "sub": subject,
            "iat": now,
            "nbf": now + not_before_s,
            "exp": now + lifetime_s,
            "scope": scope,
            "jti": uuid.uuid4().hex,
        }
        if groups is not None:
            claims["groups"] = groups
        if key == "ec":
            return jwt.encode(claims, self.ec, algorithm="ES256", headers={"kid": "ec-1"})
        signer = self.stranger if key == "stranger" else self.rsa
        return jwt.encode(claims, signer, algorithm="RS256", headers={"kid": "rsa-1"})


def jwk(key: Any, kid: str) -> dict[str, Any]:
    """The public JWK of an RSA or EC private key, named ``kid``."""
    if isinstance(key, rsa.RSAPrivateKey):
        return json.loads(RSAAlgorithm.to_jwk(key.public_key())) | {"kid": kid, "alg": "RS256", "use": "sig"}
    return json.loads(ECAlgorithm.to_jwk(key.public_key())) | {"kid": kid, "alg": "ES256", "use": "sig"}


@dataclass
class JwksProvider:
    """A fake identity provider's JWKS endpoint on a real port of 127.0.0.1 (``url``): it serves
    ``keys`` (or ``body`` as is) with ``status``, and a request waits for ``hold`` when set (a
    hanging provider); ``requests`` counts them, ``waiting`` those held right now."""

    keys: list[dict[str, Any]]
    status: int = 200
    body: bytes | None = None
    location: str | None = None  # a redirect
    hold: threading.Event | None = None
    requests: int = 0
    waiting: int = 0
    url: str = ""
    headers: list[dict[str, str]] = field(default_factory=list)  # each request's, names in lower case
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with provider._lock:
                    provider.requests += 1
                    provider.waiting += 1
                    provider.headers.append({name.lower(): value for name, value in self.headers.items()})
                try:
                    if provider.hold is not None:
                        provider.hold.wait(60)
                finally:
                    with provider._lock:
                        provider.waiting -= 1
                body = provider.body
                if body is None:
                    body = json.dumps({"keys": provider.keys}).encode()
                self.send_response(provider.status)
                if provider.location is not None:
                    self.send_header("Location", provider.location)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@contextmanager
def jwks_provider(keys: list[dict[str, Any]]) -> Iterator[JwksProvider]:
    made = JwksProvider(keys=keys)
    server = ThreadingHTTPServer(("127.0.0.1", 0), made.handler())
    made.url = f"http://127.0.0.1:{server.server_address[1]}/jwks.json"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield made
    finally:
        if made.hold is not None:
            made.hold.set()
        server.shutdown()
        server.server_close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class RunningServer:
    url: str  # the MCP endpoint
    base: str
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def status(self, field: str) -> int:
        """A ``/proc/<pid>/status`` figure of the server, in KiB (``VmRSS``, ``VmHWM``...)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
        raise KeyError(field)

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.process.pid}/fd"))

    def log_events(self, event: str) -> list[dict[str, Any]]:
        found = []
        for line in self.log.read_text(errors="replace").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if record.get("event") == event:
                found.append(record)
        return found


@contextmanager
def http_server(
    root: Path,
    log: Path,
    *extra: str,
    ready: bool = True,
    env: dict[str, str] | None = None,
    nofile: int | None = None,
) -> Iterator[RunningServer]:
    """The real server on a free loopback port, until the block ends (then SIGTERM); ``env`` is
    added to this process's environment; ``nofile`` is its open-file limit (soft and hard)."""

    def limit_files() -> None:
        if nofile is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))

    port = free_port()
    command = [
        sys.executable,
        "-m",
        "pdf_airlock.server",
        "serve",
        "--transport",
        "streamable-http",
        "--port",
        str(port),
        "--root",
        str(root),
        "--timeout",
        "10",
        "--memory-mb",
        "256",
        *extra,
    ]
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            env={**os.environ, **(env or {})},
            preexec_fn=limit_files if nofile is not None else None,  # noqa: PLW1509 (no threads run it)
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        path = "/readyz" if ready else "/healthz"
        while True:
            assert process.poll() is None, log.read_text()
            try:
                if httpx2.get(base + path, timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not become ready"
            time.sleep(0.1)
        yield RunningServer(base + "/mcp", base, process, log)
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
