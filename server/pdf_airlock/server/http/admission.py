"""One ``tools/call`` on the HTTP transport: the principal, its policy, its limits, approvals.

The principal is the one ``AuthMiddleware`` put on the HTTP request (``anonymous`` on a loopback
server without auth). Its rule (``pdf_airlock.server.app.policy``) decides the roots its paths
resolve under and its concurrency and rate; a call past them is refused with ``overloaded``
before any work, and that refusal is audited like every call, principal included.

Both routes of a call end in ``Admission.run``: the SDK's (``Admission`` is the ``CallFn`` of
``sdk_server.build_server``) and the direct one (``pdf_airlock.server.http.direct``).
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types as types
from mcp.server.context import ServerRequestContext
from starlette.requests import Request

from pdf_airlock.server.app.approvals import Approvals, Asker
from pdf_airlock.server.app.audit import begin as begin_audit
from pdf_airlock.server.app.calls import App, error_result
from pdf_airlock.server.app.policy import Limiter, Policy
from pdf_airlock.server.app.principal import Principal
from pdf_airlock.server.boundary.paths import PathPolicy
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.http.auth import principal_of
from pdf_airlock.server.pool.child_output import ProgressFn

__all__ = ["ANONYMOUS", "Admission", "principal_label"]

ANONYMOUS: Final = "anonymous"  # the principal of a loopback server without auth
MCP_SESSION_ID: Final = "mcp-session-id"


def principal_label(principal: Principal | None) -> str:
    """The name limits, the cache and the audit give a principal."""
    return principal.subject if principal is not None else ANONYMOUS


class Admission:
    """The ``CallFn`` and ``Access`` the HTTP transport gives ``sdk_server.build_server``."""

    def __init__(self, app: App, policy: Policy, limiter: Limiter, *, authenticated: bool) -> None:
        self.app = app
        self.policy = policy
        self.authenticated = authenticated  # with auth on, a call without a principal never runs
        self.limiter = limiter  # shared with ``quotas.Quotas`` (sessions spend the same rate)
        self.approvals = Approvals(app, policy.approval)

    async def __call__(
        self,
        ctx: ServerRequestContext[Any],
        name: str,
        arguments: dict[str, Any],
        progress: ProgressFn | None,
    ) -> types.CallToolResult:
        request = ctx.request if isinstance(ctx.request, Request) else None
        asker = self.approvals.asker(ctx, self.principal_label(request))
        return await self.run(request, ctx.request_id, name, arguments, asker=asker, progress=progress)

    def principal(self, ctx: ServerRequestContext[Any]) -> str:
        return self.principal_label(ctx.request if isinstance(ctx.request, Request) else None)

    def paths(self, ctx: ServerRequestContext[Any]) -> PathPolicy:
        """The roots of the request's principal (none without one when auth is on)."""
        request = ctx.request if isinstance(ctx.request, Request) else None
        principal = principal_of(request.scope) if request is not None else None
        if self.authenticated and principal is None:
            return PathPolicy((), self.app.settings.max_file_bytes)
        return self.policy.paths_for(self.policy.rule_for(principal))

    @staticmethod
    def principal_label(request: Request | None) -> str:
        """The name the audit, approvals and delivered resources know the caller by."""
        principal = principal_of(request.scope) if request is not None else None
        return principal.subject if principal is not None else ANONYMOUS

    async def run(
        self,
        request: Request | None,
        request_id: types.RequestId | None,
        name: str,
        arguments: dict[str, Any],
        *,
        asker: Asker | None,
        progress: ProgressFn | None,
    ) -> types.CallToolResult:
        """One call of ``request``'s principal; ``asker`` asks the human when a call needs it
        (None: the client cannot be asked, and the policy's fallback decides)."""
        principal = principal_of(request.scope) if request is not None else None
        label = principal_label(principal)
        session_id = request.headers.get(MCP_SESSION_ID, "") if request is not None else ""
        rule = self.policy.rule_for(principal)
        try:
            if self.authenticated and principal is None:
                raise ToolError("path_denied", "no authenticated principal for this call")
            self.limiter.acquire(label, rule)
        except ToolError as error:
            record = begin_audit(request_id, name)
            record.event.update(principal=label, outcome=error.code, duration_ms=0.0)
            record.answer()
            return error_result(error)
        try:
            return await self.app.call_tool(
                name,
                arguments,
                request_id,
                progress,
                principal=label,
                paths=self.policy.paths_for(rule),
                gate=self.approvals.gate(asker, label, session_id),
            )
        finally:
            self.limiter.release(label)
