"""Human approval on stdio: ``serve --policy FILE`` with an ``[approval]`` table, driven by the
real ``mcp`` client over real stdio in both protocol eras: ``legacy`` (a 2025-11-25 session, the
question an ``elicitation/create`` request) and ``auto`` (2026-07-28, the question an
``InputRequiredResult`` with a signed ``requestState``, the answer in the next round). Accept,
decline and cancel are decided the same in both, and the audit event records each."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp_types as types
import pdfs
import pytest
from conftest import PROJECT, server_command
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client

from tests.hostile.generate import active_content

pytestmark = pytest.mark.anyio

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}
KEY = "pdf-airlock/approve/high_risk"
CALL_TIMEOUT_S = "30"  # a shared test machine may be slow to warm the zygote; no call here waits
TEST_TIMEOUT_S = 300  # a server started for each test, several rounds each


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("approval")
    pdfs.write(root / "risky.pdf", active_content())
    pdfs.write(root / "plain.pdf", pdfs.text_pdf(["Plain page."]))
    pdfs.write(root / "other.pdf", active_content() + b"\n% another copy, other bytes\n")
    (root / "policy.toml").write_text('[approval]\nhigh_risk = true\nwithout_elicitation = "deny"\n')
    return root


def audit_events(log: Path) -> list[dict[str, Any]]:
    events = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("event") == "tool_call":
                events.append(event)
    return events


@asynccontextmanager
async def approving(folder: Path, mode: str, answers: list[str] | None, log: Path) -> AsyncIterator[Client]:
    """A client of ``mode`` whose human gives the ``answers`` in turn (None: the client declares
    no elicitation); the server's stderr goes to ``log``."""
    command = server_command(folder, "--policy", str(folder / "policy.toml"), "--timeout", CALL_TIMEOUT_S)
    params = StdioServerParameters(
        command=command[0], args=command[1:], cwd=str(PROJECT), env=get_default_environment()
    )
    elicit: Any = None
    if answers is not None:

        async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            answer = answers.pop(0)
            if answer == "accept":
                return types.ElicitResult(action="accept", content={"approve": True})
            return types.ElicitResult(action=answer)  # type: ignore[arg-type]

    with log.open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog),
            mode=mode,
            read_timeout_seconds=60,
            elicitation_callback=elicit,
        ) as client:
            assert client.session.protocol_version == ERAS[mode]
            yield client


def refusal(result: types.CallToolResult) -> str:
    assert result.is_error and result.structured_content is not None
    error = result.structured_content["error"]
    assert error["code"] == "path_denied"
    return str(error["details"]["approval"])


@pytest.mark.parametrize("mode", list(ERAS))
@pytest.mark.timeout(TEST_TIMEOUT_S)
async def test_both_eras_ask_before_reading_a_high_risk_document(
    folder: Path, mode: str, tmp_path: Path
) -> None:
    answers = ["decline", "cancel", "accept"]
    log = tmp_path / "server.log"
    async with approving(folder, mode, answers, log) as client:
        plain = await client.call_tool("pdf_read", {"path": "plain.pdf"})
        assert not plain.is_error  # a low-risk document asks nothing
        assert refusal(await client.call_tool("pdf_read", {"path": "risky.pdf"})) == "declined"
        assert refusal(await client.call_tool("pdf_read", {"path": "risky.pdf"})) == "cancelled"
        risky = await client.call_tool("pdf_read", {"path": "risky.pdf"})
        assert not risky.is_error
        assert "Active content document" in risky.content[0].text  # type: ignore[union-attr]
        again = await client.call_tool("pdf_search", {"path": "risky.pdf", "query": "Active"})
        assert not again.is_error  # approved once for this client and document
    assert answers == []
    decided = [event.get("approvals") for event in audit_events(log) if "approvals" in event]
    if mode == "legacy":  # one round a call
        assert decided == [["high_risk:declined"], ["high_risk:cancelled"], ["high_risk:accepted"]]
    else:  # the round that asks, then the round that brings the answer
        assert decided == [
            ["high_risk:asked"],
            ["high_risk:declined"],
            ["high_risk:asked"],
            ["high_risk:cancelled"],
            ["high_risk:asked"],
            ["high_risk:accepted"],
        ]
        outcomes = [event["outcome"] for event in audit_events(log) if "approvals" in event]
        assert outcomes[::2] == ["input_required"] * 3


