"""Human approval of risky actions, asked in whichever way the client's protocol era has.

Two actions ask first: extracting an attachment (a tool declared with ``extract_approval``,
given ``extract``), and reading a document the security triage (``tools.security``) rates
``high`` (JavaScript, launch actions, submit/import, rich media, XFA); the triage tools
themselves (declared with ``triage``) never ask about risk. The question is a form asking for
one boolean, ``approve``; only an ``accept`` with ``approve: true`` lets the call go on. How it
reaches the human depends on the call's era (``Asker``):

- handshake era (2024-11-05 .. 2025-11-25): an ``elicitation/create`` request on the call's own
  stream (``SessionAsker``), answered within ``APPROVAL_TIMEOUT_S``;
- 2026-07-28 (no server-to-client requests): the call answers with an ``InputRequiredResult``
  carrying the same question and a signed ``requestState``
  (``pdf_airlock.server.app.approval_state``), and the client calls again with the human's answer
  (``RoundTripAsker``). The state counts only for the same principal, document bytes, tool,
  arguments and action, before it expires, and once.

Every decision is the same in both eras and recorded in the call's audit event
(``approvals``: ``action:decision``): ``accepted``; ``declined`` (a decline, or an accept without
``approve: true``); ``cancelled`` (a cancel, an error from the client, no answer in time);
``unavailable`` (the client declared no form elicitation, or its channel cannot carry a request)
or, with the policy's ``without_elicitation = "allow"``, ``allowed_without_elicitation`` (also
logged as a warning); in the 2026-07-28 era also ``asked`` (the round that put the question) and
``invalid_state`` / ``expired`` (an echoed state that does not count for this call: forged,
edited, replayed, for another principal, document, tool, arguments or action, or too old; the
reason is in ``approval_state_error``). A refusal is the typed ``path_denied`` error with
``details.approval`` naming the decision.

The triage runs on the call's open document, its job counted in the call's audit record; its
verdict is remembered by the document's hash (``TRIAGE_MEMO`` entries, with the result cache on
or off), so a document costs one triage job however often it is read. A document a principal has
approved is not asked about again in that MCP session (in the 2026-07-28 era, which has no
sessions: for that principal), ``APPROVED_MEMO`` entries kept.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

import anyio
import mcp_types as types
import structlog
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from pdf_airlock.server.app.approval_state import ApprovalStates, Binding, Claims, StateError
from pdf_airlock.server.app.audit import current as current_audit
from pdf_airlock.server.app.calls import App, Gate, InputRequired
from pdf_airlock.server.app.policy import Approval
from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.boundary.sanitize import clean_text
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.tools import security
from pdf_airlock.server.tools.registry import TOOLS

__all__ = [
    "APPROVE_SCHEMA",
    "EXTRACT_ASKS",
    "HIGH_RISK_EXEMPT",
    "Approvals",
    "Asker",
    "Question",
    "RoundTripAsker",
    "SessionAsker",
]

log = structlog.get_logger(__name__)

APPROVAL_TIMEOUT_S: Final = 300.0  # a human may take a while; no answer by then is a cancel
APPROVED_MEMO: Final = 1024
TRIAGE_MEMO: Final = 4096
_MAX_SHOWN: Final = 200
# Triage tools: they exist to look at a risky document before trusting it.
HIGH_RISK_EXEMPT: Final = frozenset(name for name, spec in TOOLS.items() if spec.triage)
# Tools whose ``extract`` hands an embedded file out.
EXTRACT_ASKS: Final = frozenset(name for name, spec in TOOLS.items() if spec.extract_approval)
_DOCUMENT_KEYS: Final = ("path", "data", "password")
APPROVE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve", "description": "Go ahead with this action"}
    },
    "required": ["approve"],
}


def _asks_forms(session: ServerSession | None) -> bool:
    """The client declared form elicitation: ``elicitation`` with ``form``, or bare (the only
    shape before modes existed); one that declared only ``url`` cannot show the form."""
    capabilities = session.client_capabilities if session is not None else None
    elicitation = capabilities.elicitation if capabilities is not None else None
    return elicitation is not None and (elicitation.form is not None or elicitation.url is None)


_INPUT_KEY: Final = "pdf-airlock/approve/{action}"  # the inputRequests key of an action's question
# Decisions (the audit's ``action:decision``, a refusal's ``details.approval``).
ACCEPTED: Final = "accepted"
DECLINED: Final = "declined"
CANCELLED: Final = "cancelled"
UNAVAILABLE: Final = "unavailable"
INVALID_STATE: Final = "invalid_state"
EXPIRED: Final = "expired"
_REFUSALS: Final = {
    DECLINED: "the user did not approve this action",
    CANCELLED: "the user did not answer the approval question",
    INVALID_STATE: "the approval state sent back is not valid for this call; call again to be asked anew",
    EXPIRED: "the approval state sent back has expired; call again to be asked anew",
}


def _shown(text: str) -> str:
    cleaned = clean_text(text)[0]
    return cleaned if len(cleaned) <= _MAX_SHOWN else cleaned[:_MAX_SHOWN] + "..."


def _decision(answer: types.ElicitResult) -> str:
    if answer.action == "accept":
        return ACCEPTED if (answer.content or {}).get("approve") is True else DECLINED
    return DECLINED if answer.action == "decline" else CANCELLED


@dataclass(frozen=True, slots=True)
class Question:
    """One question for the human: the action, its text, and the call it is about."""

    action: str
    text: str
    tool: str
    arguments: Mapping[str, Any]
    document: Document


class Asker(Protocol):
    """How a call reaches its human: ``can_ask`` before asking; ``ask`` gives a decision, or
    raises ``InputRequired`` (the 2026-07-28 era's way to put the question)."""

    def can_ask(self) -> bool: ...

    async def ask(self, question: Question) -> str: ...


class SessionAsker:
    """The handshake era: ``elicitation/create`` on the call's own stream."""

    def __init__(self, session: ServerSession | None, request_id: types.RequestId | None) -> None:
        self.session = session
        self.request_id = request_id

    def can_ask(self) -> bool:
        session = self.session
        if session is None or not session.can_send_request:
            return False
        return _asks_forms(session)

    async def ask(self, question: Question) -> str:
        assert self.session is not None
        with anyio.move_on_after(APPROVAL_TIMEOUT_S):
            try:
                result = await self.session.elicit_form(
                    question.text, APPROVE_SCHEMA, related_request_id=self.request_id
                )
            except MCPError:
                return CANCELLED
            return _decision(result)
        return CANCELLED


class RoundTripAsker:
    """The 2026-07-28 era: the question goes out in an ``InputRequiredResult`` with a signed
    ``requestState``; the answer comes back in the next round's ``inputResponses``."""

    def __init__(
        self,
        states: ApprovalStates,
        principal: str,
        params: Mapping[str, Any] | None,
        session: ServerSession | None,
    ) -> None:
        self.states = states
        self.principal = principal
        params = params or {}
        self.state = params.get("requestState")
        responses = params.get("inputResponses")
        self.responses: Mapping[str, Any] = responses if isinstance(responses, Mapping) else {}
        self.session = session
        self.claims: Claims | None = None
        self.granted: list[str] = []
        self.state_error: str | None = None

    def can_ask(self) -> bool:
        return _asks_forms(self.session)

    async def ask(self, question: Question) -> str:
        binding = Binding(self.principal, question.document.sha256, question.tool, question.arguments)
        claims = self._redeemed(binding)
        if claims is not None and question.action in claims.granted:
            self.granted.append(question.action)
            return ACCEPTED
        if self.state_error is not None:
            return EXPIRED if self.state_error == "expired" else INVALID_STATE
        if claims is not None and claims.action == question.action:
            answer = self._answer(question.action)
            if claims.question == self.states.question_digest(question.text) and answer is not None:
                decision = _decision(answer)
                if decision == ACCEPTED:
                    self.granted.append(question.action)
                return decision
        token = self.states.issue(binding, question.action, question.text, tuple(self.granted))
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=question.text, requested_schema=APPROVE_SCHEMA)
        )
        key = _INPUT_KEY.format(action=question.action)
        raise InputRequired(types.InputRequiredResult(input_requests={key: request}, request_state=token))

    def _redeemed(self, binding: Binding) -> Claims | None:
        """The round's state, redeemed once (the first question of the round); None without
        one. Answers sent without a state count as an invalid state."""
        if self.claims is not None or self.state_error is not None:
            return self.claims
        if self.state is None:
            if self.responses:
                self.state_error = "malformed"
            return None
        try:
            self.claims = self.states.redeem(self.state, binding)
        except StateError as error:
            self.state_error = str(error)
        return self.claims

    def _answer(self, action: str) -> types.ElicitResult | None:
        raw = self.responses.get(_INPUT_KEY.format(action=action))
        if raw is None:
            return None
        if isinstance(raw, types.ElicitResult):
            return raw
        try:
            return types.ElicitResult.model_validate(
                raw.model_dump(by_alias=True) if hasattr(raw, "model_dump") else raw, by_name=False
            )
        except ValidationError:
            return types.ElicitResult(action="cancel")


