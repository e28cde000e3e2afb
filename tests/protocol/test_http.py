"""The Streamable HTTP transport end to end: the real server on a real port, the real ``mcp``
client (``streamable_http_client``) with a bearer token, real sandboxed job children.

Each refusal is checked by its exact HTTP status and ``WWW-Authenticate`` header as the
client's own HTTP requests saw them; each tool error by its typed code.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pdfs
import pytest
from conftest import PROJECT
from http_server import AUDIENCE, ISSUER, Keys, RunningServer, http_server
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.hostile.generate import active_content

pytestmark = pytest.mark.anyio

ALLOWED_ORIGIN = "https://app.example"
Seen = list[tuple[int, str | None]]
# (JSON-RPC method of a request POST, the answer's content type, the client's local port)
Answers = list[tuple[str, str, int]]


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("http")
    made = {name: base / name for name in ("alice", "bob", "server")}
    for path in made.values():
        path.mkdir()
    pdfs.write(made["alice"] / "report.pdf", pdfs.text_pdf(["Alice's own report."]))
    pdfs.write(made["bob"] / "report.pdf", pdfs.text_pdf(["Bob's private numbers."]))
    pdfs.write(made["alice"] / "risky.pdf", active_content())
    pdfs.write(made["alice"] / "attached.pdf", pdfs.structured_pdf())
    pdfs.write(
        made["alice"] / "long.pdf",
        pdfs.text_pdf([f"Page {n}\n" + "\n".join(["words " * 10] * 5) for n in range(1, 13)]),
    )
    pdfs.write(made["alice"] / "slow.pdf", pdfs.scattered_glyphs_pdf(700))
    return made


@pytest.fixture(scope="module")
def server(keys: Keys, roots: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> RunningServer:
    folder = tmp_path_factory.mktemp("http-config")
    jwks = folder / "jwks.json"
    jwks.write_text(json.dumps(keys.jwks()))
    policy = folder / "policy.toml"
    policy.write_text(
        f"""
[defaults]
roots = []

[[principal]]
subject = "alice"
roots = ["{roots["alice"]}"]

[[principal]]
group = "bobs"
roots = ["{roots["bob"]}"]

[[principal]]
subject = "limited"
roots = ["{roots["alice"]}"]
rate_per_minute = 2

