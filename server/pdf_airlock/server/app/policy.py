"""Per-principal policy: which roots a caller may read, how many calls it may run at once and how
fast, and what happens to risky actions (``--policy FILE``, TOML).

```toml
[defaults]                 # every principal no rule below matches
roots = []                 # no paths (inline ``data`` only); omit the table: the server's --root
concurrency = 4
rate_per_minute = 120

[[principal]]              # matched by subject first, then by the first group the token names
subject = "alice"
roots = ["/data/alice"]

[[principal]]
group = "finance"
roots = ["/data/finance"]
concurrency = 8

[approval]
attachments = true         # extracting an attachment asks the human (MCP elicitation)
high_risk = true           # so does reading a document the security triage rates high
without_elicitation = "deny"   # a client that cannot ask: "deny", or "allow" (and audit)
```

Limits refuse with the typed, retryable ``overloaded`` error whose ``details.retry_after_s`` says
when to try again. Opening an MCP session (``initialize``) spends a token of the rate too
(``pdf_airlock.server.http.admission``, refused ``429`` there). Without a policy file every
principal reads the server's ``--root`` with no limits but the pool's and ``admission``'s.
"""

from __future__ import annotations

import math
import time
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from pdf_airlock.server.app.principal import Principal
from pdf_airlock.server.boundary.paths import PathPolicy
from pdf_airlock.server.errors import ToolError

__all__ = ["Approval", "Limiter", "Policy", "PolicyError", "Rule", "load_policy"]

FALLBACKS: Final = ("deny", "allow")
CONCURRENCY_RETRY_S: Final = 1.0  # retry hint when a principal's concurrency is spent
_RULE_KEYS: Final = frozenset({"subject", "group", "roots", "concurrency", "rate_per_minute"})
_APPROVAL_KEYS: Final = frozenset({"attachments", "high_risk", "without_elicitation"})
_MAX_BUCKETS: Final = 10_000  # principals with rate state kept; the oldest are forgotten past it


class PolicyError(ValueError):
    """The policy file is invalid; the message names the problem, never a secret."""


@dataclass(frozen=True, slots=True)
class Rule:
    """What one principal (or everyone a rule matches) may do."""

    name: str
    roots: tuple[Path, ...]
    concurrency: int | None = None
    rate_per_minute: float | None = None


@dataclass(frozen=True, slots=True)
class Approval:
    """Which actions ask the human first, and what a client that cannot ask gets."""

    attachments: bool = True
    high_risk: bool = True
    without_elicitation: Literal["deny", "allow"] = "deny"


@dataclass(slots=True)
class Policy:
    """The loaded policy: rules by subject and by group, the default rule, approvals."""

    default: Rule
    subjects: dict[str, Rule] = field(default_factory=dict)
    groups: dict[str, Rule] = field(default_factory=dict)
    approval: Approval = field(default_factory=Approval)
    max_file_bytes: int = 0
    _paths: dict[str, PathPolicy] = field(default_factory=dict)

    def rule_for(self, principal: Principal | None) -> Rule:
        if principal is None:
            return self.default
        rule = self.subjects.get(principal.subject)
        if rule is not None:
            return rule
        for group in principal.groups:
            rule = self.groups.get(group)
            if rule is not None:
                return rule
        return self.default

    def paths_for(self, rule: Rule) -> PathPolicy:
        """One path policy per rule, built once (it memoises document hashes)."""
        paths = self._paths.get(rule.name)
        if paths is None:
            paths = self._paths[rule.name] = PathPolicy(rule.roots, self.max_file_bytes)
        return paths


def _roots(value: object, where: str) -> tuple[Path, ...]:
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise PolicyError(f"{where}: roots must be a list of directory paths")
    roots = tuple(Path(item) for item in value)
    for root in roots:
        if not root.is_absolute() or not root.is_dir():
            raise PolicyError(f"{where}: root {str(root)[:200]} is not an absolute directory")
    return roots


