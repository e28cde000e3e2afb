"""``JwtVerifier`` driven directly, on explicit clocks: expiry, ``nbf``, ``iat``, issuer, audience,
scopes, algorithms, time claims that are not numbers, the memo of verified tokens; a JWKS URL
served by a fake identity provider on a real port of 127.0.0.1: key rotation, a withdrawn key,
unknown ``kid`` values, a failing provider and a hanging one; and ``AuthMiddleware`` in front of
an ASGI app, called in process (exact statuses, challenges and bodies).

The clocks are the verifier's: ``clock`` (seconds since the epoch, what ``exp`` is compared with)
and ``monotonic`` (what a JWKS URL's refresh and cooldown are timed with); a test moves them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import tracemalloc
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx2
import jwt
import pytest
import structlog
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from http_server import JwksProvider, jwk, jwks_provider
from jwt.algorithms import RSAAlgorithm

import pdf_airlock.server.http.auth
import pdf_airlock.server.http.jwks
from pdf_airlock.server.http.auth import (
    CLOCK_SKEW_S,
    MAX_TOKEN_CHARS,
    AuthMiddleware,
    InvalidToken,
    JwtVerifier,
    principal_of,
)
from pdf_airlock.server.http.jwks import (
    MAX_JWKS_BYTES,
    MAX_STALE_REFRESHES,
    FileKeys,
    RemoteKeys,
    fetch_jwks,
    load_keys,
)
from pdf_airlock.server.http.options import AuthConfig

pytestmark = pytest.mark.anyio

ISSUER = "https://issuer.test"
AUDIENCE = "https://pdf-airlock.test/mcp"
NOW = 1_900_000_000.0  # the token clock's "now"
REFRESH_S = 300.0
COOLDOWN_S = 30.0
RSA = rsa.generate_private_key(65537, 2048)
RSA_2 = rsa.generate_private_key(65537, 2048)
EC = ec.generate_private_key(ec.SECP256R1())


def token(kid: str = "rsa-1", key: Any = RSA, *, now: float = NOW, **claims: Any) -> str:
    body: dict[str, Any] = {
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "alice",
        "iat": int(now),
        "nbf": int(now),
        "exp": int(now) + 600,
        "scope": "pdf:read",
        "jti": uuid.uuid4().hex,
    }
    body.update(claims)
    body = {name: value for name, value in body.items() if value is not _DROP}
    algorithm = "ES256" if isinstance(key, ec.EllipticCurvePrivateKey) else "RS256"
    return jwt.encode(body, key, algorithm=algorithm, headers={"kid": kid})


_DROP = object()


@dataclass
class Clocks:
    time: float = NOW
    mono: float = 1_000_000.0  # far from 0: a sum of two times is no longer a small number

    def advance(self, seconds: float) -> None:
        self.time += seconds
        self.mono += seconds


def verifier_for(jwks: str, clocks: Clocks) -> JwtVerifier:
    config = AuthConfig(
        jwks, ISSUER, AUDIENCE, "pdf:read", jwks_refresh_s=REFRESH_S, jwks_cooldown_s=COOLDOWN_S
    )
    return JwtVerifier(config, clock=lambda: clocks.time, monotonic=lambda: clocks.mono)


async def refused(verifier: JwtVerifier, value: str) -> str:
    with pytest.raises(InvalidToken) as raised:
        await verifier.verify(value)
    return str(raised.value)


# -- a JWKS file -----------------------------------------------------------------------------


@pytest.fixture
def clocks() -> Clocks:
    return Clocks()


@pytest.fixture
def verifier(tmp_path: Path, clocks: Clocks) -> JwtVerifier:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk(RSA, "rsa-1"), jwk(EC, "ec-1")]}))
    return verifier_for(str(path), clocks)


async def test_a_valid_token_gives_its_principal(verifier: JwtVerifier) -> None:
    principal, claims = await verifier.verify(token(groups=["staff", 7, "finance"], scope="pdf:read pdf:x"))
    assert principal.subject == "alice"
    assert principal.issuer == ISSUER
    assert principal.groups == ("staff", "finance")  # strings only
    assert principal.scopes == frozenset({"pdf:read", "pdf:x"})
    assert claims["sub"] == "alice"
    ec_principal, _ = await verifier.verify(
        token("ec-1", EC, scope=_DROP, scp=["pdf:read", "pdf:attachments"])
    )
    assert ec_principal.scopes == frozenset({"pdf:read", "pdf:attachments"})
    bare, _ = await verifier.verify(token(scope=_DROP))
    assert bare.scopes == frozenset() and bare.groups == ()


async def test_expiry_is_checked_against_the_clock_with_the_skew(
    verifier: JwtVerifier, clocks: Clocks
) -> None:
    exp = int(NOW) + 60
    value = token(exp=exp)
    clocks.time = exp + CLOCK_SKEW_S - 1
    assert (await verifier.verify(value))[0].subject == "alice"
    clocks.time = exp + CLOCK_SKEW_S
    assert await refused(verifier, value) == "token expired"
    assert await refused(verifier, token(exp=int(NOW) - CLOCK_SKEW_S - 1)) == "token expired"


async def test_a_remembered_token_still_expires(verifier: JwtVerifier, clocks: Clocks) -> None:
    """The memo of verified tokens must not make a token valid for ever once it has been seen."""
    value = token(exp=int(NOW) + 10)
    for _ in range(3):
        await verifier.verify(value)  # remembered
    clocks.advance(10 + CLOCK_SKEW_S)
    assert await refused(verifier, value) == "token expired"
    assert await refused(verifier, value) == "token expired"  # and stays refused


async def test_nbf_and_iat_in_the_future(verifier: JwtVerifier, clocks: Clocks) -> None:
    later = int(NOW) + 100
    assert await refused(verifier, token(nbf=later)) == "token not yet valid"
    assert await refused(verifier, token(iat=later)) == "token not yet valid"
    clocks.time = later - CLOCK_SKEW_S
    assert (await verifier.verify(token(nbf=later, iat=later)))[0].subject == "alice"
    assert (await verifier.verify(token(nbf=_DROP, iat=_DROP)))[0].subject == "alice"  # both optional


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({"iss": "https://evil-issuer.test"}, "token is from another issuer"),
        ({"aud": "https://other.test/mcp"}, "token is for another audience"),
        ({"sub": _DROP}, "token lacks a required claim"),
        ({"exp": _DROP}, "token lacks a required claim"),
        ({"iss": _DROP}, "token lacks a required claim"),
        ({"aud": _DROP}, "token lacks a required claim"),
        ({"sub": ""}, "token lacks a required claim"),
        ({"exp": "1999999999"}, "token is malformed"),
        ({"exp": True}, "token is malformed"),
        ({"exp": None}, "token lacks a required claim"),
        ({"nbf": "1"}, "token is malformed"),
        ({"nbf": None}, "token is malformed"),
        ({"iat": [1]}, "token is malformed"),
    ],
    ids=[
        "issuer",
        "audience",
        "no-sub",
        "no-exp",
        "no-iss",
        "no-aud",
        "empty-sub",
        "string-exp",
        "bool-exp",
        "null-exp",
        "string-nbf",
        "null-nbf",
        "list-iat",
    ],
)
async def test_claims_that_are_refused(verifier: JwtVerifier, claims: dict[str, Any], reason: str) -> None:
    assert await refused(verifier, token(**claims)) == reason


async def test_a_numeric_string_exp_is_refused_every_time(verifier: JwtVerifier) -> None:
    """It was accepted once, then answered 500 on its second use (the memo added a number to
    a string)."""
    value = token(exp=str(int(NOW) + 600))
    assert await refused(verifier, value) == "token is malformed"
    assert await refused(verifier, value) == "token is malformed"


async def test_algorithms_that_are_refused(verifier: JwtVerifier) -> None:
    public_pem = RSA.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    claims = jwt.decode(token(), options={"verify_signature": False})
    # The classic confusion, made by hand (PyJWT refuses to sign with a PEM as an HMAC secret).
    signing_input = (
        jwt.utils.base64url_encode(b'{"alg":"HS256","kid":"rsa-1"}') + b"." + token().split(".")[1].encode()
    )
    mac = hmac.new(public_pem, signing_input, hashlib.sha256).digest()
    hmac_with_public_key = (signing_input + b"." + jwt.utils.base64url_encode(mac)).decode()
    assert await refused(verifier, hmac_with_public_key) == "token algorithm not allowed"
    header = jwt.utils.base64url_encode(b'{"alg":"none","kid":"rsa-1"}').decode()
    unsigned = header + "." + token().split(".")[1] + "."
    assert await refused(verifier, unsigned) == "token algorithm not allowed"
    wrong_key_alg = jwt.encode(claims, EC, algorithm="ES256", headers={"kid": "rsa-1"})
    assert await refused(verifier, wrong_key_alg) == "token algorithm not allowed"
    assert await refused(verifier, token(key=RSA_2)) == "token signature does not verify"
    assert await refused(verifier, token("rsa-9")) == "token is signed by an unknown key"
    assert await refused(verifier, "not-a-jwt") == "token is malformed"
    assert await refused(verifier, "x" * (MAX_TOKEN_CHARS + 1)) == "token is too long"


async def test_a_file_with_one_key_verifies_a_token_without_kid(tmp_path: Path, clocks: Clocks) -> None:
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk(RSA, "rsa-1")]}))
    verifier = verifier_for(str(path), clocks)
    claims = jwt.decode(token(), options={"verify_signature": False})
    no_kid = jwt.encode(claims, RSA, algorithm="RS256")
    assert (await verifier.verify(no_kid))[0].subject == "alice"


def test_a_bad_jwks_file_is_refused(tmp_path: Path, clocks: Clocks) -> None:
    path = tmp_path / "jwks.json"
    for text, why in (
        ("{not json", "JSONDecodeError"),
        ('{"keys": []}', "ValueError"),
        ('{"keys": [{"kty": "nope"}]}', "ValueError"),
        ("[]", "ValueError"),
    ):
        path.write_text(text)
        with pytest.raises(ValueError) as raised:
            verifier_for(str(path), clocks)
        assert str(raised.value) == f"cannot load the JWKS file {path}: {why}"
    with pytest.raises(ValueError) as raised:
        verifier_for(str(tmp_path / "missing.json"), clocks)
    assert str(raised.value) == f"cannot load the JWKS file {tmp_path / 'missing.json'}: FileNotFoundError"


# -- a JWKS URL ------------------------------------------------------------------------------


@pytest.fixture
def provider() -> Iterator[JwksProvider]:
    with jwks_provider([jwk(RSA, "rsa-1")]) as made:
        yield made


async def test_a_new_key_is_fetched_for_its_kid(provider: JwksProvider, clocks: Clocks) -> None:
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    assert provider.requests == 1
    await verifier.verify(token())
    assert provider.requests == 1  # the set is kept
    provider.keys.append(jwk(EC, "ec-1"))  # the provider rotates in a new key
    clocks.advance(COOLDOWN_S)
    assert (await verifier.verify(token("ec-1", EC)))[0].subject == "alice"
    assert provider.requests == 2


async def test_a_withdrawn_key_stops_verifying_at_the_next_refresh(
    provider: JwksProvider, clocks: Clocks
) -> None:
    """``PyJWKClient(cache_keys=True)`` kept every key it had seen until the server restarted."""
    verifier = verifier_for(provider.url, clocks)
    remembered = token(exp=int(NOW) + 3600)
    await verifier.verify(remembered)
    provider.keys = [jwk(RSA_2, "rsa-2")]  # rsa-1 withdrawn
    clocks.advance(REFRESH_S - 1)
    await verifier.verify(remembered)  # not yet refreshed
    await verifier.verify(token(now=clocks.time))
    assert provider.requests == 1
    clocks.advance(1)
    assert await refused(verifier, token(now=clocks.time)) == "token is signed by an unknown key"
    assert provider.requests == 2
    assert await refused(verifier, remembered) == "token is signed by an unknown key"
    assert (await verifier.verify(token("rsa-2", RSA_2, now=clocks.time)))[0].subject == "alice"
    assert provider.requests == 2


async def test_unknown_kids_fetch_at_most_once_per_cooldown(provider: JwksProvider, clocks: Clocks) -> None:
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    for n in range(20):
        assert await refused(verifier, token(f"made-up-{n}")) == "token is signed by an unknown key"
    assert provider.requests == 1  # within the cooldown of the first fetch
    clocks.advance(COOLDOWN_S)
    assert await refused(verifier, token("made-up-a")) == "token is signed by an unknown key"
    assert provider.requests == 2
    assert await refused(verifier, token("made-up-b")) == "token is signed by an unknown key"
    assert provider.requests == 2


async def test_a_kid_found_missing_is_not_fetched_for_again_until_the_refresh(
    provider: JwksProvider, clocks: Clocks
) -> None:
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    clocks.advance(COOLDOWN_S)
    assert await refused(verifier, token("rsa-new")) == "token is signed by an unknown key"
    assert provider.requests == 2
    for _ in range(5):
        clocks.advance(COOLDOWN_S)  # the cooldown would allow a fetch; the kid is known missing
        assert (
            await refused(verifier, token("rsa-new", now=clocks.time)) == "token is signed by an unknown key"
        )
    assert provider.requests == 2
    provider.keys.append(jwk(RSA_2, "rsa-new"))
    clocks.advance(REFRESH_S)  # the refresh finds it
    assert (await verifier.verify(token("rsa-new", RSA_2, now=clocks.time)))[0].subject == "alice"
    assert provider.requests == 3


async def test_a_failing_provider_is_asked_once_per_cooldown(provider: JwksProvider, clocks: Clocks) -> None:
    provider.status = 500
    verifier = verifier_for(provider.url, clocks)
    for _ in range(10):
        assert await refused(verifier, token()) == "the signing keys cannot be fetched"
    assert provider.requests == 1  # a failure is followed by the cooldown too
    clocks.advance(COOLDOWN_S)
    provider.status = 200
    assert (await verifier.verify(token(now=clocks.time)))[0].subject == "alice"
    assert provider.requests == 2


async def test_a_failing_refresh_keeps_the_last_set_for_a_while(
    provider: JwksProvider, clocks: Clocks
) -> None:
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    provider.status = 503
    clocks.advance(REFRESH_S)
    assert (await verifier.verify(token(now=clocks.time)))[0].subject == "alice"  # stale, still served
    assert provider.requests == 2
    clocks.advance(REFRESH_S * MAX_STALE_REFRESHES)
    assert await refused(verifier, token(now=clocks.time)) == "the signing keys cannot be fetched"


@pytest.mark.parametrize("kind", ["redirect", "oversized", "not-a-set", "garbage"])
async def test_key_sets_that_are_not_taken(provider: JwksProvider, clocks: Clocks, kind: str) -> None:
    if kind == "redirect":
        provider.status, provider.location = 302, provider.url
    elif kind == "oversized":
        provider.body = json.dumps({"keys": [jwk(RSA, "rsa-1")], "pad": "x" * MAX_JWKS_BYTES}).encode()
    elif kind == "not-a-set":
        provider.body = b'["keys"]'
    else:
        provider.body = b"\x00\xff not json"
    verifier = verifier_for(provider.url, clocks)
    assert await refused(verifier, token()) == "the signing keys cannot be fetched"
    assert provider.requests == 1  # a redirect is not followed


async def test_a_hanging_provider_holds_neither_threads_nor_known_keys(
    provider: JwksProvider, clocks: Clocks
) -> None:
    """While a fetch hangs, tokens with unknown kids wait for that one fetch (no second one),
    a token with a known kid verifies at once, and the fetch holds no thread of the default
    limiter (the one document opening uses)."""
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    clocks.advance(COOLDOWN_S)
    provider.hold = threading.Event()
    outcomes: list[str] = []

    async def stranger(n: int) -> None:
        outcomes.append(await refused(verifier, token(f"made-up-{n}")))

    async with anyio.create_task_group() as group:
        for n in range(20):
            group.start_soon(stranger, n)
        with anyio.fail_after(30):
            while provider.waiting == 0:
                await anyio.sleep(0.01)
        assert (await verifier.verify(token(now=clocks.time)))[0].subject == "alice"
        assert anyio.to_thread.current_default_thread_limiter().borrowed_tokens == 0
        assert provider.requests == 2 and provider.waiting == 1
        clocks.advance(COOLDOWN_S)  # the fetch outlasts the cooldown: it runs from its end
        provider.hold.set()
    assert outcomes == ["token is signed by an unknown key"] * 20
    assert provider.requests == 2


async def test_a_known_key_is_not_held_up_by_a_hanging_refresh(
    provider: JwksProvider, clocks: Clocks
) -> None:
    """The set is due for a refresh and the provider hangs: the request that fetches waits for
    it, the others go on with the set in hand."""
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    clocks.advance(REFRESH_S)
    provider.hold = threading.Event()
    async with anyio.create_task_group() as group:
        group.start_soon(verifier.verify, token(now=clocks.time))  # fetches, and waits
        with anyio.fail_after(30):
            while provider.waiting == 0:
                await anyio.sleep(0.01)
        assert (await verifier.verify(token(now=clocks.time)))[0].subject == "alice"
        assert provider.waiting == 1
        provider.hold.set()
    assert provider.requests == 2


# -- the middleware, over an in-process ASGI call --------------------------------------------

METADATA = "https://pdf-airlock.test/.well-known/oauth-protected-resource/mcp"


async def _behind_auth(scope: Any, receive: Any, send: Any) -> None:
    """What the middleware lets through: it answers with what it was given."""
    principal = principal_of(scope)
    user = scope["user"].access_token
    request = await receive()  # the request body reaches the app
    body = json.dumps(
        {
            "subject": principal.subject if principal else None,
            "scopes": sorted(principal.scopes) if principal else None,
            "auth": sorted(scope["auth"].scopes),
            "client_id": user.client_id,
            "expires_at": user.expires_at,
            "token": user.token,
            # What the SDK's session manager compares to keep a session to its principal.
            "token_subject": user.subject,
            "token_claims": user.claims,
            "body": request["body"].decode(),
        }
    ).encode()
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]}
    )
    await send({"type": "http.response.body", "body": body})


@pytest.fixture
def refusals() -> list[int]:
    return []


@pytest.fixture
def through(verifier: JwtVerifier, refusals: list[int]) -> httpx2.AsyncClient:
    app = AuthMiddleware(_behind_auth, verifier, METADATA, refusals.append)
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://testserver")


async def test_no_token_is_401_naming_the_metadata(through: httpx2.AsyncClient, refusals: list[int]) -> None:
    for headers in ({}, {"Authorization": "Basic dXNlcjpwYXNz"}, {"Authorization": "Bearer   "}):
        answer = await through.get("/mcp", headers=headers)
        assert answer.status_code == 401
        assert answer.headers["www-authenticate"] == f'Bearer resource_metadata="{METADATA}"'
        assert answer.json() == {"error": "unauthorized", "error_description": "authentication required"}
    assert refusals == [401, 401, 401]


async def test_an_invalid_token_is_401_with_its_reason(
    through: httpx2.AsyncClient, refusals: list[int]
) -> None:
    answer = await through.get("/mcp", headers={"Authorization": f"Bearer {token(exp=int(NOW) - 600)}"})
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"] == (
        f'Bearer error="invalid_token", error_description="token expired", resource_metadata="{METADATA}"'
    )
    assert answer.json() == {"error": "invalid_token", "error_description": "token expired"}
    assert answer.headers["content-length"] == str(len(answer.content))
    assert refusals == [401]


async def test_a_token_without_the_base_scope_is_403(
    through: httpx2.AsyncClient, refusals: list[int]
) -> None:
    answer = await through.get("/mcp", headers={"Authorization": f"Bearer {token(scope='profile')}"})
    assert answer.status_code == 403
    assert answer.headers["www-authenticate"] == (
        'Bearer error="insufficient_scope", error_description="scope required", scope="pdf:read", '
        f'resource_metadata="{METADATA}"'
    )
    assert answer.json() == {"error": "insufficient_scope", "error_description": "scope pdf:read required"}
    assert refusals == [403]


async def test_a_valid_token_reaches_the_app_with_its_principal(
    through: httpx2.AsyncClient, refusals: list[int]
) -> None:
    value = token(scope="pdf:read pdf:attachments", azp="agent-7")
    for scheme in ("Bearer ", "bearer ", "Bearer  "):  # RFC 6750: one or more spaces
        answer = await through.post("/mcp", headers={"Authorization": f"{scheme}{value}"}, content=b"{}")
        assert answer.status_code == 200
        assert answer.json() == {
            "subject": "alice",
            "scopes": ["pdf:attachments", "pdf:read"],
            "auth": ["pdf:attachments", "pdf:read"],
            "client_id": "agent-7",
            "expires_at": int(NOW) + 600,
            "token": value,
            "token_subject": "alice",
            "token_claims": {"iss": ISSUER},
            "body": "{}",
        }
    plain = await through.get("/mcp", headers={"Authorization": f"Bearer {token(client_id='cli')}"})
    assert plain.json()["client_id"] == "cli"
    bare = await through.get("/mcp", headers={"Authorization": f"Bearer {token()}"})
    assert bare.json()["client_id"] == "alice"  # no client id claim: the subject
    assert refusals == []


async def test_a_non_http_scope_passes_untouched(verifier: JwtVerifier) -> None:
    seen: list[tuple[Any, ...]] = []
    receive, send = object(), object()

    async def app(scope: Any, got_receive: Any, got_send: Any) -> None:
        seen.append((scope["type"], got_receive, got_send))

    await AuthMiddleware(app, verifier, METADATA)({"type": "lifespan"}, receive, send)  # type: ignore[arg-type]
    assert seen == [("lifespan", receive, send)]
    assert principal_of({"pdf_airlock.principal": "alice"}) is None  # only a Principal counts


async def test_refusals_are_logged_with_their_reason_never_the_token(through: httpx2.AsyncClient) -> None:
    expired, narrow = token(exp=int(NOW) - 600), token(scope="profile")
    with structlog.testing.capture_logs() as logs:
        await through.get("/mcp", headers={"Authorization": f"Bearer {expired}"})
        await through.get("/mcp", headers={"Authorization": f"Bearer {narrow}"})
    assert logs == [
        {"event": "token_refused", "reason": "token expired", "log_level": "info"},
        {"event": "token_refused", "reason": "insufficient_scope", "subject": "alice", "log_level": "info"},
    ]
    assert expired not in repr(logs) and narrow not in repr(logs)


async def test_refusals_are_json(through: httpx2.AsyncClient) -> None:
    answer = await through.get("/mcp")
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["content-length"] == str(len(answer.content))


# -- the memo of verified tokens, limits, edges ----------------------------------------------


async def test_a_token_verified_once_is_remembered(verifier: JwtVerifier, clocks: Clocks) -> None:
    """The second use costs no signature check: the very same principal comes back, up to the
    last second of its skew."""
    value = token(exp=int(NOW) + 10)
    first = await verifier.verify(value)
    clocks.time = NOW + 10 + CLOCK_SKEW_S - 1
    again = await verifier.verify(value)
    assert again[0] is first[0] and again[1] is first[1]


async def test_the_memo_forgets_the_least_recently_used(
    verifier: JwtVerifier, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pdf_airlock.server.http.auth, "VERIFIED_MEMO", 2)
    a, b, c = token(), token(), token()
    first_a = (await verifier.verify(a))[0]
    first_b = (await verifier.verify(b))[0]
    assert (await verifier.verify(a))[0] is first_a  # a is now the most recent
    await verifier.verify(c)  # b goes
    assert (await verifier.verify(a))[0] is first_a
    assert (await verifier.verify(b))[0] is not first_b


async def test_limits_on_scopes_groups_and_length(verifier: JwtVerifier) -> None:
    many = [f"s{n}" for n in range(300)]
    principal, _ = await verifier.verify(token(scope=" ".join(many), groups=many))
    assert principal.scopes == frozenset(many[:256]) and principal.groups == tuple(many[:256])
    listed, _ = await verifier.verify(token(scope=_DROP, scp=many))
    assert listed.scopes == frozenset(many[:256])
    assert await refused(verifier, "x" * MAX_TOKEN_CHARS) == "token is malformed"  # long, not too long


async def test_a_signed_payload_that_is_not_json_is_malformed(verifier: JwtVerifier) -> None:
    signing_input = token().split(".")[0].encode() + b"." + jwt.utils.base64url_encode(b"not json")
    signature = RSAAlgorithm(RSAAlgorithm.SHA256).sign(signing_input, RSA)
    value = (signing_input + b"." + jwt.utils.base64url_encode(signature)).decode()
    assert await refused(verifier, value) == "token is malformed"


async def test_one_key_in_a_file_and_the_kid(tmp_path: Path, clocks: Clocks) -> None:
    """A lone key verifies a token that names no key, never one that names another key."""
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk(RSA, "rsa-1")]}))
    verifier = verifier_for(str(path), clocks)
    claims = jwt.decode(token(), options={"verify_signature": False})
    other = jwt.encode(claims, RSA, algorithm="RS256", headers={"kid": "rsa-9"})
    assert await refused(verifier, other) == "token is signed by an unknown key"


def test_load_keys_tells_a_url_from_a_file(tmp_path: Path) -> None:
    for url in ("https://idp.example/jwks.json", "http://127.0.0.1:1/jwks.json"):
        assert isinstance(load_keys(url, REFRESH_S, COOLDOWN_S, lambda: 0.0), RemoteKeys)
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps({"keys": [jwk(RSA, "rsa-1")]}))
    assert isinstance(load_keys(str(path), REFRESH_S, COOLDOWN_S, lambda: 0.0), FileKeys)


async def test_a_remembered_token_is_checked_against_the_current_set(
    provider: JwksProvider, clocks: Clocks
) -> None:
    verifier = verifier_for(provider.url, clocks)
    value = token(exp=int(NOW) + 3600)
    first = await verifier.verify(value)
    clocks.advance(REFRESH_S - 1)
    assert (await verifier.verify(value))[0] is first[0]  # remembered, the set still current
    assert provider.requests == 1
    clocks.advance(1)  # the set is due: the memo does not answer for it
    again = await verifier.verify(value)
    assert again[0] is not first[0] and provider.requests == 2


async def test_a_url_token_must_name_its_key(provider: JwksProvider, clocks: Clocks) -> None:
    verifier = verifier_for(provider.url, clocks)
    claims = jwt.decode(token(), options={"verify_signature": False})
    assert await refused(verifier, jwt.encode(claims, RSA, algorithm="RS256")) == "token names no key (kid)"


async def test_fetches_are_logged_and_counted(provider: JwksProvider, clocks: Clocks) -> None:
    verifier = verifier_for(provider.url, clocks)
    with structlog.testing.capture_logs() as logs:
        await verifier.verify(token())
        provider.status = 500
        clocks.advance(REFRESH_S)
        await verifier.verify(token(now=clocks.time))  # the stale set still serves
    assert logs == [
        {"event": "jwks_fetched", "url": provider.url, "keys": 1, "log_level": "info"},
        {"event": "jwks_fetch_failed", "url": provider.url, "reason": "HTTPError", "log_level": "warning"},
    ]
    assert isinstance(verifier.keys, RemoteKeys) and verifier.keys.fetches == provider.requests == 2
    assert provider.headers[-1]["accept"] == "application/json"
    assert provider.headers[-1]["user-agent"] == "pdf-airlock"


async def test_an_unknown_kid_inside_the_cooldown_is_not_remembered(
    provider: JwksProvider, clocks: Clocks
) -> None:
    """Refused without a fetch; not taken for missing, so once the cooldown is over a fetch may
    still find it."""
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    assert await refused(verifier, token("rsa-new", RSA_2)) == "token is signed by an unknown key"
    provider.keys.append(jwk(RSA_2, "rsa-new"))
    clocks.advance(COOLDOWN_S)
    assert (await verifier.verify(token("rsa-new", RSA_2, now=clocks.time)))[0].subject == "alice"


@pytest.mark.parametrize("fetch_fails", [False, True], ids=["fetch-succeeds", "fetch-fails"])
async def test_a_request_that_waited_for_a_fetch_takes_its_outcome(
    provider: JwksProvider, clocks: Clocks, fetch_fails: bool
) -> None:
    """Two unknown kids at once: one fetches, the other waits for that fetch. After a good
    fetch both are known missing (no fetch for either until the refresh); after a failed one
    neither is, and the next fetch may find them."""
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    clocks.advance(COOLDOWN_S)
    provider.hold = threading.Event()
    if fetch_fails:
        provider.status = 500
    async with anyio.create_task_group() as group:
        for kid in ("kid-a", "kid-b"):
            group.start_soon(refused, verifier, token(kid, RSA_2, now=clocks.time))
        with anyio.fail_after(30):
            while provider.waiting == 0:
                await anyio.sleep(0.01)
        await anyio.sleep(0.05)  # the second request is waiting on the lock
        provider.hold.set()
    provider.hold = None
    provider.status = 200
    provider.keys += [jwk(RSA_2, "kid-a"), jwk(RSA_2, "kid-b")]
    clocks.advance(COOLDOWN_S)
    if fetch_fails:  # each fetches now (the set it brings has the other one too)
        for kid in ("kid-b", "kid-a"):
            assert (await verifier.verify(token(kid, RSA_2, now=clocks.time)))[0].subject == "alice"
        assert provider.requests == 3
    else:
        for kid in ("kid-a", "kid-b"):
            assert (
                await refused(verifier, token(kid, RSA_2, now=clocks.time))
                == "token is signed by an unknown key"
            )
        assert provider.requests == 2


async def test_unknown_kids_remembered_are_bounded(
    provider: JwksProvider, clocks: Clocks, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pdf_airlock.server.http.jwks, "NEGATIVE_KIDS", 2)
    verifier = verifier_for(provider.url, clocks)
    await verifier.verify(token())
    for kid in ("old", "middle", "new"):
        clocks.advance(COOLDOWN_S)
        await refused(verifier, token(kid, RSA_2, now=clocks.time))
    assert provider.requests == 4
    provider.keys += [jwk(RSA_2, "old"), jwk(RSA_2, "new")]
    clocks.advance(COOLDOWN_S)
    assert (
        await refused(verifier, token("new", RSA_2, now=clocks.time)) == "token is signed by an unknown key"
    )
    assert provider.requests == 4  # still remembered
    assert (await verifier.verify(token("old", RSA_2, now=clocks.time)))[0].subject == "alice"
    assert provider.requests == 5  # the oldest was forgotten: fetched for again


def test_a_fetch_gives_up_after_its_timeout(provider: JwksProvider) -> None:
    provider.hold = threading.Event()
    with pytest.raises(TimeoutError):
        fetch_jwks(provider.url, timeout_s=0.2)
    provider.hold.set()


def test_a_key_set_of_exactly_the_cap_is_taken(provider: JwksProvider) -> None:
    document = json.dumps({"keys": [jwk(RSA, "rsa-1")]}).encode()
    provider.body = document + b" " * (MAX_JWKS_BYTES - len(document))
    assert list(fetch_jwks(provider.url)) == ["rsa-1"]
    provider.body += b" "
    with pytest.raises(ValueError, match=f"the key set is over {MAX_JWKS_BYTES} bytes"):
        fetch_jwks(provider.url)


def test_a_huge_key_set_is_not_read_whole(provider: JwksProvider) -> None:
    """A provider gone wrong (or an impostor on the way) sends 64 MiB: at most the cap is read."""
    provider.body = b"{" + b" " * (64 << 20) + b"}"
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match=f"the key set is over {MAX_JWKS_BYTES} bytes"):
            fetch_jwks(provider.url)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * MAX_JWKS_BYTES