@pytest.mark.parametrize("mode", list(ERAS))
async def test_a_client_that_cannot_elicit_is_refused(folder: Path, mode: str, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    async with approving(folder, mode, None, log) as client:
        assert refusal(await client.call_tool("pdf_read", {"path": "risky.pdf"})) == "unavailable"
    assert [event.get("approvals") for event in audit_events(log) if "approvals" in event] == [
        ["high_risk:unavailable"]
    ]


# -- a 2026-07-28 client driving the rounds by hand: every replay and forgery refused --------


@asynccontextmanager
async def modern(folder: Path, log: Path) -> AsyncIterator[Client]:
    command = server_command(folder, "--policy", str(folder / "policy.toml"), "--timeout", CALL_TIMEOUT_S)
    params = StdioServerParameters(
        command=command[0], args=command[1:], cwd=str(PROJECT), env=get_default_environment()
    )

    async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        raise AssertionError("these tests answer by hand")

    with log.open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), elicitation_callback=elicit) as client:
            assert client.session.protocol_version == "2026-07-28"
            yield client


def edited(token: str, **changes: Any) -> str:
    """The state with its body edited and its tag kept (``a1.`` body ``.`` tag)."""
    body_text, _, tag = token.removeprefix("a1.").partition(".")
    body = json.loads(base64.urlsafe_b64decode(body_text + "=" * (-len(body_text) % 4))) | changes
    text = base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode()).decode().rstrip("=")
    return f"a1.{text}.{tag}"


async def asked(client: Client, arguments: dict[str, Any], tool: str = "pdf_read") -> str:
    """The first round of a call: its question's key, and the state to send back."""
    first = await client.session.call_tool(tool, arguments, allow_input_required=True)
    assert isinstance(first, types.InputRequiredResult), first
    assert first.input_requests is not None and list(first.input_requests) == [KEY]
    question = first.input_requests[KEY]
    assert isinstance(question, types.ElicitRequest) and "high risk" in question.params.message
    assert first.request_state is not None
    return first.request_state


def answer(action: str = "accept") -> dict[str, Any]:
    content = {"approve": True} if action == "accept" else None
    return {KEY: types.ElicitResult(action=action, content=content)}  # type: ignore[arg-type]


async def answered(
    client: Client,
    arguments: dict[str, Any],
    state: str | None,
    tool: str = "pdf_read",
    action: str = "accept",
) -> Any:
    return await client.session.call_tool(
        tool, arguments, input_responses=answer(action), request_state=state, allow_input_required=True
    )


def refused_as(result: Any) -> str:
    assert isinstance(result, types.CallToolResult) and result.is_error, result
    assert result.structured_content is not None
    error = result.structured_content["error"]
    assert error["code"] == "path_denied"
    return str(error["details"]["approval"])


@pytest.mark.timeout(TEST_TIMEOUT_S)
async def test_every_replay_and_forgery_is_refused(folder: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    risky = {"path": "risky.pdf"}
    async with modern(folder, log) as client:
        # Forged: the state's body edited (its tag kept), then with no state at all.
        state = await asked(client, risky)
        assert refused_as(await answered(client, risky, edited(state, g=["high_risk"]))) == "invalid_state"
        assert refused_as(await answered(client, risky, None)) == "invalid_state"
        # Another document, another tool, other arguments: each spends nothing of the real one.
        state = await asked(client, risky)
        other = {"path": "other.pdf"}
        assert refused_as(await answered(client, other, state)) == "invalid_state"
        assert (
            refused_as(await answered(client, risky | {"query": "x"}, state, "pdf_search")) == "invalid_state"
        )
        assert refused_as(await answered(client, risky | {"pages": "1"}, state)) == "invalid_state"
        # Declined, then the same state sent again with an accept: a replay.
        assert refused_as(await answered(client, risky, state, action="decline")) == "declined"
        assert refused_as(await answered(client, risky, state)) == "invalid_state"
        # A fresh question, accepted: the document is read.
        good = await answered(client, risky, await asked(client, risky))
        assert isinstance(good, types.CallToolResult) and not good.is_error, good
    errors = [event.get("approval_state_error") for event in audit_events(log) if event.get("approvals")]
    assert [error for error in errors if error] == [
        "signature",
        "malformed",
        "document",
        "tool",
        "arguments",
        "replayed",
    ]
