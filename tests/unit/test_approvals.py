"""Which clients can be asked (``pdf_airlock.server.app.approvals``): a form elicitation needs a
client that declared ``elicitation`` with ``form``, or bare; one that declared only ``url`` mode
cannot show the form, and gets what the policy says for a client that cannot be asked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pytest

from pdf_airlock.server.app.approval_state import ApprovalStates
from pdf_airlock.server.app.approvals import RoundTripAsker, SessionAsker


@dataclass
class Session:
    """What the askers read of the SDK's ``ServerSession``."""

    client_capabilities: types.ClientCapabilities | None
    can_send_request: bool = True


@pytest.mark.parametrize(
    ("elicitation", "can_ask"),
    [
        (None, False),
        ({}, True),
        ({"form": {}}, True),
        ({"form": {}, "url": {}}, True),
        ({"url": {}}, False),
    ],
    ids=["none", "bare", "form", "form-and-url", "url-only"],
)
def test_only_a_client_that_shows_forms_is_asked(elicitation: dict[str, Any] | None, can_ask: bool) -> None:
    declared = {} if elicitation is None else {"elicitation": elicitation}
    session: Any = Session(types.ClientCapabilities.model_validate(declared))
    assert SessionAsker(session, 1).can_ask() is can_ask
    assert RoundTripAsker(ApprovalStates(300), "alice", {}, session).can_ask() is can_ask
    assert SessionAsker(Session(session.client_capabilities, can_send_request=False), 1).can_ask() is False  # type: ignore[arg-type]
