"""The signed ``requestState`` of a 2026-07-28 approval (``pdf_airlock.server.approval_state``):
every replay and forgery is refused, by the exact reason.

First the tokens alone (a fake clock for expiry), then over real stdio with the real ``mcp``
client driving the rounds by hand (``allow_input_required``): a state sent back edited,
forged, twice, for another document, tool or arguments, or without its answer's state, is a
``path_denied`` with ``details.approval = "invalid_state"``, and the audit event names why.
Another principal's state: ``tests/test_http.py``
(``test_an_approval_state_is_refused_to_another_principal``).
"""

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
from test_approval_stdio import CALL_TIMEOUT_S, audit_events

from pdf_airlock.server.approval_state import ApprovalStates, Binding, StateError
from tests.hostile.generate import active_content

BINDING = Binding("alice", "ab" * 32, "pdf_read", {"path": "risky.pdf", "pages": "1"})
KEY = "pdf-airlock/approve/high_risk"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _body(token: str) -> dict[str, Any]:
    text = token.removeprefix("a1.").partition(".")[0]
    return dict(json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))))


def _with_body(token: str, **changes: Any) -> str:
    """The token with its body edited and its old tag kept."""
    body = _body(token) | changes
    tag = token.rpartition(".")[2]
    return f"a1.{_b64(json.dumps(body, separators=(',', ':')).encode())}.{tag}"


def _reason(states: ApprovalStates, token: object, binding: Binding = BINDING) -> str:
    with pytest.raises(StateError) as refused:
        states.redeem(token, binding)
    return str(refused.value)


# -- the tokens alone -------------------------------------------------------------------------


def test_a_token_counts_once_for_its_call() -> None:
    states = ApprovalStates(300)
    token = states.issue(BINDING, "high_risk", "Read it anyway?")
    claims = states.redeem(token, BINDING)
    assert claims.action == "high_risk" and claims.granted == ()
    assert claims.question == states.question_digest("Read it anyway?")
    assert _reason(states, token) == "replayed"


@pytest.mark.parametrize(
    ("binding", "reason"),
    [
        (Binding("bob", BINDING.sha256, BINDING.tool, BINDING.arguments), "principal"),
        (Binding("alice", "cd" * 32, BINDING.tool, BINDING.arguments), "document"),
        (Binding("alice", BINDING.sha256, "pdf_search", BINDING.arguments), "tool"),
        (Binding("alice", BINDING.sha256, BINDING.tool, {"path": "risky.pdf", "pages": "2"}), "arguments"),
    ],
    ids=["principal", "document", "tool", "arguments"],
)
def test_a_token_is_refused_to_another_call(binding: Binding, reason: str) -> None:
    states = ApprovalStates(300)
    token = states.issue(BINDING, "high_risk", "Read it anyway?")
    assert _reason(states, token, binding) == reason
    assert states.redeem(token, BINDING).action == "high_risk"  # a refusal does not spend it


def test_an_expired_token_is_refused() -> None:
    clock = Clock()
    states = ApprovalStates(300, clock=clock)
    token = states.issue(BINDING, "high_risk", "Read it anyway?")
    clock.now += 300
    assert _reason(states, token) == "expired"


@pytest.mark.parametrize(
    "edit",
    [
        {"d": "cd" * 32},  # another document
        {"x": "attachment"},  # another action
        {"g": ["high_risk"]},  # an approval it never had
        {"e": 9e18},  # a later expiry
        {"p": "0" * 32},  # another principal
    ],
    ids=["document", "action", "granted", "expiry", "principal"],
)
def test_an_edited_token_fails_its_signature(edit: dict[str, Any]) -> None:
    states = ApprovalStates(300)
    token = states.issue(BINDING, "high_risk", "Read it anyway?")
    assert _reason(states, _with_body(token, **edit)) == "signature"


def test_a_token_of_another_key_or_server_is_refused() -> None:
    other = ApprovalStates(300).issue(BINDING, "high_risk", "Read it anyway?")
    assert _reason(ApprovalStates(300), other) == "signature"
    shared = b"s" * 32  # processes given the same --cache-key-file take each other's tokens
    token = ApprovalStates(300, shared).issue(BINDING, "high_risk", "Read it anyway?")
    assert ApprovalStates(300, shared).redeem(token, BINDING).action == "high_risk"
    assert _reason(ApprovalStates(300, b"t" * 32), token) == "signature"


@pytest.mark.parametrize(
    "token",
    [None, 7, "", "a1.", "a1.e30", "a1.e30.", "v1.abc.def", "a1.!!!.abc", "a1." + "A" * 5000],
    ids=["none", "number", "empty", "prefix", "no-tag", "empty-tag", "other-format", "not-base64", "huge"],
)
def test_a_malformed_token_is_refused(token: object) -> None:
    assert _reason(ApprovalStates(300), token) in {"malformed", "signature"}


def test_the_token_says_nothing_of_the_principal_or_the_password() -> None:
    states = ApprovalStates(300)
    secret = Binding(
        "alice@example.org", BINDING.sha256, "pdf_read", {"path": "x.pdf", "password": "hunter2"}
    )
    token = states.issue(secret, "high_risk", "Read it anyway?")
    decoded = json.dumps(_body(token))
    assert "alice" not in decoded and "hunter2" not in decoded and "x.pdf" not in decoded


# -- over stdio, a 2026-07-28 client driving the rounds ------------------------------------


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("approval-state")
    pdfs.write(root / "risky.pdf", active_content())
    pdfs.write(root / "other.pdf", active_content() + b"\n% another copy, other bytes\n")
    (root / "policy.toml").write_text('[approval]\nhigh_risk = true\nwithout_elicitation = "deny"\n')
    return root


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


pytestmark = pytest.mark.anyio


async def test_every_replay_and_forgery_is_refused(folder: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    risky = {"path": "risky.pdf"}
    async with modern(folder, log) as client:
        # Forged: the state's body edited (its tag kept), then with no state at all.
        state = await asked(client, risky)
        assert (
            refused_as(await answered(client, risky, _with_body(state, g=["high_risk"]))) == "invalid_state"
        )
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