[approval]
attachments = true
high_risk = true
without_elicitation = "deny"
"""
    )
    with http_server(
        roots["server"],
        folder / "server.log",
        "--auth-jwks",
        str(jwks),
        "--auth-issuer",
        ISSUER,
        "--auth-audience",
        AUDIENCE,
        "--policy",
        str(policy),
        "--allow-origin",
        ALLOWED_ORIGIN,
        "--max-body-mb",
        "1",
    ) as running:
        yield running


@asynccontextmanager
async def connect(
    url: str,
    token: str | None,
    seen: Seen | None = None,
    *,
    origin: str | None = None,
    elicit: Any = None,
    mode: str = "legacy",
    answers: Answers | None = None,
) -> AsyncIterator[Client]:
    """The SDK client over Streamable HTTP; ``seen`` collects (status, WWW-Authenticate),
    ``answers`` how each request POST was answered and on which connection."""
    headers = {}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    if origin is not None:
        headers["Origin"] = origin
    record = seen if seen is not None else []

    async def on_response(response: httpx2.Response) -> None:
        record.append((response.status_code, response.headers.get("www-authenticate")))
        if answers is not None and response.request.method == "POST":
            message = json.loads(response.request.content)
            if "id" in message and "method" in message:
                kind = response.headers.get("content-type", "").partition(";")[0]
                port = response.extensions["network_stream"].get_extra_info("client_addr")[1]
                answers.append((message["method"], kind, port))

    http = httpx2.AsyncClient(
        headers=headers, event_hooks={"response": [on_response]}, timeout=httpx2.Timeout(30, read=60)
    )
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(
            transport, mode=mode, elicitation_callback=elicit, read_timeout_seconds=60
        ) as client:
            yield client


def _holds_mcp_error(exc: BaseException) -> bool:
    if isinstance(exc, MCPError):
        return True
    return isinstance(exc, BaseExceptionGroup) and any(_holds_mcp_error(e) for e in exc.exceptions)


async def refused_at_connect(url: str, token: str | None, **kwargs: Any) -> Seen:
    """Statuses seen by a client whose session could not open (its initialize was refused)."""
    seen: Seen = []
    with pytest.raises(BaseException) as raised:  # the SDK raises MCPError, maybe in a group
        async with connect(url, token, seen, **kwargs):
            pass
    assert _holds_mcp_error(raised.value), raised.value
    return seen


def error_code(result: types.CallToolResult) -> str:
    assert result.is_error, result
    assert result.structured_content is not None
    return str(result.structured_content["error"]["code"])


def metadata_url(server: RunningServer) -> str:
    return f'resource_metadata="{server.base}/.well-known/oauth-protected-resource/mcp"'


# -- refused before MCP ----------------------------------------------------------------------


async def test_no_token_is_401_naming_the_metadata(server: RunningServer) -> None:
    seen = await refused_at_connect(server.url, None)
    status, header = seen[0]
    assert status == 401
    assert header is not None and header.startswith("Bearer ")
    assert metadata_url(server) in header
    assert "error=" not in header  # RFC 6750 3.1: no error code when no token was sent


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"lifetime_s": -120}, "token expired"),
        ({"not_before_s": 600}, "token not yet valid"),
        ({"audience": "https://other.test/mcp"}, "token is for another audience"),
        ({"issuer": "https://evil-issuer.test"}, "token is from another issuer"),
        ({"key": "stranger"}, "token signature does not verify"),
    ],
    ids=["expired", "not-yet-valid", "wrong-audience", "wrong-issuer", "bad-signature"],
)
async def test_invalid_tokens_are_401(
    server: RunningServer, keys: Keys, claims: dict[str, Any], reason: str
) -> None:
    token = keys.token(**claims)
    seen = await refused_at_connect(server.url, token)
    status, header = seen[0]
    assert status == 401
    assert header is not None
    assert 'error="invalid_token"' in header
    assert f'error_description="{reason}"' in header
    assert metadata_url(server) in header
    assert token not in server.log.read_text()  # tokens are never logged


async def test_garbage_and_alg_none_tokens_are_401(server: RunningServer, keys: Keys) -> None:
    unsigned = keys.token().rsplit(".", 1)[0]
    header = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
    alg_none = header + "." + unsigned.split(".", 1)[1] + "."
    for token in ("not-a-jwt", alg_none):
        seen = await refused_at_connect(server.url, token)
        assert seen[0][0] == 401
        assert 'error="invalid_token"' in str(seen[0][1])


async def test_token_without_the_base_scope_is_403(server: RunningServer, keys: Keys) -> None:
    seen = await refused_at_connect(server.url, keys.token(scope="profile email"))
    status, header = seen[0]
    assert status == 403
    assert header is not None
    assert 'error="insufficient_scope"' in header and 'scope="pdf:read"' in header


async def test_attachments_need_their_own_scope(server: RunningServer, keys: Keys) -> None:
    seen: Seen = []
    async with connect(server.url, keys.token(scope="pdf:read"), seen) as client:
        with pytest.raises(MCPError):
            await client.call_tool("pdf_attachments", {"path": "attached.pdf"})
        info = await client.call_tool("pdf_info", {"path": "attached.pdf"})  # the session goes on
        assert not info.is_error
    refusals = [(status, header) for status, header in seen if status == 403]
    assert len(refusals) == 1
    header = refusals[0][1]
    assert header is not None
    assert 'error="insufficient_scope"' in header and 'scope="pdf:read pdf:attachments"' in header


async def test_foreign_origin_is_403_and_a_listed_one_passes(server: RunningServer, keys: Keys) -> None:
    seen = await refused_at_connect(server.url, keys.token(), origin="https://evil.example")
    assert seen[0][0] == 403
    async with connect(server.url, keys.token(), origin=ALLOWED_ORIGIN) as client:
        result = await client.call_tool("pdf_read", {"path": "report.pdf"})
        assert "Alice's own report." in result.content[0].text  # type: ignore[union-attr]


async def test_oversized_body_is_413(server: RunningServer, keys: Keys) -> None:
    seen: Seen = []
    data = base64.b64encode(os.urandom(1024 * 1024)).decode()  # 1.33 MiB of base64 > --max-body-mb 1
    async with connect(server.url, keys.token(), seen) as client:
        with pytest.raises(MCPError):
            await client.call_tool("pdf_read", {"data": data})
        ok = await client.call_tool("pdf_read", {"path": "report.pdf"})
        assert not ok.is_error
    assert 413 in [status for status, _ in seen]


def test_protected_resource_metadata(server: RunningServer) -> None:
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        response = httpx2.get(server.base + path)
        assert response.status_code == 200
        document = response.json()
        assert document["resource"] == server.url
        assert document["authorization_servers"] == [ISSUER]
        assert document["scopes_supported"] == ["pdf:read", "pdf:attachments"]


# -- calls -----------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["rsa", "ec"])
async def test_valid_token_calls_tools(server: RunningServer, keys: Keys, key: str) -> None:
    async with connect(server.url, keys.token(key=key)) as client:
        info = await client.call_tool("pdf_info", {"path": "report.pdf"})
        assert not info.is_error and info.structured_content is not None
        assert info.structured_content["page_count"] == 1
        read = await client.call_tool("pdf_read", {"path": "report.pdf"})
        assert not read.is_error
        assert "Alice's own report." in read.content[0].text  # type: ignore[union-attr]
        missing = await client.call_tool("pdf_read", {"path": "nothing-here.pdf"})
        assert error_code(missing) == "not_found"  # the same typed errors as stdio


async def test_two_principals_see_only_their_own_roots(
    server: RunningServer, keys: Keys, roots: dict[str, Path]
) -> None:
    alice_token = keys.token("alice")
    bob_token = keys.token("bob", groups=["staff", "bobs"])
    async with connect(server.url, alice_token) as alice, connect(server.url, bob_token) as bob:
        mine = await alice.call_tool("pdf_read", {"path": "report.pdf"})
        assert "Alice's own report." in mine.content[0].text  # type: ignore[union-attr]
        theirs = await bob.call_tool("pdf_read", {"path": "report.pdf"})
        assert "Bob's private numbers." in theirs.content[0].text  # type: ignore[union-attr]
        across = await alice.call_tool("pdf_read", {"path": str(roots["bob"] / "report.pdf")})
        assert error_code(across) == "path_denied"
        back = await bob.call_tool("pdf_read", {"path": str(roots["alice"] / "report.pdf")})
        assert error_code(back) == "path_denied"
    async with connect(server.url, keys.token("mallory")) as stranger:  # no rule: [defaults], no roots
        result = await stranger.call_tool("pdf_read", {"path": "report.pdf"})
        assert error_code(result) in {"path_denied", "not_found"}
    calls = server.log_events("tool_call")
    principals = {event.get("principal") for event in calls}
    assert {"alice", "bob", "mallory"} <= principals
    assert all("principal" in event for event in calls)


async def test_the_2026_era_gets_the_same_principal_and_roots(server: RunningServer, keys: Keys) -> None:
    seen: Seen = []
    async with connect(server.url, keys.token("bob", groups=["bobs"]), seen, mode="auto") as client:
        assert client.session.protocol_version == "2026-07-28"
        result = await client.call_tool("pdf_read", {"path": "report.pdf", "pages": "1"})
        assert "Bob's private numbers." in result.content[0].text  # type: ignore[union-attr]
    calls = [e for e in server.log_events("tool_call") if e.get("tool") == "pdf_read"]
    assert calls[-1]["principal"] == "bob"


async def test_rate_limit_is_overloaded_with_retry_after(server: RunningServer, keys: Keys) -> None:
    async with connect(server.url, keys.token("limited")) as client:  # initialize: the first of 2
        first = await client.call_tool("pdf_info", {"path": "report.pdf"})
        assert not first.is_error
        second = await client.call_tool("pdf_info", {"path": "report.pdf"})
        assert error_code(second) == "overloaded"
        assert second.structured_content is not None
        error = second.structured_content["error"]
        assert error["retryable"] is True
        assert error["details"]["limit"] == "rate"
        assert 0 < error["details"]["retry_after_s"] <= 60


async def test_progress_is_streamed(server: RunningServer, keys: Keys) -> None:
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    answers: Answers = []
    async with connect(server.url, keys.token(), answers=answers) as client:
        result = await client.call_tool("pdf_read", {"path": "long.pdf"}, progress_callback=on_progress)
        assert not result.is_error
    assert seen and seen[-1] == (12, 12)
    calls = [kind for method, kind, _ in answers if method == "tools/call"]
    assert calls == ["text/event-stream"]  # progress needs the stream


async def test_a_call_answered_at_once_is_one_json_body_on_a_kept_connection(
    server: RunningServer, keys: Keys
) -> None:
    answers: Answers = []
    async with connect(server.url, keys.token(), answers=answers) as client:
        for _ in range(3):
            read = await client.call_tool("pdf_read", {"path": "report.pdf"})
            assert "Alice's own report." in read.content[0].text  # type: ignore[union-attr]
        missing = await client.call_tool("pdf_read", {"path": "nothing-here.pdf"})
        assert error_code(missing) == "not_found"
    calls = [answer for answer in answers if answer[0] == "tools/call"]
    assert [kind for _, kind, _ in calls] == ["application/json"] * 4
    assert len({port for _, _, port in calls}) == 1  # no new connection per call


async def test_cancellation_kills_the_job(server: RunningServer, keys: Keys) -> None:
    async with connect(server.url, keys.token()) as client:
        with anyio.move_on_after(0.5) as scope:
            await client.call_tool("pdf_read", {"path": "slow.pdf", "engine": "layout"})
        assert scope.cancelled_caught
        await anyio.sleep(0.5)
        still = await client.call_tool("pdf_info", {"path": "report.pdf"})  # the session goes on
        assert not still.is_error
    cancelled = [e for e in server.log_events("tool_call") if e.get("outcome") == "cancelled"]
    assert cancelled, "the cancelled call was not audited as cancelled"
    job_ids = set(cancelled[-1]["job_ids"])
    reads = [e for e in server.log_events("job_exit") if e.get("job") in job_ids and e["kind"] == "pdf_read"]
    assert reads and all(e.get("abandoned") and e["exit"] == "SIGKILL" for e in reads)


# -- human approval (elicitation) -----------------------------------------------------------


def answering(approve: bool | None, asked: list[str]) -> Any:
    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        if approve is None:
            return types.ElicitResult(action="decline")
        return types.ElicitResult(action="accept", content={"approve": approve})

    return elicit


async def test_high_risk_document_asks_and_accepted_reads(server: RunningServer, keys: Keys) -> None:
    asked: list[str] = []
    answers: Answers = []
    async with connect(server.url, keys.token(), elicit=answering(True, asked), answers=answers) as client:
        result = await client.call_tool("pdf_read", {"path": "risky.pdf"})
        assert not result.is_error, result
        assert "Active content document" in result.content[0].text  # type: ignore[union-attr]
        again = await client.call_tool("pdf_search", {"path": "risky.pdf", "query": "Active"})
        assert not again.is_error
    assert len(asked) == 1  # approved once per principal and document
    calls = [kind for method, kind, _ in answers if method == "tools/call"]
    assert calls == ["text/event-stream", "application/json"]  # the question needs the stream
    assert "high risk" in asked[0]
    safe: list[str] = []
    async with connect(server.url, keys.token(), elicit=answering(True, safe)) as client:
        assert not (await client.call_tool("pdf_read", {"path": "report.pdf"})).is_error
    assert safe == []  # a low-risk document asks nothing


@pytest.mark.parametrize("answer", [False, None], ids=["accept-without-approve", "decline"])
async def test_high_risk_document_declined(server: RunningServer, keys: Keys, answer: bool | None) -> None:
    asked: list[str] = []
    async with connect(
        server.url, keys.token("bob", groups=["bobs"]), elicit=answering(answer, asked)
    ) as client:
        pdfs_root_risky = {"data": base64.b64encode(active_content()).decode()}
        result = await client.call_tool("pdf_read", pdfs_root_risky)
        assert error_code(result) == "path_denied"
        assert result.structured_content is not None
        assert result.structured_content["error"]["details"]["approval"] == "declined"
    assert len(asked) == 1


async def test_high_risk_without_elicitation_is_denied(server: RunningServer, keys: Keys) -> None:
    async with connect(server.url, keys.token()) as client:  # declares no elicitation capability
        result = await client.call_tool("pdf_markdown", {"path": "risky.pdf"})
        assert error_code(result) == "path_denied"
        assert result.structured_content is not None
        assert result.structured_content["error"]["details"]["approval"] == "unavailable"
        triage = await client.call_tool("pdf_security", {"path": "risky.pdf"})  # triage stays open
        assert not triage.is_error and triage.structured_content is not None
        assert triage.structured_content["risk"] == "high"


async def test_attachment_extraction_asks(server: RunningServer, keys: Keys) -> None:
    token = keys.token(scope="pdf:read pdf:attachments")
    asked: list[str] = []
    async with connect(server.url, token, elicit=answering(True, asked)) as client:
        listed = await client.call_tool("pdf_attachments", {"path": "attached.pdf"})
        assert not listed.is_error and asked == []  # listing is not extracting
        got = await client.call_tool("pdf_attachments", {"path": "attached.pdf", "extract": "notes.txt"})
        assert not got.is_error and got.structured_content is not None
        extracted = got.structured_content["extracted"]
        assert base64.b64decode(extracted["data_base64"]) == b"attached notes\n"
    assert len(asked) == 1 and "notes.txt" in asked[0]
    async with connect(server.url, token, elicit=answering(None, asked)) as client:
        refused = await client.call_tool("pdf_attachments", {"path": "attached.pdf", "extract": "notes.txt"})
        assert error_code(refused) == "path_denied"
    decisions = [
        e.get("approvals") for e in server.log_events("tool_call") if e.get("tool") == "pdf_attachments"
    ]
    assert ["attachment:accepted"] in decisions and ["attachment:declined"] in decisions


def risky_data(tag: str) -> dict[str, str]:
    """A high-risk document of bytes of its own (an approval is remembered by the document's hash)."""
    data = active_content() + f"\n% {tag}\n".encode()
    return {"data": base64.b64encode(data).decode()}


@pytest.mark.parametrize(
    ("answer", "approval"),
    [("accept", None), ("decline", "declined"), ("cancel", "cancelled"), (None, "unavailable")],
)
async def test_the_2026_era_is_asked_by_a_round_trip(
    server: RunningServer, keys: Keys, answer: str | None, approval: str | None
) -> None:
    asked: list[str] = []

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        content = {"approve": True} if answer == "accept" else None
        return types.ElicitResult(action=answer, content=content)  # type: ignore[arg-type]

    answers: Answers = []
    token = keys.token("bob", groups=["bobs"])
    document = risky_data(f"round trip {answer}")
    async with connect(
        server.url, token, elicit=elicit if answer else None, mode="auto", answers=answers
    ) as client:
        assert client.session.protocol_version == "2026-07-28"
        result = await client.call_tool("pdf_read", document)
    if approval is None:
        assert not result.is_error, result
        assert "Active content document" in result.content[0].text  # type: ignore[union-attr]
    else:
        assert error_code(result) == "path_denied"
        assert result.structured_content is not None
        assert result.structured_content["error"]["details"]["approval"] == approval
    assert len(asked) == (1 if answer else 0)
    rounds = [event for event in server.log_events("tool_call") if event.get("principal") == "bob"]
    decided = [event["approvals"] for event in rounds if event.get("approvals")]
    expected = (
        ["high_risk:unavailable"]
        if answer is None
        else ["high_risk:asked", f"high_risk:{approval or 'accepted'}"]
    )
    assert [d[0] for d in decided[-len(expected) :]] == expected


async def test_the_2026_era_asks_before_extracting(server: RunningServer, keys: Keys) -> None:
    asked: list[str] = []
    token = keys.token("alice", scope="pdf:read pdf:attachments")
    async with connect(server.url, token, elicit=answering(True, asked), mode="auto") as client:
        got = await client.call_tool("pdf_attachments", {"path": "attached.pdf", "extract": "notes.txt"})
        assert not got.is_error and got.structured_content is not None
        assert base64.b64decode(got.structured_content["extracted"]["data_base64"]) == b"attached notes\n"
    assert len(asked) == 1 and "notes.txt" in asked[0]


async def test_an_approval_state_is_refused_to_another_principal(server: RunningServer, keys: Keys) -> None:
    key = "pdf-airlock/approve/high_risk"
    document = risky_data("another principal")
    able = answering(True, [])  # declares elicitation; these rounds are driven by hand
    async with connect(server.url, keys.token("alice"), elicit=able, mode="auto") as alice:
        first = await alice.session.call_tool("pdf_read", document, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult) and first.request_state is not None
    approve = {key: types.ElicitResult(action="accept", content={"approve": True})}
    async with connect(server.url, keys.token("bob", groups=["bobs"]), elicit=able, mode="auto") as bob:
        replayed = await bob.session.call_tool(
            "pdf_read",
            document,
            input_responses=approve,
            request_state=first.request_state,
            allow_input_required=True,
        )
    assert isinstance(replayed, types.CallToolResult)
    assert error_code(replayed) == "path_denied"
    assert replayed.structured_content is not None
    assert replayed.structured_content["error"]["details"]["approval"] == "invalid_state"
    refused = [e for e in server.log_events("tool_call") if e.get("approval_state_error") == "principal"]
    assert refused and refused[-1]["principal"] == "bob"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_progress_reaches_a_client_of_each_era(
    server: RunningServer, keys: Keys, roots: dict[str, Path], mode: str
) -> None:
    fresh = roots["alice"] / f"progress-{mode}.pdf"  # bytes no call has read: no cached answer
    pdfs.write(fresh, pdfs.text_pdf([f"{mode} page {n} " + "words " * 50 for n in range(1, 13)]))
    seen: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total))

    async with connect(server.url, keys.token(), mode=mode) as client:
        assert client.session.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
        result = await client.call_tool("pdf_read", {"path": fresh.name}, progress_callback=on_progress)
        assert not result.is_error
    assert seen and seen[-1] == (12, 12)


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_delivered_answer_is_readable_only_by_its_principal(
    server: RunningServer, keys: Keys, mode: str
) -> None:
    async with connect(server.url, keys.token("alice"), mode=mode) as alice:
        delivered = await alice.call_tool("pdf_read", {"path": "long.pdf", "deliver": "resource"})
        assert not delivered.is_error and delivered.structured_content is not None
        uri = delivered.structured_content["resource"]["uri"]
        mine = await alice.read_resource(uri)
        assert "Page 1" in mine.contents[0].text  # type: ignore[union-attr]
    async with connect(server.url, keys.token("bob", groups=["bobs"]), mode=mode) as bob:
        with pytest.raises(MCPError) as refused:
            await bob.read_resource(uri)
        assert refused.value.error.code == types.INVALID_PARAMS
        assert refused.value.error.message == "Resource not found"  # as for a URI never issued
        assert (await bob.list_resources()).resources == []
    async with connect(server.url, keys.token("alice"), mode=mode) as again:  # another session, alice
        assert uri in [str(resource.uri) for resource in (await again.list_resources()).resources]


