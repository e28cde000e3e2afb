"""Bearer tokens against a JWKS URL on the real server, the identity provider a fake one on a
real port (``http_server.jwks_provider``): the attacks of issue 39 on authentication, rerun.

- a key the provider withdraws stops verifying at the next refresh, for new tokens and for
  tokens the server had already accepted (``PyJWKClient(cache_keys=True)`` kept it until the
  server restarted);
- a token whose ``exp`` is a numeric string is refused, every time (it was accepted, then
  answered 500 on its second use);
- while the provider hangs, tokens with made-up ``kid`` values cost one fetch, not one each,
  and an inline call of a principal with a known key is not held up (a 5 MiB call took 41 s
  while fetches filled the threads that open documents).
"""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pdfs
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from http_server import AUDIENCE, ISSUER, JwksProvider, Keys, RunningServer, http_server, jwk, jwks_provider
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio

REFRESH_S = 1.0
COOLDOWN_S = 1.0
TIMEOUT_S = 60.0
STRANGERS = 40


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("jwks-root")
    pdfs.write(folder / "report.pdf", pdfs.text_pdf(["Signed and sealed."]))
    return folder


@pytest.fixture
def provider(keys: Keys) -> Iterator[JwksProvider]:
    with jwks_provider([jwk(keys.rsa, "rsa-1"), jwk(keys.ec, "ec-1")]) as made:
        yield made


@pytest.fixture
def refresh_s() -> float:
    return REFRESH_S


@pytest.fixture
def server(root: Path, provider: JwksProvider, tmp_path: Path, refresh_s: float) -> Iterator[RunningServer]:
    with http_server(
        root,
        tmp_path / "server.log",
        "--auth-jwks",
        provider.url,
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        AUDIENCE,
        "--auth-jwks-refresh",
        str(refresh_s),
        "--auth-jwks-cooldown",
        str(COOLDOWN_S),
    ) as running:
        yield running


async def call(server: RunningServer, token: str, arguments: dict[str, Any] | None = None) -> str:
    """One ``pdf_info`` (of report.pdf, or ``arguments``) through the SDK client; its text."""
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_S) as http:
        async with Client(
            streamable_http_client(server.url, http_client=http), read_timeout_seconds=60
        ) as client:
            result = await client.call_tool("pdf_info", arguments or {"path": "report.pdf"})
    assert not result.is_error, result
    return str(result.content[0].text)  # type: ignore[union-attr]


def refusal(server: RunningServer, token: str) -> tuple[int, str]:
    """The status and ``WWW-Authenticate`` of an ``initialize`` with ``token``."""
    hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    answer = httpx2.post(
        server.url,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        headers={
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token}",
        },
        timeout=TIMEOUT_S,
    )
    return answer.status_code, answer.headers.get("www-authenticate", "")


def _signed_by(keys: Keys, key: rsa.RSAPrivateKey, kid: str, **claims: Any) -> str:
    import jwt

    body = jwt.decode(keys.token(), options={"verify_signature": False}) | claims
    return jwt.encode(body, key, algorithm="RS256", headers={"kid": kid})


async def test_a_withdrawn_key_is_refused_after_the_refresh(
    server: RunningServer, provider: JwksProvider, keys: Keys
) -> None:
    accepted = keys.token()
    assert "1 page(s)" in await call(server, accepted)
    replacement = rsa.generate_private_key(65537, 2048)
    provider.keys = [jwk(replacement, "rsa-2"), jwk(keys.ec, "ec-1")]  # rsa-1 withdrawn
    fetched = provider.requests
    await anyio.sleep(REFRESH_S * 1.2)  # the set the server holds is now due for a refresh
    status, header = refusal(server, keys.token())
    assert status == 401
    assert 'error_description="token is signed by an unknown key"' in header
    assert provider.requests == fetched + 1
    status, header = refusal(server, accepted)  # accepted before: refused now as well
    assert status == 401 and 'error_description="token is signed by an unknown key"' in header
    assert "1 page(s)" in await call(server, _signed_by(keys, replacement, "rsa-2"))


async def test_a_numeric_string_exp_is_refused_each_time(server: RunningServer, keys: Keys) -> None:
    forged = _signed_by(keys, keys.rsa, "rsa-1", exp=str(int(time.time()) + 600))
    for _ in range(2):
        status, header = refusal(server, forged)
        assert status == 401 and 'error_description="token is malformed"' in header


@pytest.mark.parametrize("refresh_s", [300.0])  # no refresh due: only made-up kids fetch
async def test_a_hanging_provider_costs_one_fetch_and_holds_no_call(
    server: RunningServer, provider: JwksProvider, keys: Keys
) -> None:
    assert "1 page(s)" in await call(server, keys.token())  # the keys are fetched: rsa-1 known
    fetched = provider.requests
    await anyio.sleep(COOLDOWN_S * 1.2)  # past the cooldown: a new kid may fetch again
    provider.hold = threading.Event()
    statuses: list[int] = []

    async def stranger(n: int) -> None:
        token = _signed_by(keys, keys.stranger, f"made-up-{n}")
        statuses.append((await anyio.to_thread.run_sync(refusal, server, token))[0])

    document = pdfs.text_pdf(["Inline, while the provider hangs."])
    inline = {"data": base64.b64encode(document + b"\n%" + b"p" * (5 * 1024 * 1024)).decode()}
    async with anyio.create_task_group() as group:
        for n in range(STRANGERS):
            group.start_soon(stranger, n)
        with anyio.fail_after(TIMEOUT_S):
            while provider.waiting == 0:
                await anyio.sleep(0.05)
        assert "1 page(s)" in await call(server, keys.token(), inline)
        assert provider.waiting == 1  # the call finished while the one fetch still hangs
        provider.hold.set()
    assert statuses == [401] * STRANGERS
    assert provider.requests == fetched + 1