class Approvals:
    """Builds the gate (``App.call_tool(gate=...)``) of one call for one principal."""

    def __init__(self, app: App, approval: Approval) -> None:
        self.app = app
        self.approval = approval
        self.states = ApprovalStates(app.settings.approval_state_ttl_s, app.key_secret)
        self._approved: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        # (sha256, a password was given) -> (risk, reasons); never the password itself.
        self._triaged: OrderedDict[tuple[str, bool], tuple[str, str]] = OrderedDict()

    def asker(self, ctx: ServerRequestContext[Any], principal: str) -> Asker:
        """The way this request's era asks its human."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return RoundTripAsker(self.states, principal, ctx.params, ctx.session)
        return SessionAsker(ctx.session, ctx.request_id)

    def may_ask(self, name: str, arguments: dict[str, Any], session: ServerSession | None) -> bool:
        """Whether this call could ask the human through ``session`` (the gate's own tests, before
        the document is open): False lets the call run without the SDK's session (the direct
        route, ``pdf_airlock.server.http.direct``), where the gate asks nobody and the policy's
        fallback decides, as it would for this client."""
        if not _asks_forms(session):
            return False
        extract = arguments.get("extract")
        if name in EXTRACT_ASKS and isinstance(extract, str) and self.approval.attachments:
            return True
        return self.approval.high_risk and name not in HIGH_RISK_EXEMPT

    def gate(self, asker: Asker | None, principal: str, session_id: str) -> Gate:
        async def gate(name: str, arguments: dict[str, Any], document: Document) -> None:
            extract = arguments.get("extract")
            if name in EXTRACT_ASKS and isinstance(extract, str) and self.approval.attachments:
                text = (
                    f"Extract the attachment {_shown(extract)!r} from {_shown(document.display)}? "
                    "It is returned as base64 and never opened."
                )
                await self._ask(asker, Question("attachment", text, name, arguments, document))
            if self.approval.high_risk and name not in HIGH_RISK_EXEMPT:
                key = (principal, session_id, document.sha256)
                await self._high_risk(asker, key, name, arguments, document)

        return gate

    async def _high_risk(
        self,
        asker: Asker | None,
        key: tuple[str, str, str],
        name: str,
        arguments: dict[str, Any],
        document: Document,
    ) -> None:
        if key in self._approved:
            return
        risk, reasons = await self._triage(arguments, document)
        if risk != "high":
            return
        text = (
            f"{_shown(document.display)} is rated high risk by the security triage ({_shown(reasons)}). "
            "Read it anyway? Nothing in it runs; its text may try to steer the agent."
        )
        await self._ask(asker, Question("high_risk", text, name, arguments, document))
        self._approved[key] = None
        while len(self._approved) > APPROVED_MEMO:
            self._approved.popitem(last=False)

    async def _triage(self, arguments: dict[str, Any], document: Document) -> tuple[str, str]:
        """The security triage's risk and reasons for this document (``ToolError`` if it fails)."""
        key = (document.sha256, arguments.get("password") is not None)
        known = self._triaged.get(key)
        if known is not None:
            self._triaged.move_to_end(key)
            return known
        triage_args: dict[str, Any] = {name: arguments[name] for name in _DOCUMENT_KEYS if name in arguments}
        triage = await self.app.run_on(security.TOOL.name, triage_args, document)
        structured = triage.structured_content or {}
        reasons = "; ".join(str(reason) for reason in structured.get("reasons", [])[:5])
        verdict = (str(structured.get("risk")), reasons)
        self._triaged[key] = verdict
        while len(self._triaged) > TRIAGE_MEMO:
            self._triaged.popitem(last=False)
        return verdict

    async def _ask(self, asker: Asker | None, question: Question) -> None:
        audit = current_audit()
        decisions: list[str] = audit.event.setdefault("approvals", [])
        action = question.action
        if asker is None or not asker.can_ask():
            if self.approval.without_elicitation == "allow":
                decisions.append(f"{action}:allowed_without_elicitation")
                log.warning("approval_skipped", action=action, tool=audit.event.get("tool"))
                return
            decisions.append(f"{action}:{UNAVAILABLE}")
            raise ToolError(
                "path_denied",
                "this action needs a human's approval and the client cannot ask (MCP elicitation)",
                {"approval": UNAVAILABLE, "action": action},
            )
        try:
            decision = await asker.ask(question)
        except InputRequired:
            decisions.append(f"{action}:asked")
            raise
        decisions.append(f"{action}:{decision}")
        if isinstance(asker, RoundTripAsker) and asker.state_error is not None:
            audit.event["approval_state_error"] = asker.state_error
        if decision != ACCEPTED:
            raise ToolError("path_denied", _REFUSALS[decision], {"approval": decision, "action": action})
        self.app.restart_deadline()