# -- probes and metrics ----------------------------------------------------------------------


async def test_health_ready_and_metrics(server: RunningServer, keys: Keys) -> None:
    assert httpx2.get(server.base + "/healthz").json() == {"status": "ok"}
    ready = httpx2.get(server.base + "/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    async with connect(server.url, keys.token()) as client:
        await client.call_tool("pdf_info", {"path": "report.pdf"})
        await client.call_tool("pdf_info", {"path": "report.pdf"})  # a cache hit
    await refused_at_connect(server.url, None)
    text = httpx2.get(server.base + "/metrics").text
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    assert samples['pdf_airlock_calls_total{outcome="ok",tool="pdf_info"}'] >= 2
    assert samples['pdf_airlock_cache_hits_total{tool="pdf_info"}'] >= 1
    assert samples['pdf_airlock_call_duration_seconds_count{tool="pdf_info"}'] >= 2
    assert samples['pdf_airlock_http_refusals_total{status="401"}'] >= 1
    assert samples["pdf_airlock_workers"] >= 1
    assert "pdf_airlock_workers_busy" in samples and "pdf_airlock_idle_spares" in samples


# -- start-up checks -------------------------------------------------------------------------


def _serve(*flags: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "pdf_airlock.server", "serve", "--transport", "streamable-http", *flags]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, cwd=PROJECT, check=False)


