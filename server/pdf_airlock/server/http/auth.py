"""Bearer-token authorization: the HTTP transport as an OAuth 2.1 resource server.

Access tokens are JWTs checked offline against a JWKS (a file read at start, or a URL fetched
and refreshed by ``http/jwks.py``): the signature with an asymmetric algorithm the key itself
names (never ``none`` or an HMAC, which would let a public key sign), ``exp``, ``nbf`` and
``iat`` (numbers, never strings; checked here against the verifier's clock with a small skew),
the issuer, the audience, and a subject. The scopes come from ``scope`` (a space-separated
string) or ``scp`` (a list); groups from ``groups``.

``AuthMiddleware`` answers what the MCP authorization spec asks of a resource server: ``401`` with
``WWW-Authenticate: Bearer resource_metadata="..."`` (RFC 9728) when the token is missing or
invalid, ``403`` with ``error="insufficient_scope"`` when it lacks a scope. Tokens are never
logged and never echoed; a refusal names only the reason (expired, wrong audience, ...).
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

import jwt
import structlog
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from pdf_airlock.server.app.principal import Principal
from pdf_airlock.server.http.jwks import FileKeys, KeyUnavailable, RemoteKeys, load_keys
from pdf_airlock.server.http.options import AuthConfig

__all__ = [
    "ALLOWED_ALGORITHMS",
    "AuthMiddleware",
    "InvalidToken",
    "JwtVerifier",
    "principal_of",
]

log = structlog.get_logger(__name__)

# Asymmetric only: with an HMAC algorithm a public key from the JWKS would become a signing secret.
ALLOWED_ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
CLOCK_SKEW_S: Final = 30  # leeway on exp / nbf / iat between the issuer's clock and ours
MAX_TOKEN_CHARS: Final = 16 * 1024  # a longer Authorization header is refused unparsed
VERIFIED_MEMO: Final = 4096  # verified tokens remembered (by sha256) until they expire
_REQUIRED_CLAIMS: Final = ("exp", "iss", "aud", "sub")
_TIME_CLAIMS: Final = ("exp", "nbf", "iat")
_MAX_GROUPS: Final = 256
_MAX_SCOPES: Final = 256


class InvalidToken(Exception):
    """A bearer token was refused; ``str(exc)`` is a reason safe to show and log."""


_REASONS: Final[tuple[tuple[type[Exception], str], ...]] = (
    (jwt.ExpiredSignatureError, "token expired"),
    (jwt.ImmatureSignatureError, "token not yet valid"),
    (jwt.InvalidAudienceError, "token is for another audience"),
    (jwt.InvalidIssuerError, "token is from another issuer"),
    (jwt.InvalidSignatureError, "token signature does not verify"),
    (jwt.MissingRequiredClaimError, "token lacks a required claim"),
    (jwt.InvalidAlgorithmError, "token algorithm not allowed"),
)


def _reason(exc: Exception) -> str:
    for kind, reason in _REASONS:
        if isinstance(exc, kind):
            return reason
    return "token is malformed"


def _strings(value: object, limit: int) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(value.split()[:limit])
    if isinstance(value, list):
        return tuple(str(item) for item in value[:limit] if isinstance(item, str))
    return ()


def _seconds(claims: dict[str, Any], name: str) -> float | None:
    """A time claim as a number of seconds, None if absent; a string, a boolean or a value that
    is not finite is malformed (PyJWT alone would take ``"1700000000"``)."""
    value = claims.get(name)
    if value is None and name not in claims:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidToken("token is malformed")
    return float(value)


@dataclass(frozen=True, slots=True)
class _Verified:
    """A token that verified: its principal and claims, when it expires, and the key it was
    checked with (a remembered token is good only while that key is still current)."""

    principal: Principal
    claims: dict[str, Any]
    expires: float
    kid: str | None
    key: jwt.PyJWK


class JwtVerifier:
    """Checks a bearer JWT and returns its principal; raises ``InvalidToken``.

    A token that verified is remembered by its sha256 (``VERIFIED_MEMO`` entries) until it
    expires, so an agent's every request does not pay the signature check again (about a
    quarter of a millisecond: the "Streamable HTTP beside stdio" rows of docs/performance.md).
    Its expiry is checked on every use, and so is its key: once a refresh of a JWKS URL has
    dropped the key, remembered tokens signed by it are refused like new ones.

    ``clock`` gives the time tokens are checked against (seconds since the epoch);
    ``monotonic`` times a JWKS URL's refreshes.
    """

    def __init__(
        self,
        config: AuthConfig,
        clock: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.keys: FileKeys | RemoteKeys = load_keys(
            config.jwks, config.jwks_refresh_s, config.jwks_cooldown_s, monotonic
        )
        self._clock = clock
        self._verified: OrderedDict[bytes, _Verified] = OrderedDict()

    async def verify(self, token: str) -> tuple[Principal, dict[str, Any]]:
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidToken("token is too long")
        digest = hashlib.sha256(token.encode()).digest()
        known = self._verified.get(digest)
        if known is not None:
            if known.expires + CLOCK_SKEW_S > self._clock() and self.keys.current(known.kid) is known.key:
                self._verified.move_to_end(digest)
                return known.principal, known.claims
            del self._verified[digest]
        verified = await self._verify(token)
        self._verified[digest] = verified
        while len(self._verified) > VERIFIED_MEMO:
            self._verified.popitem(last=False)
        return verified.principal, verified.claims

    async def _verify(self, token: str) -> _Verified:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken("token is malformed") from exc
        algorithm = header.get("alg")
        if algorithm not in ALLOWED_ALGORITHMS:
            raise InvalidToken("token algorithm not allowed")
        kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        try:
            key = await self.keys.get(kid)
        except KeyUnavailable as exc:
            raise InvalidToken(str(exc)) from exc
        if key.algorithm_name != algorithm:  # the key says which algorithm it signs with
            raise InvalidToken("token algorithm not allowed")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                audience=self.config.audience,
                issuer=self.config.issuer,
                # Times are checked below, against ``self._clock`` and as numbers only.
                options={
                    "require": list(_REQUIRED_CLAIMS),
                    "verify_exp": False,
                    "verify_nbf": False,
                    "verify_iat": False,
                },
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(_reason(exc)) from exc
        expires = self._check_times(claims)
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject:
            raise InvalidToken("token lacks a required claim")
        scopes = _strings(claims.get("scope"), _MAX_SCOPES) or _strings(claims.get("scp"), _MAX_SCOPES)
        principal = Principal(
            subject=subject,
            issuer=self.config.issuer,
            groups=_strings(claims.get("groups"), _MAX_GROUPS),
            scopes=frozenset(scopes),
        )
        return _Verified(principal, claims, expires, kid, key)

    def _check_times(self, claims: dict[str, Any]) -> float:
        """``exp``, ``nbf`` and ``iat`` against the clock, with ``CLOCK_SKEW_S``; the expiry."""
        times = {name: _seconds(claims, name) for name in _TIME_CLAIMS}
        now = self._clock()
        expires = times["exp"]
        if expires is None:  # required, so PyJWT refused it already
            raise InvalidToken("token lacks a required claim")
        if expires + CLOCK_SKEW_S <= now:
            raise InvalidToken("token expired")
        for name in ("nbf", "iat"):
            start = times[name]
            if start is not None and start - CLOCK_SKEW_S > now:
                raise InvalidToken("token not yet valid")
        return expires


def principal_of(scope: Scope) -> Principal | None:
    """The principal ``AuthMiddleware`` put on this request, if any."""
    value = scope.get("pdf_airlock.principal")
    return value if isinstance(value, Principal) else None


def challenge(metadata_url: str, *, error: str | None = None, description: str = "", scope: str = "") -> str:
    """The ``WWW-Authenticate`` value of a refusal (RFC 6750 section 3, RFC 9728 section 5.1)."""
    parts = []
    if error is not None:
        parts.append(f'error="{error}"')
        if description:
            parts.append(f'error_description="{description}"')
    if scope:
        parts.append(f'scope="{scope}"')
    parts.append(f'resource_metadata="{metadata_url}"')
    return "Bearer " + ", ".join(parts)


async def send_refusal(send: Send, status: int, www_authenticate: str, body: dict[str, str]) -> None:
    """A small JSON refusal with its ``WWW-Authenticate`` header."""
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(payload)).encode()),
                (b"www-authenticate", www_authenticate.encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


class AuthMiddleware:
    """Requires a valid bearer token with the base scope on every request it wraps."""

    def __init__(
        self,
        app: ASGIApp,
        verifier: JwtVerifier,
        metadata_url: str,
        on_refusal: Callable[[int], None] | None = None,
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.metadata_url = metadata_url
        self.on_refusal = on_refusal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        token = _bearer(scope["headers"])
        if token is None:
            await self._refuse(send, 401, challenge(self.metadata_url), "authentication required")
            return
        try:
            principal, claims = await self.verifier.verify(token)
        except InvalidToken as exc:
            log.info("token_refused", reason=str(exc))
            header = challenge(self.metadata_url, error="invalid_token", description=str(exc))
            await self._refuse(send, 401, header, str(exc), "invalid_token")
            return
        required = self.verifier.config.required_scope
        if required not in principal.scopes:
            log.info("token_refused", reason="insufficient_scope", subject=principal.subject)
            header = challenge(
                self.metadata_url, error="insufficient_scope", description="scope required", scope=required
            )
            await self._refuse(send, 403, header, f"scope {required} required", "insufficient_scope")
            return
        access = AccessToken(
            token=token,
            client_id=str(claims.get("client_id") or claims.get("azp") or principal.subject),
            scopes=sorted(principal.scopes),
            expires_at=int(claims["exp"]),  # a number: ``_check_times``
            subject=principal.subject,
            claims={"iss": principal.issuer},
        )
        scope["user"] = AuthenticatedUser(access)
        scope["auth"] = AuthCredentials(sorted(principal.scopes))
        scope["pdf_airlock.principal"] = principal
        await self.app(scope, receive, send)

    async def _refuse(
        self, send: Send, status: int, header: str, description: str, error: str = "unauthorized"
    ) -> None:
        if self.on_refusal is not None:
            self.on_refusal(status)
        await send_refusal(send, status, header, {"error": error, "error_description": description})


def _bearer(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    for name, value in headers:
        if name == b"authorization":
            text = value.decode("latin-1")
            scheme, _, token = text.partition(" ")
            if scheme.lower() == "bearer" and token.strip():
                return token.strip()
            return None
    return None
