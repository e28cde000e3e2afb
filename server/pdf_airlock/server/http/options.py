"""The ``serve`` flags of the HTTP transport and the options they make; standard library only, so
the stdio server's start-up imports nothing of the HTTP stack.

A non-loopback ``--host`` needs ``--auth-jwks``: the server refuses to listen on a network
without authorization (exit status 2).
"""

from __future__ import annotations

import argparse
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["TRANSPORTS", "AuthConfig", "HttpOptions", "UsageError", "add_http_flags", "http_options"]

TRANSPORTS: Final = ("stdio", "streamable-http")
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8080
DEFAULT_SCOPE: Final = "pdf:read"
SESSION_IDLE_S: Final = 30 * 60.0  # an idle MCP session is closed after this long
_ENV_PREFIX: Final = "PDF_AIRLOCK_"
_MIB: Final = 1 << 20


class UsageError(ValueError):
    """A bad flag combination; the message is shown as is."""


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """``--auth-jwks`` (path or URL), ``--auth-issuer``, ``--auth-audience`` and the base scope."""

    jwks: str
    issuer: str
    audience: str
    required_scope: str


@dataclass(frozen=True, slots=True)
class HttpOptions:
    """Everything the HTTP transport needs beyond ``Settings``."""

    host: str
    port: int
    public_url: str  # this server's MCP endpoint as clients reach it: the RFC 9728 ``resource``
    auth: AuthConfig | None
    allowed_origins: frozenset[str]
    max_body_bytes: int
    policy_file: Path | None
    session_idle_s: float = SESSION_IDLE_S
    resume_buffer_bytes: int = 0  # 0: no resumable streams (``pdf_airlock.server.http.events``)


def _env(name: str, default: str = "") -> str:
    return os.environ.get(_ENV_PREFIX + name, default)


def add_http_flags(parser: argparse.ArgumentParser) -> None:
    """The transport flags of ``pdf-airlock serve``."""
    group = parser.add_argument_group("transport (docs/deployment.md)")
    group.add_argument("--transport", choices=TRANSPORTS, default=_env("TRANSPORT", "stdio"))
    group.add_argument("--host", default=_env("HOST", DEFAULT_HOST), help="streamable-http: address to bind")
    group.add_argument("--port", type=int, default=int(_env("PORT", str(DEFAULT_PORT))))
    group.add_argument(
        "--public-url",
        default=_env("PUBLIC_URL") or None,
        help="the MCP endpoint's URL as clients see it (default http://HOST:PORT/mcp); the OAuth resource",
    )
    group.add_argument("--auth-jwks", default=_env("AUTH_JWKS") or None, help="JWKS file or URL")
    group.add_argument("--auth-issuer", default=_env("AUTH_ISSUER") or None, help="required iss")
    group.add_argument(
        "--auth-audience", default=_env("AUTH_AUDIENCE") or None, help="required aud (default: --public-url)"
    )
    group.add_argument(
        "--auth-scope", default=_env("AUTH_SCOPE", DEFAULT_SCOPE), help="scope every call needs"
    )
    group.add_argument(
        "--allow-origin",
        action="append",
        default=None,
        help="an Origin browsers may call from (repeatable; env PDF_AIRLOCK_ALLOW_ORIGINS, comma-separated)",
    )
    group.add_argument(
        "--max-body-mb",
        type=float,
        default=float(_env("MAX_BODY_MB", "0")),
        help="largest request body (default: room for --max-file-mb inline as base64)",
    )
    group.add_argument(
        "--resume-buffer-mb",
        type=float,
        default=float(_env("RESUME_BUFFER_MB", "0")),
        help="memory for the events of resumable streams, all sessions together (default 0: off; "
        "answers are then plain JSON when they can be)",
    )
    group.add_argument(
        "--policy", type=Path, default=Path(_env("POLICY")) if _env("POLICY") else None, help="policy TOML"
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def http_options(ns: argparse.Namespace, default_max_body: int) -> HttpOptions:
    """The options of ``ns``; ``UsageError`` for a bad combination."""
    if not 0 < ns.port < 65536:
        raise UsageError("--port must be between 1 and 65535")
    if not is_loopback(ns.host) and not ns.auth_jwks:
        raise UsageError(
            f"refusing to listen on {ns.host} without authorization: give --auth-jwks and --auth-issuer "
            "(or bind 127.0.0.1)"
        )
    host_in_url = f"[{ns.host}]" if ":" in ns.host else ns.host
    public_url = ns.public_url or f"http://{host_in_url}:{ns.port}/mcp"
    auth = None
    if ns.auth_jwks:
        if not ns.auth_issuer:
            raise UsageError("--auth-jwks needs --auth-issuer")
        auth = AuthConfig(ns.auth_jwks, ns.auth_issuer, ns.auth_audience or public_url, ns.auth_scope)
    origins = ns.allow_origin or [o for o in _env("ALLOW_ORIGINS").split(",") if o.strip()]
    if ns.max_body_mb < 0:
        raise UsageError("--max-body-mb must be positive")
    max_body = int(ns.max_body_mb * _MIB) if ns.max_body_mb > 0 else default_max_body
    if ns.resume_buffer_mb < 0:
        raise UsageError("--resume-buffer-mb must not be negative")
    return HttpOptions(
        host=ns.host,
        port=ns.port,
        public_url=public_url,
        auth=auth,
        allowed_origins=frozenset(origin.strip().rstrip("/") for origin in origins),
        max_body_bytes=max_body,
        policy_file=ns.policy,
        resume_buffer_bytes=int(ns.resume_buffer_mb * _MIB),
    )
