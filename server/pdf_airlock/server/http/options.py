"""The ``serve`` flags of the HTTP transport and the options they make; standard library only (and
``config``), so the stdio server's start-up imports nothing of the HTTP stack.

A non-loopback ``--host`` needs ``--auth-jwks``: the server refuses to listen on a network
without authorization (exit status 2), and a JWKS URL must be ``https://`` unless it names a
loopback address. The HTTP limits (``config.SERVE_LIMITS``) are ``Settings`` fields; their flags
are made here from that table and range-checked by ``serve_settings``.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

from pdf_airlock.server.config import CACHE_SCOPES, MIB, SERVE_LIMITS, Settings

__all__ = [
    "TRANSPORTS",
    "AuthConfig",
    "HttpOptions",
    "UsageError",
    "add_http_flags",
    "allowed_hosts",
    "http_options",
    "is_loopback",
    "serve_settings",
]

TRANSPORTS: Final = ("stdio", "streamable-http")
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 8080
DEFAULT_SCOPE: Final = "pdf:read"
SESSION_IDLE_S: Final = 30 * 60.0  # an idle MCP session is closed after this long
_ENV_PREFIX: Final = "PDF_AIRLOCK_"
ANY_HOST: Final = "*"  # ``--allow-host *``: no Host check
# The names a loopback server answers to by default (a DNS-rebinding page's Host is its own name).
LOOPBACK_HOSTS: Final = frozenset({"localhost", "127.0.0.1", "::1"})


class UsageError(ValueError):
    """A bad flag combination; the message is shown as is."""


@dataclass(frozen=True, slots=True)
class AuthConfig:
    """``--auth-jwks`` (path or URL), ``--auth-issuer``, ``--auth-audience`` and the base scope."""

    jwks: str
    issuer: str
    audience: str
    required_scope: str
    jwks_refresh_s: float = SERVE_LIMITS["auth_jwks_refresh_s"].default
    jwks_cooldown_s: float = SERVE_LIMITS["auth_jwks_cooldown_s"].default


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
    allowed_hosts: frozenset[str] | None = None  # None: any Host (``allowed_hosts``)
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
        "--allow-host",
        action="append",
        default=None,
        help="a Host name requests may carry (repeatable; * for any; env PDF_AIRLOCK_ALLOW_HOSTS, "
        "comma-separated; default: the loopback names on a loopback --host, else any)",
    )
    group.add_argument(
        "--cache-scope",
        choices=CACHE_SCOPES,
        default=_env("CACHE_SCOPE", CACHE_SCOPES[0]),
        help="whose calls a cached result answers: the principal's that made it, or everyone's "
        "(shared: a principal can then tell whether another read the same document)",
    )
    for name, limit in SERVE_LIMITS.items():
        kind = int if limit.integer else float
        group.add_argument(
            "--" + limit.flag,
            dest=name,
            type=kind,
            default=kind(os.environ.get(limit.env, limit.default)),
            help=f"{limit.help} ({limit.low:g}-{limit.high:g}; env {limit.env})",
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


def serve_settings(ns: argparse.Namespace) -> dict[str, Any]:
    """The ``Settings`` fields of ``serve``'s HTTP flags; ``UsageError`` for one out of range."""
    fields: dict[str, Any] = {"cache_scope": ns.cache_scope}
    if ns.cache_scope not in CACHE_SCOPES:
        raise UsageError(f"--cache-scope must be one of {', '.join(CACHE_SCOPES)}")
    for name, limit in SERVE_LIMITS.items():
        value = getattr(ns, name)
        if not limit.low <= value <= limit.high:
            raise UsageError(f"--{limit.flag} must be from {limit.low:g} to {limit.high:g}")
        fields[name] = value
    return fields


def _jwks_source(jwks: str) -> str:
    """``--auth-jwks`` as given, once checked: a URL must be ``https://``, or ``http://`` to a
    loopback address (a key set read in the clear could be swapped on the way)."""
    if jwks.startswith("http://"):
        host = urlsplit(jwks).hostname or ""
        if not is_loopback(host):
            raise UsageError(
                "--auth-jwks: an http:// URL is refused unless it names a loopback address; use https://"
            )
    return jwks


def allowed_hosts(names: list[str], host: str, public_url: str) -> frozenset[str] | None:
    """The Host names requests may carry (lower case, without port or brackets), None for any:
    those named (``*`` for any), or by default the loopback names and this server's own when it
    listens on loopback, and any Host otherwise."""
    if ANY_HOST in names:
        return None
    if not names:
        if not is_loopback(host):
            return None
        names = [*LOOPBACK_HOSTS, host, urlsplit(public_url).hostname or ""]
    return frozenset(name.strip().lower().strip("[]") for name in names if name.strip())


def http_options(ns: argparse.Namespace, settings: Settings) -> HttpOptions:
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
        auth = AuthConfig(
            _jwks_source(ns.auth_jwks),
            ns.auth_issuer,
            ns.auth_audience or public_url,
            ns.auth_scope,
            jwks_refresh_s=settings.auth_jwks_refresh_s,
            jwks_cooldown_s=settings.auth_jwks_cooldown_s,
        )
    origins = ns.allow_origin or [o for o in _env("ALLOW_ORIGINS").split(",") if o.strip()]
    hosts = ns.allow_host or [h for h in _env("ALLOW_HOSTS").split(",") if h.strip()]
    if ns.resume_buffer_mb < 0:
        raise UsageError("--resume-buffer-mb must not be negative")
    return HttpOptions(
        host=ns.host,
        port=ns.port,
        public_url=public_url,
        auth=auth,
        allowed_origins=frozenset(origin.strip().rstrip("/") for origin in origins),
        max_body_bytes=int(settings.http_max_body_mb * MIB),
        allowed_hosts=allowed_hosts(hosts, ns.host, public_url),
        policy_file=ns.policy,
        resume_buffer_bytes=int(ns.resume_buffer_mb * MIB),
    )
