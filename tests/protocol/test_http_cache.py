"""The result cache on the shared HTTP service: one principal cannot learn from the cache that
another read a document. Real server, real tokens, the same document under one root for both.

By default (``--cache-scope principal``) entries are kept per principal: bob's read of the
document alice read is parsed afresh (a job runs, the audit says no hit, ``/metrics`` counts no
hit), and alice's own repeat is a hit. With ``--cache-scope shared`` bob's read is a hit: the
documented trade-off.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pdfs
import pytest
from http_server import AUDIENCE, ISSUER, Keys, RunningServer, http_server
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

pytestmark = pytest.mark.anyio

TIMEOUT_S = 60.0
HITS = 'pdf_airlock_cache_hits_total{tool="pdf_info"}'


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


@pytest.fixture(scope="module", params=["principal", "shared"])
def cache_scope(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def server(cache_scope: str, keys: Keys, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    folder = tmp_path_factory.mktemp(f"cache-{cache_scope}")
    root = folder / "root"
    root.mkdir()
    pdfs.write(root / "merger.pdf", pdfs.text_pdf(["The merger nobody must know about."]))
    jwks = folder / "jwks.json"
    jwks.write_text(json.dumps(keys.jwks()))
    policy = folder / "policy.toml"
    policy.write_text(f'[defaults]\nroots = ["{root}"]\n')  # both principals read the same root
    flags = ["--auth-jwks", str(jwks), "--auth-issuer", ISSUER, "--auth-audience", AUDIENCE]
    flags += ["--policy", str(policy), "--cache-scope", cache_scope]
    with http_server(root, folder / "server.log", *flags) as running:
        yield running


async def read(server: RunningServer, token: str) -> None:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_S) as http:
        async with Client(
            streamable_http_client(server.url, http_client=http), read_timeout_seconds=60
        ) as client:
            result = await client.call_tool("pdf_info", {"path": "merger.pdf"})
    assert not result.is_error, result


def cache_hits(server: RunningServer) -> float:
    for line in httpx2.get(server.base + "/metrics").text.splitlines():
        if line.startswith(HITS + " "):
            return float(line.rpartition(" ")[2])
    return 0.0


def calls_of(server: RunningServer, principal: str) -> list[dict[str, Any]]:
    return [
        e
        for e in server.log_events("tool_call")
        if e.get("principal") == principal and e.get("tool") == "pdf_info"
    ]


async def test_a_principal_cannot_tell_that_another_read_a_document(
    server: RunningServer, keys: Keys, cache_scope: str
) -> None:
    await read(server, keys.token("alice"))
    await read(server, keys.token("bob"))
    bob = calls_of(server, "bob")[-1]
    if cache_scope == "shared":  # the trade-off the setting documents: alice's entry answers bob
        assert bob.get("cache") == "hit" and "jobs" not in bob
        assert cache_hits(server) == 1
        return
    assert "cache" not in bob and bob["jobs"] == 1  # parsed afresh, as if nobody had read it
    assert cache_hits(server) == 0  # and /metrics, which needs no token, counts no hit
    await read(server, keys.token("alice"))
    alice = calls_of(server, "alice")
    assert [call.get("cache") for call in alice] == [None, "hit"]  # her own repeat is one
    assert cache_hits(server) == 1
