"""The signed ``requestState`` of a human's approval in the 2026-07-28 era.

That era has no server-to-client requests: a call that needs a human's approval answers with an
``InputRequiredResult`` (the question as an embedded ``elicitation/create`` and a
``requestState``), and the client calls again with the human's answer in ``inputResponses`` and
the ``requestState`` echoed. Everything the client echoes is untrusted, so the state is a token
this module signs and checks:

``"a1." base64url(body) "." base64url(tag)`` (unpadded), where the body is JSON ``{"v", "p",
"d", "t", "a", "x", "q", "g", "n", "e"}``: version, the principal (keyed digest), the
document's sha256, the tool, the arguments (keyed digest), the action asked about, the question
(keyed digest), the actions already approved in earlier rounds of the same call, a random
nonce, and the expiry (Unix seconds). The tag is HMAC-SHA256 of the body under a key drawn at
random when the process starts, or derived from ``--cache-key-file``'s secret (processes that
share the file take each other's tokens). A token is checked before its body is parsed, then
bound: it counts only for the same principal, document bytes, tool, arguments and action,
before its expiry (``--approval-state-ttl``), and once (its nonce is remembered until it
expires). The digests are keyed, so a token in a client's log gives away neither a password
nor who the principal is.

Why not the SDK's own pieces: an ``Elicit``-resolved parameter (``MCPServer``) is asked before the
tool runs, and this question depends on the document (its triage), opened in the call; the
SDK's ``RequestStateBoundary`` binds a state to the request's arguments and to the principal of
the SDK's own auth context (this server authenticates with its own middleware), but not to the
document's bytes, and lets a state be used again until it expires.

``redeem`` raises ``StateError`` naming what failed (``malformed``, ``signature``, ``expired``,
``principal``, ``document``, ``tool``, ``arguments``, ``replayed``): the audit event records it,
the client is told only ``invalid_state`` or ``expired``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["STATE_REASONS", "ApprovalStates", "Binding", "Claims", "StateError"]

_VERSION: Final = 1
_PREFIX: Final = "a1."
_SEPARATOR: Final = "."
_KEY_LABEL: Final = b"pdf-airlock approval state key"
_NONCE_BYTES: Final = 16
_DIGEST_CHARS: Final = 32
MAX_TOKEN_CHARS: Final = 4096  # a token this module signs is far shorter; a longer one is not parsed
MAX_GRANTED: Final = 8
# Nonces of redeemed tokens, kept until their tokens expire; past this many the oldest go first
# (a token minted and redeemed that long ago has expired under any sane --approval-state-ttl).
USED_MEMO: Final = 65_536
STATE_REASONS: Final = (
    "malformed",
    "signature",
    "expired",
    "principal",
    "document",
    "tool",
    "arguments",
    "replayed",
)


class StateError(Exception):
    """A ``requestState`` that does not count for this call; the message is one of
    ``STATE_REASONS`` (for the audit, never more)."""


@dataclass(frozen=True, slots=True)
class Binding:
    """What a token is bound to: who calls, on which bytes, with which tool and arguments."""

    principal: str
    sha256: str
    tool: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Claims:
    """A redeemed token: the action it asked about, that question's digest, and the actions
    approved in earlier rounds."""

    action: str
    question: str
    granted: tuple[str, ...]
    nonce: str


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _unb64(text: str) -> bytes:
    """Strict base64url: the one unpadded spelling ``_b64`` writes, or ValueError."""
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(raw) != text:
        raise ValueError("not canonical unpadded base64url")
    return raw


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


class ApprovalStates:
    """Issues and redeems the approval tokens of one server process."""

    def __init__(
        self, ttl_s: float, secret: bytes | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.ttl_s = ttl_s
        self._key = (
            hmac.new(secret, _KEY_LABEL, hashlib.sha256).digest() if secret else secrets.token_bytes(32)
        )
        self._clock = clock
        self._used: OrderedDict[str, float] = OrderedDict()  # nonce -> its token's expiry

    def digest(self, label: str, value: Any) -> str:
        """A keyed digest: the same for the same value in this process (and every process of the
        same key), nothing about the value to anyone without the key."""
        mac = hmac.new(self._key, label.encode() + b"\n" + _canonical(value), hashlib.sha256)
        return mac.hexdigest()[:_DIGEST_CHARS]

    def _tag(self, body: bytes) -> bytes:
        return hmac.new(self._key, _PREFIX.encode() + body, hashlib.sha256).digest()

    def issue(self, binding: Binding, action: str, question: str, granted: tuple[str, ...] = ()) -> str:
        """A token asking about ``action`` (its question's text ``question``) in this call."""
        body = {
            "v": _VERSION,
            "p": self.digest("principal", binding.principal),
            "d": binding.sha256,
            "t": binding.tool,
            "a": self.digest("arguments", dict(binding.arguments)),
            "x": action,
            "q": self.digest("question", question),
            "g": list(granted),
            "n": _b64(secrets.token_bytes(_NONCE_BYTES)),
            "e": round(self._clock() + self.ttl_s, 3),
        }
        raw = json.dumps(body, separators=(",", ":")).encode()
        return f"{_PREFIX}{_b64(raw)}{_SEPARATOR}{_b64(self._tag(raw))}"

    def redeem(self, token: object, binding: Binding) -> Claims:
        """The claims of ``token`` if it counts for this call, and it is spent; ``StateError``
        naming why not otherwise."""
        body = self._fields(self._checked(token))
        if not body["e"] > self._clock():
            raise StateError("expired")
        checks = (
            ("principal", body["p"] == self.digest("principal", binding.principal)),
            ("document", body["d"] == binding.sha256),
            ("tool", body["t"] == binding.tool),
            ("arguments", body["a"] == self.digest("arguments", dict(binding.arguments))),
        )
        for reason, holds in checks:
            if not holds:
                raise StateError(reason)
        self._spend(body["n"], float(body["e"]))
        return Claims(action=body["x"], question=body["q"], granted=tuple(body["g"]), nonce=body["n"])

    def question_digest(self, question: str) -> str:
        return self.digest("question", question)

    def _checked(self, token: object) -> bytes:
        """The body of a token this key signed, or ``StateError``; the tag is checked before
        anything in the body is read."""
        if not isinstance(token, str) or len(token) > MAX_TOKEN_CHARS or not token.startswith(_PREFIX):
            raise StateError("malformed")
        body_text, separator, tag_text = token[len(_PREFIX) :].partition(_SEPARATOR)
        try:
            body, tag = _unb64(body_text), _unb64(tag_text)
        except ValueError as exc:  # binascii.Error, a non-ASCII str
            raise StateError("malformed") from exc
        if not separator or not hmac.compare_digest(tag, self._tag(body)):
            raise StateError("signature")
        return body

    @staticmethod
    def _fields(body: bytes) -> dict[str, Any]:
        """The body's fields, each of its type (a body this key signed always is)."""
        try:
            fields: Any = json.loads(body)
        except (ValueError, RecursionError) as exc:
            raise StateError("malformed") from exc
        text = ("p", "d", "t", "a", "x", "q", "n")
        shaped = (
            isinstance(fields, dict)
            and fields.get("v") == _VERSION
            and all(isinstance(fields.get(name), str) for name in text)
            and isinstance(fields.get("e"), int | float)
            and not isinstance(fields.get("e"), bool)
            and isinstance(fields.get("g"), list)
            and len(fields["g"]) <= MAX_GRANTED
            and all(isinstance(action, str) for action in fields["g"])
        )
        if not shaped:
            raise StateError("malformed")
        return dict(fields)

    def _spend(self, nonce: str, expires: float) -> None:
        now = self._clock()
        while self._used and next(iter(self._used.values())) <= now:
            self._used.popitem(last=False)
        if nonce in self._used:
            raise StateError("replayed")
        self._used[nonce] = expires
        while len(self._used) > USED_MEMO:
            self._used.popitem(last=False)