def test_non_loopback_bind_without_auth_is_refused() -> None:
    done = _serve("--host", "0.0.0.0", "--port", "1")
    assert done.returncode == 2
    assert "refusing to listen on 0.0.0.0 without authorization" in done.stderr


def test_bad_policy_and_jwks_are_refused(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('[[principal]]\nsubject = "a"\nroots = ["relative/dir"]\n')
    done = _serve("--policy", str(policy))
    assert done.returncode == 2 and "not an absolute directory" in done.stderr
    jwks = tmp_path / "jwks.json"
    jwks.write_text("{not json")
    done = _serve("--auth-jwks", str(jwks), "--auth-issuer", ISSUER)
    assert done.returncode == 2 and "cannot load the JWKS file" in done.stderr


def test_an_http_jwks_url_off_loopback_is_refused() -> None:
    """A key set fetched in the clear could be swapped on the way."""
    done = _serve("--auth-jwks", "http://login.example.com/jwks.json", "--auth-issuer", ISSUER)
    assert done.returncode == 2
    assert "--auth-jwks: an http:// URL is refused unless it names a loopback address" in done.stderr


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        (("--max-head-kb", "0"), "--max-head-kb must be from 1 to 1024"),
        (("--head-timeout", "0"), "--head-timeout must be from 0.1 to 300"),
        (("--keepalive-timeout", "4000"), "--keepalive-timeout must be from 0.1 to 3600"),
        (("--max-connections", "0"), "--max-connections must be from 1 to 1e+06"),
        (("--fd-reserve", "8"), "--fd-reserve must be from 16 to 65536"),
        (("--max-body-mb", "0"), "--max-body-mb must be from 0.01 to 4096"),
        (("--body-timeout", "0"), "--body-timeout must be from 1 to 3600"),
        (("--sessions-per-principal", "0"), "--sessions-per-principal must be from 1 to 100000"),
        (("--bodies-per-principal", "0"), "--bodies-per-principal must be from 1 to 1000"),
        (("--auth-jwks-refresh", "0.5"), "--auth-jwks-refresh must be from 1 to 86400"),
        (("--auth-jwks-cooldown", "0"), "--auth-jwks-cooldown must be from 1 to 3600"),
        (("--cache-scope", "everyone"), "argument --cache-scope: invalid choice: 'everyone'"),
    ],
    ids=lambda value: value[0] if isinstance(value, tuple) else None,
)
def test_http_limits_out_of_range_are_usage_errors(flags: tuple[str, ...], problem: str) -> None:
    done = _serve(*flags)
    assert done.returncode == 2
    assert problem in done.stderr


