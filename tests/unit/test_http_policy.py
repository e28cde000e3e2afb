"""The HTTP transport's policy file and per-principal limiter, directly."""

from __future__ import annotations

from pathlib import Path

import pytest

from pdf_airlock.server.app.policy import Limiter, PolicyError, Rule, load_policy
from pdf_airlock.server.app.principal import Principal
from pdf_airlock.server.errors import ToolError


def _policy(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text(text)
    return path


def test_rules_by_subject_then_group_then_default(tmp_path: Path) -> None:
    a, b, c = (tmp_path / name for name in "abc")
    for folder in (a, b, c):
        folder.mkdir()
    policy = load_policy(
        _policy(
            tmp_path,
            f'[defaults]\nroots = ["{c}"]\n\n[[principal]]\nsubject = "ann"\nroots = ["{a}"]\n\n'
            f'[[principal]]\ngroup = "team"\nroots = ["{b}"]\nconcurrency = 2\nrate_per_minute = 30\n',
        ),
        [tmp_path],
        1 << 20,
    )
    ann = Principal("ann", "iss", groups=("team",))
    bea = Principal("bea", "iss", groups=("other", "team"))
    cid = Principal("cid", "iss")
    assert policy.rule_for(ann).roots == (a,)  # the subject's rule wins over its group's
    assert policy.rule_for(bea) == Rule("group:team", (b,), 2, 30.0)
    assert policy.rule_for(cid).roots == (c,)
    assert policy.rule_for(None).roots == (c,)
    assert policy.paths_for(policy.rule_for(bea)) is policy.paths_for(policy.rule_for(bea))


def test_without_a_file_everyone_reads_the_server_roots(tmp_path: Path) -> None:
    policy = load_policy(None, [tmp_path], 1 << 20)
    assert policy.rule_for(Principal("x", "iss")).roots == (tmp_path,)
    assert policy.approval.without_elicitation == "deny"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[nonsense]\n", "unknown table"),
        ("[[principal]]\nroots = []\n", "exactly one of subject or group"),
        ('[[principal]]\nsubject = "a"\ngroup = "b"\n', "exactly one of subject or group"),
        ('[[principal]]\nsubject = "a"\nroots = ["relative"]\n', "not an absolute directory"),
        ('[[principal]]\nsubject = "a"\nconcurrency = 0\n', "concurrency must be a positive number"),
        ('[[principal]]\nsubject = "a"\n[[principal]]\nsubject = "a"\n', "has two rules"),
        ("[defaults]\nrate = 3\n", "unknown key(s) rate"),
        ('[approval]\nwithout_elicitation = "maybe"\n', 'must be "deny" or "allow"'),
        ("not toml = = =\n", "cannot read the policy file"),
    ],
)
def test_invalid_policies_are_refused(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(PolicyError, match=None) as raised:
        load_policy(_policy(tmp_path, text), [tmp_path], 1 << 20)
    assert problem in str(raised.value)


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_limiter_rate_and_concurrency() -> None:
    clock = _Clock()
    limiter = Limiter(clock)
    rule = Rule("r", (), concurrency=2, rate_per_minute=3)
    for _ in range(2):
        limiter.acquire("ann", rule)
    with pytest.raises(ToolError) as busy:
        limiter.acquire("ann", rule)
    assert busy.value.code == "overloaded" and busy.value.details["limit"] == "concurrency"
    limiter.release("ann")
    limiter.acquire("ann", rule)  # the third of three a minute
    limiter.release("ann")
    with pytest.raises(ToolError) as fast:
        limiter.acquire("ann", rule)
    assert fast.value.details == {"retry_after_s": 20.0, "limit": "rate"}
    limiter.acquire("bea", rule)  # another principal has its own budget
    clock.now += 20
    limiter.acquire("ann", rule)  # a token back after 60 / 3 seconds
