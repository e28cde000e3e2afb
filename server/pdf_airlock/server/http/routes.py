"""The ASGI application of the HTTP transport (Starlette), route by route.

```
every route                               HostGuard (the Host header: --allow-host)
/mcp                                      OriginGuard -> CORS (with --allow-origin) -> AuthMiddleware
                                          -> BodyGuard (the principal's sessions and bodies,
                                          the body cap, per-tool scopes)
                                          -> the SDK's session manager (sessions, SSE,
                                          cancellation), answering in JSON where no stream
                                          is needed (``transport.py``); a plain ``tools/call``
                                          runs directly on the app (``direct.py``)
/.well-known/oauth-protected-resource     RFC 9728 metadata (also under .../mcp, RFC 9728 3.1)
/healthz, /readyz, /metrics               probes and Prometheus, without auth
```

The MCP server behind ``/mcp`` is the stdio transport's SDK server (``sdk_server.build_server``)
with the HTTP call function (``pdf_airlock.server.http.admission``): the same app, pool, sandbox,
limits and typed errors.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Final
from urllib.parse import urlparse

from mcp.server.auth.handlers.metadata import ProtectedResourceMetadataHandler
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.shared.auth import ProtectedResourceMetadata
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from pdf_airlock.server.app.calls import App
from pdf_airlock.server.app.policy import Limiter, Policy
from pdf_airlock.server.config import Settings
from pdf_airlock.server.http.admission import Admission
from pdf_airlock.server.http.auth import AuthMiddleware, JwtVerifier
from pdf_airlock.server.http.direct import DirectRoute, SessionWatch
from pdf_airlock.server.http.events import EventBudget
from pdf_airlock.server.http.guards import TOOL_SCOPES, BodyGuard, HostGuard, OriginGuard
from pdf_airlock.server.http.health import Health
from pdf_airlock.server.http.metrics import Metrics
from pdf_airlock.server.http.options import HttpOptions
from pdf_airlock.server.http.quotas import Quotas
from pdf_airlock.server.http.transport import SessionManager
from pdf_airlock.server.mcp.direct_calls import direct_calls_enabled
from pdf_airlock.server.mcp.sdk_server import build_server, direct_calls

__all__ = ["build_asgi"]

MCP_PATH: Final = "/mcp"
RESOURCE_NAME: Final = "pdf-airlock"
CORS_HEADERS: Final = (
    "Authorization",
    "Content-Type",
    "Mcp-Session-Id",
    "Mcp-Protocol-Version",
    "Last-Event-ID",
)
WELL_KNOWN: Final = "/.well-known/oauth-protected-resource"


def _metadata_routes(options: HttpOptions) -> tuple[list[BaseRoute], str]:
    """RFC 9728 metadata at the path-inserted URL (section 3.1) and at the bare well-known path;
    both documents name the MCP endpoint as the resource. Returns the routes and the URL that
    ``WWW-Authenticate`` names."""
    assert options.auth is not None
    resource = AnyHttpUrl(options.public_url)
    # Strings, validated by the model itself, which keeps a path-less issuer without a trailing
    # slash (issuer identifiers are compared exactly, RFC 8414 section 3.3).
    metadata = ProtectedResourceMetadata.model_validate(
        {
            "resource": options.public_url,
            "authorization_servers": [options.auth.issuer],
            "scopes_supported": [options.auth.required_scope, *sorted(set(TOOL_SCOPES.values()))],
            "resource_name": RESOURCE_NAME,
        }
    )
    handler = ProtectedResourceMetadataHandler(metadata)
    url = str(build_resource_metadata_url(resource))
    paths = dict.fromkeys([urlparse(url).path, WELL_KNOWN])
    return [Route(path, endpoint=handler.handle, methods=["GET"]) for path in paths], url


def build_asgi(
    app: App, options: HttpOptions, policy: Policy, health: Health, metrics: Metrics, *, settings: Settings
) -> ASGIApp:
    """The whole HTTP service for one app (and its pool)."""
    limiter = Limiter()
    quotas = Quotas(
        policy,
        limiter,
        bodies_per_principal=settings.http_bodies_per_principal,
        sessions_per_principal=settings.http_sessions_per_principal,
    )
    calls = Admission(app, policy, limiter, authenticated=options.auth is not None)
    server = build_server(app, calls, calls)
    direct = None
    if direct_calls_enabled():
        server.middleware.append(SessionWatch())
        direct = DirectRoute(direct_calls(app), calls)
    manager = SessionManager(
        server,
        max_request_body_size=options.max_body_bytes,
        session_idle_timeout=options.session_idle_s,
        direct=direct,
        sessions=quotas.sessions,
    )
    if options.resume_buffer_bytes > 0:
        manager.event_budget = EventBudget(options.resume_buffer_bytes)
    routes: list[BaseRoute] = []
    metadata_url: str | None = None
    if options.auth is not None:
        metadata, metadata_url = _metadata_routes(options)
        routes.extend(metadata)
    endpoint: ASGIApp = BodyGuard(
        StreamableHTTPASGIApp(manager),
        options.max_body_bytes,
        metadata_url,
        metrics.refused,
        quotas=quotas,
        body_timeout_s=settings.http_body_timeout_s,
    )
    if options.auth is not None:
        assert metadata_url is not None
        endpoint = AuthMiddleware(endpoint, JwtVerifier(options.auth), metadata_url, metrics.refused)
    if options.allowed_origins:  # browsers on those origins: their preflight is answered before auth
        endpoint = CORSMiddleware(
            endpoint,
            allow_origins=sorted(options.allowed_origins),
            allow_methods=["GET", "POST", "DELETE"],
            allow_headers=list(CORS_HEADERS),
            expose_headers=["Mcp-Session-Id", "WWW-Authenticate"],
        )
    endpoint = OriginGuard(endpoint, options.allowed_origins, metrics.refused)
    routes += [
        Route(MCP_PATH, endpoint=endpoint),
        Route("/healthz", endpoint=health.healthz, methods=["GET"]),
        Route("/readyz", endpoint=health.readyz, methods=["GET"]),
        Route("/metrics", endpoint=metrics.endpoint, methods=["GET"]),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    return HostGuard(Starlette(routes=routes, lifespan=lifespan), options.allowed_hosts, metrics.refused)
