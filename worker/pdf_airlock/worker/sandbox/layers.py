"""Confinement of the job child, applied in order right after the zygote forks it: the one
place that shows the order. Each layer is one module: ``process`` (process group, fds,
environment, uid, no_new_privs), ``namespaces``, ``rlimits``, ``landlock``, ``seccomp``.

Assumes nothing about the document (it has not been read yet when this runs: the child is a
pre-forked spare, and the job's fds reach it over its spare socket only after every layer is
up). Layers, outermost first: own process group + parent-death signal; only the spare socket
(fd 5) open, later only fds 3 (input) and 4 (result);
environment allowlist; namespaces with an empty root (when the zygote's probe said they work);
rlimits; no_new_privs + not dumpable; Landlock; seccomp. Each layer is recorded as active,
unavailable (the kernel or container lacks it) or failed; a failure of a layer the supervisor
marked as required aborts the job before the document is read.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from pdf_airlock.worker.contract import SANDBOX_LAYERS, Limits
from pdf_airlock.worker.sandbox import landlock, namespaces
from pdf_airlock.worker.sandbox.process import (
    arm_parent_death,
    close_fds,
    detach,
    drop_privileges,
    no_new_privs,
    scrub_environment,
)
from pdf_airlock.worker.sandbox.rlimits import address_space_now, apply_rlimits
from pdf_airlock.worker.sandbox.seccomp import CompiledFilter

__all__ = [
    "CHILD_INPUT_FD",
    "CHILD_RESULT_FD",
    "LAYERS",
    "SPARE_SOCKET_FD",
    "Limits",
    "SandboxError",
    "SandboxPolicy",
    "SandboxReport",
    "enter_sandbox",
]

CHILD_INPUT_FD: Final = 3
CHILD_RESULT_FD: Final = 4
# The spare's end of its socketpair (the zygote passes the other end to the supervisor, which
# sends the job), kept while it waits for its job. Fds 3 and 4 stay free, so the job's two fds
# received over it land exactly there (the kernel installs received fds at the lowest free
# numbers); seccomp allows recvmsg on this fd number only.
SPARE_SOCKET_FD: Final = 5
LAYERS: Final = SANDBOX_LAYERS
SKIPPABLE: Final = frozenset({"namespaces", "landlock", "seccomp"})


class SandboxError(Exception):
    """A required layer could not be applied; the job must not run."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    """What the supervisor asks for, plus what the zygote learnt at start-up."""

    require: frozenset[str] = frozenset()
    skip: frozenset[str] = frozenset()
    net_namespace: bool = False
    namespaces_unavailable: str | None = None
    landlock_abi: int = 0
    seccomp: CompiledFilter | None = None
    seccomp_renewing_cpu: CompiledFilter | None = None  # for a child serving several jobs
    seccomp_unavailable: str | None = None

    @classmethod
    def from_job(cls, untrusted_spec: dict[str, Any], **probed: Any) -> SandboxPolicy:
        return cls(
            require=frozenset(str(x) for x in untrusted_spec.get("require", ())),
            skip=frozenset(str(x) for x in untrusted_spec.get("skip", ())) & SKIPPABLE,
            net_namespace=bool(untrusted_spec.get("net_namespace", False)),
            **probed,
        )


@dataclass(slots=True)
class SandboxReport:
    """Layer name -> "active", "active: detail", "unavailable: reason" or "failed: reason"."""

    layers: dict[str, str] = field(default_factory=dict)
    micros: dict[str, int] = field(default_factory=dict)


def _namespaces(policy: SandboxPolicy) -> str:
    if policy.namespaces_unavailable is not None:
        return f"unavailable: {policy.namespaces_unavailable}"
    return "active: " + "+".join(namespaces.enter_namespaces(policy.net_namespace))


def _landlock(policy: SandboxPolicy) -> str:
    if policy.landlock_abi <= 0:
        return "unavailable: the kernel has no Landlock"
    covered = landlock.restrict_self(policy.landlock_abi)
    return f"active: ABI {policy.landlock_abi}, denies " + ", ".join(covered)


def _seccomp(policy: SandboxPolicy, limits: Limits) -> str:
    compiled = policy.seccomp_renewing_cpu if limits.documents > 1 else policy.seccomp
    if compiled is None:
        return f"unavailable: {policy.seccomp_unavailable or 'not compiled'}"
    compiled.load()
    return "active: allowlist, kill by default"


def _rearmed(parent_pid: int, layer: Callable[[], str]) -> str:
    try:
        return layer()
    finally:
        arm_parent_death(parent_pid)


def enter_sandbox(
    parent_pid: int, keep_fds: Mapping[int, int], limits: Limits, policy: SandboxPolicy
) -> SandboxReport:
    """Apply every layer, outermost first. Raises SandboxError if a required layer is missing.

    ``keep_fds`` maps each fd that stays open to the number it must end up at."""
    report = SandboxReport()
    address_space = address_space_now()  # read before the root directory disappears
    steps: tuple[tuple[str, Callable[[], str]], ...] = (
        ("process_group", lambda: detach(parent_pid)),
        ("closed_fds", lambda: close_fds(keep_fds)),
        ("env_allowlist", scrub_environment),
        ("unprivileged_uid", lambda: _rearmed(parent_pid, drop_privileges)),
        ("namespaces", lambda: _rearmed(parent_pid, lambda: _namespaces(policy))),
        ("rlimits", lambda: apply_rlimits(limits, address_space)),
        ("no_new_privs", no_new_privs),
        ("landlock", lambda: _landlock(policy)),
        ("seccomp", lambda: _seccomp(policy, limits)),
    )
    for name, apply in steps:
        if name in policy.skip and name not in policy.require:
            report.layers[name] = "skipped"
            continue
        started = time.perf_counter_ns()
        try:
            report.layers[name] = apply()
        except OSError as exc:
            report.layers[name] = f"failed: {exc}"
        report.micros[name] = (time.perf_counter_ns() - started) // 1000
        if name in policy.require and not report.layers[name].startswith("active"):
            raise SandboxError(f"required layer {name} is {report.layers[name]}")
    return report
