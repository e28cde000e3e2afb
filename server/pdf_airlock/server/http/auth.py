"""Bearer-token authorization: the HTTP transport as an OAuth 2.1 resource server.

Access tokens are JWTs checked offline against a JWKS (a file read at start, or a URL fetched and
cached by PyJWT's ``PyJWKClient``): the signature with an asymmetric algorithm the key itself
names (never ``none`` or an HMAC, which would let a public key sign), ``exp`` and ``nbf`` with a
small clock skew, the issuer, the audience, and a subject. The scopes come from ``scope`` (a
space-separated string) or ``scp`` (a list); groups from ``groups``.

``AuthMiddleware`` answers what the MCP authorization spec asks of a resource server: ``401`` with
``WWW-Authenticate: Bearer resource_metadata="..."`` (RFC 9728) when the token is missing or
invalid, ``403`` with ``error="insufficient_scope"`` when it lacks a scope. Tokens are never
logged and never echoed; a refusal names only the reason (expired, wrong audience, ...).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Final

import anyio.to_thread
import jwt
import structlog
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.authentication import AuthCredentials
from starlette.types import ASGIApp, Receive, Scope, Send

from pdf_airlock.server.app.principal import Principal
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
JWKS_CACHE_S: Final = 300  # a JWKS URL is fetched again after this long (key rotation)
JWKS_FETCH_TIMEOUT_S: Final = 10.0
MAX_TOKEN_CHARS: Final = 16 * 1024  # a longer Authorization header is refused unparsed
VERIFIED_MEMO: Final = 4096  # verified tokens remembered (by sha256) until they expire
_REQUIRED_CLAIMS: Final = ("exp", "iss", "aud", "sub")
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


class _Keys:
    """The signing keys: a JWKS file read once, or a URL through ``PyJWKClient``'s cache."""

    def __init__(self, source: str) -> None:
        self._client: jwt.PyJWKClient | None = None
        self._keys: dict[str | None, jwt.PyJWK] = {}
        if source.startswith(("https://", "http://")):
            self._client = jwt.PyJWKClient(
                source, cache_keys=True, lifespan=JWKS_CACHE_S, timeout=JWKS_FETCH_TIMEOUT_S
            )
            return
        try:
            keyset = jwt.PyJWKSet.from_json(Path(source).read_text(encoding="utf-8"))
        except (OSError, ValueError, jwt.PyJWKSetError, jwt.InvalidKeyError) as exc:
            raise ValueError(f"cannot load the JWKS file {source}: {type(exc).__name__}") from exc
        for key in keyset.keys:
            self._keys[key.key_id] = key

    async def get(self, kid: str | None) -> jwt.PyJWK:
        if self._client is not None:
            if kid is None:
                raise InvalidToken("token names no key (kid)")
            client = self._client
            try:
                return await anyio.to_thread.run_sync(client.get_signing_key, kid)
            except jwt.PyJWKClientError as exc:
                raise InvalidToken("token is signed by an unknown key") from exc
        key = self._keys.get(kid)
        if key is None and kid is None and len(self._keys) == 1:
            key = next(iter(self._keys.values()))
        if key is None:
            raise InvalidToken("token is signed by an unknown key")
        return key


class JwtVerifier:
    """Checks a bearer JWT and returns its principal; raises ``InvalidToken``.

    A token that verified is remembered by its sha256 (``VERIFIED_MEMO`` entries) until it
    expires, so an agent's every request does not pay the signature check again (about a
    quarter of a millisecond: the "Streamable HTTP beside stdio" rows of docs/performance.md).
    Its expiry is still checked on every use; a key withdrawn from a JWKS URL stops new tokens
    at once and remembered ones at their ``exp``.
    """

    def __init__(self, config: AuthConfig, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self._keys = _Keys(config.jwks)
        self._clock = clock
        self._verified: OrderedDict[bytes, tuple[Principal, dict[str, Any]]] = OrderedDict()

    async def verify(self, token: str) -> tuple[Principal, dict[str, Any]]:
        if len(token) > MAX_TOKEN_CHARS:
            raise InvalidToken("token is too long")
        digest = hashlib.sha256(token.encode()).digest()
        known = self._verified.get(digest)
        if known is not None:
            if known[1]["exp"] + CLOCK_SKEW_S > self._clock():
                self._verified.move_to_end(digest)
                return known
            del self._verified[digest]
        verified = await self._verify(token)
        self._verified[digest] = verified
        while len(self._verified) > VERIFIED_MEMO:
            self._verified.popitem(last=False)
        return verified

    async def _verify(self, token: str) -> tuple[Principal, dict[str, Any]]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise InvalidToken("token is malformed") from exc
        algorithm = header.get("alg")
        if algorithm not in ALLOWED_ALGORITHMS:
            raise InvalidToken("token algorithm not allowed")
        kid = header.get("kid")
        key = await self._keys.get(kid if isinstance(kid, str) else None)
        if key.algorithm_name != algorithm:  # the key says which algorithm it signs with
            raise InvalidToken("token algorithm not allowed")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.key,
                algorithms=[algorithm],
                audience=self.config.audience,
                issuer=self.config.issuer,
                leeway=CLOCK_SKEW_S,
                options={"require": list(_REQUIRED_CLAIMS)},
            )
        except jwt.PyJWTError as exc:
            raise InvalidToken(_reason(exc)) from exc
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
        return principal, claims


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
            expires_at=int(claims["exp"]),
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
