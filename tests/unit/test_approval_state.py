"""The signed ``requestState`` of a 2026-07-28 approval (``pdf_airlock.server.app.approval_state``):
every replay and forgery is refused, by the exact reason (a fake clock for expiry). The same
attempts over real stdio: ``tests/protocol/test_approval_stdio.py``
(``test_every_replay_and_forgery_is_refused``); another principal's state over HTTP:
``tests/protocol/test_http.py`` (``test_an_approval_state_is_refused_to_another_principal``).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from pdf_airlock.server.app.approval_state import ApprovalStates, Binding, StateError

BINDING = Binding("alice", "ab" * 32, "pdf_read", {"path": "risky.pdf", "pages": "1"})


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