# -- a JWKS URL, approvals allowed without elicitation, a concurrency limit ------------------


@pytest.fixture(scope="module")
def url_server(keys: Keys, roots: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> RunningServer:
    """A second server: keys from a JWKS URL, ``without_elicitation = "allow"``, concurrency 1."""
    import http.server
    import threading

    body = json.dumps(keys.jwks()).encode()

    class Jwks(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    jwks_server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Jwks)
    threading.Thread(target=jwks_server.serve_forever, daemon=True).start()
    folder = tmp_path_factory.mktemp("http-url-config")
    policy = folder / "policy.toml"
    policy.write_text(
        f'[defaults]\nroots = ["{roots["alice"]}"]\nconcurrency = 1\n\n'
        '[approval]\nwithout_elicitation = "allow"\n'
    )
    try:
        with http_server(
            roots["server"],
            folder / "server.log",
            "--auth-jwks",
            f"http://127.0.0.1:{jwks_server.server_address[1]}/jwks.json",
            "--auth-issuer",
            ISSUER,
            "--auth-audience",
            AUDIENCE,
            "--policy",
            str(policy),
        ) as running:
            yield running
    finally:
        jwks_server.shutdown()


async def test_jwks_url_and_allow_without_elicitation(url_server: RunningServer, keys: Keys) -> None:
    seen = await refused_at_connect(url_server.url, keys.token(key="stranger"))
    assert seen[0][0] == 401
    async with connect(url_server.url, keys.token(key="ec")) as client:
        result = await client.call_tool("pdf_read", {"path": "risky.pdf"})
        assert not result.is_error  # allowed without a human, and audited
    risky = [e for e in url_server.log_events("tool_call") if e.get("approvals")]
    assert risky and risky[-1]["approvals"] == ["high_risk:allowed_without_elicitation"]
    assert url_server.log_events("approval_skipped")


async def test_concurrency_limit_is_overloaded(url_server: RunningServer, keys: Keys) -> None:
    """The first call holds the principal's one slot while it waits for the human (the question
    is the event that says so); the second call meanwhile is ``overloaded``."""
    holding, checked = anyio.Event(), anyio.Event()

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        holding.set()
        await checked.wait()
        return types.ElicitResult(action="accept", content={"approve": True})

    token = keys.token("carol")  # no earlier approval of risky.pdf for this principal
    async with (
        connect(url_server.url, token, elicit=elicit) as first,
        connect(url_server.url, token) as second,
    ):
        results: list[types.CallToolResult] = []

        async def risky() -> None:
            results.append(await first.call_tool("pdf_read", {"path": "risky.pdf"}))

        async with anyio.create_task_group() as tg:
            tg.start_soon(risky)
            with anyio.fail_after(60):
                await holding.wait()
            busy = await second.call_tool("pdf_info", {"path": "report.pdf"})
            checked.set()
        assert error_code(busy) == "overloaded"
        assert busy.structured_content is not None
        assert busy.structured_content["error"]["details"]["limit"] == "concurrency"
        assert not results[0].is_error
        after = await second.call_tool("pdf_info", {"path": "report.pdf"})
        assert not after.is_error  # the slot is given back


def test_a_session_answers_only_its_principal(server: RunningServer, keys: Keys) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    opening = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    alice = {**headers, "Authorization": f"Bearer {keys.token('alice')}"}
    with httpx2.Client(timeout=30) as http:
        opened = http.post(server.url, json=opening, headers=alice)
        assert opened.status_code == 200
        session = opened.headers["mcp-session-id"]
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        bob = {
            **headers,
            "Authorization": f"Bearer {keys.token('bob', groups=['bobs'])}",
            "Mcp-Session-Id": session,
        }
        assert http.post(server.url, json=ping, headers=bob).status_code == 404
        again = {**alice, "Authorization": f"Bearer {keys.token('alice')}", "Mcp-Session-Id": session}
        assert (
            http.post(server.url, json=ping, headers=again).status_code == 200
        )  # a new token, same principal


def test_an_escaped_tool_name_still_needs_its_scope(server: RunningServer, keys: Keys) -> None:
    """``pdf\\u005fattachments`` is ``pdf_attachments`` once parsed: the scope check must see it."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {keys.token()}",
    }
    opening = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    with httpx2.Client(timeout=30) as http:
        opened = http.post(server.url, json=opening, headers=headers)
        headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        headers["Mcp-Protocol-Version"] = "2025-11-25"
        escaped = (
            b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", '
            b'"params": {"name": "pdf\\u005fattachments", "arguments": {"path": "attached.pdf"}}}'
        )
        refused = http.post(server.url, content=escaped, headers=headers)
        assert refused.status_code == 403
        assert 'error="insufficient_scope"' in refused.headers["www-authenticate"]


def test_the_http_seccomp_profile_is_current() -> None:
    """seccomp/profile-http.json is the container profile plus a listening server's syscalls."""
    script = PROJECT / "scripts" / "seccomp_http_profile.py"
    done = subprocess.run([sys.executable, str(script), "--check"], check=False)
    assert done.returncode == 0, "run scripts/seccomp_http_profile.py after changing seccomp/profile.json"


def test_an_address_in_use_is_exit_status_1() -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        done = _serve("--port", str(taken.getsockname()[1]))
    assert done.returncode == 1
    assert "address already in use" in done.stderr.lower()


def test_a_browser_preflight_from_an_allowed_origin(server: RunningServer) -> None:
    preflight = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization"}
    allowed = httpx2.options(server.url, headers={"Origin": ALLOWED_ORIGIN, **preflight})
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == ALLOWED_ORIGIN
    foreign = httpx2.options(server.url, headers={"Origin": "https://evil.example", **preflight})
    assert foreign.status_code == 403