def _positive(value: object, where: str, name: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise PolicyError(f"{where}: {name} must be a positive number")
    return float(value)


def _rule(table: object, where: str, name: str, default_roots: Sequence[Path]) -> Rule:
    if not isinstance(table, dict):
        raise PolicyError(f"{where} must be a table")
    unknown = sorted(set(table) - _RULE_KEYS)
    if unknown:
        raise PolicyError(f"{where}: unknown key(s) {', '.join(unknown)}")
    roots = _roots(table["roots"], where) if "roots" in table else tuple(default_roots)
    concurrency = _positive(table.get("concurrency"), where, "concurrency")
    return Rule(
        name=name,
        roots=roots,
        concurrency=None if concurrency is None else math.ceil(concurrency),
        rate_per_minute=_positive(table.get("rate_per_minute"), where, "rate_per_minute"),
    )


def _approval(table: object) -> Approval:
    if not isinstance(table, dict):
        raise PolicyError("[approval] must be a table")
    unknown = sorted(set(table) - _APPROVAL_KEYS)
    if unknown:
        raise PolicyError(f"[approval]: unknown key(s) {', '.join(unknown)}")
    fallback = table.get("without_elicitation", "deny")
    if fallback not in FALLBACKS:
        raise PolicyError('[approval]: without_elicitation must be "deny" or "allow"')
    flags = {key: table.get(key, True) for key in ("attachments", "high_risk")}
    if not all(isinstance(flag, bool) for flag in flags.values()):
        raise PolicyError("[approval]: attachments and high_risk are true or false")
    return Approval(
        attachments=flags["attachments"], high_risk=flags["high_risk"], without_elicitation=fallback
    )


def load_policy(path: Path | None, server_roots: Sequence[Path], max_file_bytes: int) -> Policy:
    """The policy in ``path`` (``PolicyError`` if invalid), or the open default without one."""
    if path is None:
        return Policy(default=Rule("default", tuple(server_roots)), max_file_bytes=max_file_bytes)
    try:
        data: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(f"cannot read the policy file: {type(exc).__name__}: {str(exc)[:200]}") from exc
    unknown = sorted(set(data) - {"defaults", "principal", "approval"})
    if unknown:
        raise PolicyError(f"unknown table(s) {', '.join(unknown)}")
    default = _rule(data.get("defaults", {}), "[defaults]", "default", server_roots)
    policy = Policy(default=default, max_file_bytes=max_file_bytes)
    entries = data.get("principal", [])
    if not isinstance(entries, list):
        raise PolicyError("[[principal]] must be an array of tables")
    for index, entry in enumerate(entries):
        where = f"[[principal]] #{index + 1}"
        if not isinstance(entry, dict) or ("subject" in entry) == ("group" in entry):
            raise PolicyError(f"{where}: give exactly one of subject or group")
        key = entry.get("subject", entry.get("group"))
        if not isinstance(key, str) or not key:
            raise PolicyError(f"{where}: subject or group must be a non-empty string")
        target = policy.subjects if "subject" in entry else policy.groups
        kind = "subject" if "subject" in entry else "group"
        if key in target:
            raise PolicyError(f"{where}: {kind} {key[:100]!r} has two rules")
        target[key] = _rule(entry, where, f"{kind}:{key}", default.roots)
    if "approval" in data:
        policy.approval = _approval(data["approval"])
    return policy


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float
    in_flight: int = 0
    bodies: int = 0  # large request bodies being received or handled (``take_body``)


class Limiter:
    """Per-principal concurrency and rate (a token bucket holding a minute's worth of calls), and
    the large request bodies each principal has in flight."""

    def __init__(self, clock: Any = time.monotonic) -> None:
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def _bucket(self, key: str, rule: Rule) -> _Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            capacity = rule.rate_per_minute or 0.0
            bucket = self._buckets[key] = _Bucket(tokens=capacity, stamp=self._clock())
            if len(self._buckets) > _MAX_BUCKETS:
                idle = next(
                    (k for k, b in self._buckets.items() if b.in_flight == b.bodies == 0 and k != key),
                    None,
                )
                if idle is not None:
                    del self._buckets[idle]
        return bucket

    def acquire(self, key: str, rule: Rule) -> None:
        """Take a slot for one call, or raise ``overloaded`` with ``retry_after_s``."""
        bucket = self._bucket(key, rule)
        if rule.concurrency is not None and bucket.in_flight >= rule.concurrency:
            raise ToolError(
                "overloaded",
                f"{rule.concurrency} call(s) of this principal are running; retry later",
                {"retry_after_s": CONCURRENCY_RETRY_S, "limit": "concurrency"},
            )
        self._spend(bucket, rule)
        bucket.in_flight += 1

    def take_rate(self, key: str, rule: Rule) -> None:
        """Spend one of the rate's tokens without taking a call's slot (opening a session), or
        raise ``overloaded``."""
        self._spend(self._bucket(key, rule), rule)

    def _spend(self, bucket: _Bucket, rule: Rule) -> None:
        if rule.rate_per_minute is None:
            return
        now = self._clock()
        per_second = rule.rate_per_minute / 60.0
        bucket.tokens = min(rule.rate_per_minute, bucket.tokens + (now - bucket.stamp) * per_second)
        bucket.stamp = now
        if bucket.tokens < 1.0:
            wait = round((1.0 - bucket.tokens) / per_second, 3)
            raise ToolError(
                "overloaded",
                f"rate limit of {rule.rate_per_minute:g} calls a minute reached; retry later",
                {"retry_after_s": wait, "limit": "rate"},
            )
        bucket.tokens -= 1.0

    def release(self, key: str) -> None:
        bucket = self._buckets.get(key)
        if bucket is not None and bucket.in_flight > 0:
            bucket.in_flight -= 1

    def take_body(self, key: str, rule: Rule, limit: int) -> bool:
        """Count one more large body of ``key`` in flight; False (and nothing counted) when
        ``limit`` are already."""
        bucket = self._bucket(key, rule)
        if bucket.bodies >= limit:
            return False
        bucket.bodies += 1
        return True

    def release_body(self, key: str) -> None:
        bucket = self._buckets.get(key)
        if bucket is not None and bucket.bodies > 0:
            bucket.bodies -= 1
