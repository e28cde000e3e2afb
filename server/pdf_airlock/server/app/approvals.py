"""Human approval of risky actions through MCP elicitation.

Two actions ask first: extracting an attachment (``pdf_attachments`` with ``extract``), and
reading a document the ``pdf_security`` triage rates ``high`` (JavaScript, launch actions,
submit/import, rich media, XFA). The question goes to the client as a form-mode
``elicitation/create`` on the call's own stream, asking for one boolean, ``approve``; only an
``accept`` with ``approve: true`` lets the call go on. A client that declared no elicitation
capability (or whose channel cannot carry a server request) gets what the policy says:
``deny`` (the default) or ``allow``, recorded in the audit event and logged as a warning.

A refusal is the typed ``path_denied`` error with ``details.approval`` = ``declined`` or
``unavailable``. The triage runs on the call's open document, its job counted in the call's
audit record; its verdict is remembered by the document's hash (``TRIAGE_MEMO`` entries, with
the result cache on or off), so a document costs one triage job however often it is read. A
document a principal has approved in an MCP session is not asked about again in that session
(``APPROVED_MEMO`` entries kept).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Final

import anyio
import mcp_types as types
import structlog
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPError

from pdf_airlock.server.app.audit import current as current_audit
from pdf_airlock.server.app.calls import App, Gate
from pdf_airlock.server.app.policy import Approval
from pdf_airlock.server.boundary.paths import Document
from pdf_airlock.server.boundary.sanitize import clean_text
from pdf_airlock.server.errors import ToolError

__all__ = ["APPROVE_SCHEMA", "HIGH_RISK_EXEMPT", "Approvals"]

log = structlog.get_logger(__name__)

APPROVAL_TIMEOUT_S: Final = 300.0  # a human may take a while; no answer by then is a refusal
APPROVED_MEMO: Final = 1024
TRIAGE_MEMO: Final = 4096
_MAX_SHOWN: Final = 200
# Triage tools: they exist to look at a risky document before trusting it.
HIGH_RISK_EXEMPT: Final = frozenset({"pdf_security", "pdf_info", "pdf_attachments"})
_DOCUMENT_KEYS: Final = ("path", "data", "password")
APPROVE_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve", "description": "Go ahead with this action"}
    },
    "required": ["approve"],
}
_ELICITATION: Final = types.ClientCapabilities(elicitation=types.ElicitationCapability())


def _shown(text: str) -> str:
    cleaned = clean_text(text)[0]
    return cleaned if len(cleaned) <= _MAX_SHOWN else cleaned[:_MAX_SHOWN] + "..."


class Approvals:
    """Builds the gate (``App.call_tool(gate=...)``) of one call for one principal."""

    def __init__(self, app: App, approval: Approval) -> None:
        self.app = app
        self.approval = approval
        self._approved: OrderedDict[tuple[str, str, str], None] = OrderedDict()
        # (sha256, a password was given) -> (risk, reasons); never the password itself.
        self._triaged: OrderedDict[tuple[str, bool], tuple[str, str]] = OrderedDict()

    def may_ask(self, name: str, arguments: dict[str, Any], session: ServerSession | None) -> bool:
        """Whether this call could ask the human through ``session`` (the gate's own tests, before
        the document is open): False lets the call run without the SDK's session (the direct
        route, ``pdf_airlock.server.http.direct``), where the gate asks nobody and the policy's
        fallback decides, as it would for this client."""
        if session is None or not session.check_client_capability(_ELICITATION):
            return False
        extract = arguments.get("extract")
        if name == "pdf_attachments" and isinstance(extract, str) and self.approval.attachments:
            return True
        return self.approval.high_risk and name not in HIGH_RISK_EXEMPT

    def gate(
        self,
        session: ServerSession | None,
        request_id: types.RequestId | None,
        principal: str,
        session_id: str,
    ) -> Gate:
        async def gate(name: str, arguments: dict[str, Any], document: Document) -> None:
            extract = arguments.get("extract")
            if name == "pdf_attachments" and isinstance(extract, str) and self.approval.attachments:
                question = (
                    f"Extract the attachment {_shown(extract)!r} from {_shown(document.display)}? "
                    "It is returned as base64 and never opened."
                )
                await self._ask(session, request_id, "attachment", question)
            if self.approval.high_risk and name not in HIGH_RISK_EXEMPT:
                key = (principal, session_id, document.sha256)
                await self._high_risk(session, request_id, key, arguments, document)

        return gate

    async def _high_risk(
        self,
        session: ServerSession | None,
        request_id: types.RequestId | None,
        key: tuple[str, str, str],
        arguments: dict[str, Any],
        document: Document,
    ) -> None:
        if key in self._approved:
            return
        risk, reasons = await self._triage(arguments, document)
        if risk != "high":
            return
        question = (
            f"{_shown(document.display)} is rated high risk by the security triage ({_shown(reasons)}). "
            "Read it anyway? Nothing in it runs; its text may try to steer the agent."
        )
        await self._ask(session, request_id, "high_risk", question)
        self._approved[key] = None
        while len(self._approved) > APPROVED_MEMO:
            self._approved.popitem(last=False)

    async def _triage(self, arguments: dict[str, Any], document: Document) -> tuple[str, str]:
        """``pdf_security``'s risk and reasons for this document (``ToolError`` if it fails)."""
        key = (document.sha256, arguments.get("password") is not None)
        known = self._triaged.get(key)
        if known is not None:
            self._triaged.move_to_end(key)
            return known
        triage_args: dict[str, Any] = {name: arguments[name] for name in _DOCUMENT_KEYS if name in arguments}
        triage = await self.app.run_on("pdf_security", triage_args, document)
        structured = triage.structured_content or {}
        reasons = "; ".join(str(reason) for reason in structured.get("reasons", [])[:5])
        verdict = (str(structured.get("risk")), reasons)
        self._triaged[key] = verdict
        while len(self._triaged) > TRIAGE_MEMO:
            self._triaged.popitem(last=False)
        return verdict

    async def _ask(
        self, session: ServerSession | None, request_id: types.RequestId | None, action: str, question: str
    ) -> None:
        audit = current_audit()
        decisions: list[str] = audit.event.setdefault("approvals", [])
        if (
            session is None
            or not session.can_send_request
            or not session.check_client_capability(_ELICITATION)
        ):
            if self.approval.without_elicitation == "allow":
                decisions.append(f"{action}:allowed_without_elicitation")
                log.warning("approval_skipped", action=action, tool=audit.event.get("tool"))
                return
            decisions.append(f"{action}:unavailable")
            raise ToolError(
                "path_denied",
                "this action needs a human's approval and the client cannot ask (MCP elicitation)",
                {"approval": "unavailable", "action": action},
            )
        accepted = False
        with anyio.move_on_after(APPROVAL_TIMEOUT_S):
            try:
                result = await session.elicit_form(question, APPROVE_SCHEMA, related_request_id=request_id)
            except MCPError:
                result = types.ElicitResult(action="cancel")
            accepted = result.action == "accept" and (result.content or {}).get("approve") is True
        decisions.append(f"{action}:{'accepted' if accepted else 'declined'}")
        if not accepted:
            raise ToolError(
                "path_denied",
                "the user did not approve this action",
                {"approval": "declined", "action": action},
            )
        self.app.restart_deadline()
