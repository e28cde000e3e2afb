"""Every manifest under deploy/ is valid Kubernetes and hardened, checked offline.

Each YAML file under deploy/ (found anew on every run: a file added there is covered without
touching this test) is validated against the schemas of Kubernetes ``K8S_VERSION`` that
``kubernetes-validate`` ships (no cluster, no network), strictly (an unknown field is an
error). Every pod template in them runs as the image's non-root user with a read-only root,
no privilege escalation, no capabilities, a seccomp profile, no service account token and CPU
and memory limits. The batch Job's shard count and worker count agree with its completions and
its CPU limit.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from conftest import PROJECT

DEPLOY = PROJECT / "deploy"
# The oldest Kubernetes the manifests are meant for: Indexed Jobs with backoffLimitPerIndex and
# podFailurePolicy are GA there.
K8S_VERSION = "1.33.0"
MANIFESTS = sorted(path for pattern in ("*.yaml", "*.yml") for path in DEPLOY.rglob(pattern))
POD_TEMPLATE_KINDS = {"Job", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}
SECCOMP_TYPES = {"Localhost", "RuntimeDefault"}
PROFILE = PROJECT / "seccomp" / "profile.json"


def _resources(path: Path) -> list[dict[str, Any]]:
    return [document for document in yaml.safe_load_all(path.read_text()) if document]


def _all_resources() -> list[tuple[Path, dict[str, Any]]]:
    return [(path, resource) for path in MANIFESTS for resource in _resources(path)]


def _pod_spec(resource: dict[str, Any]) -> dict[str, Any] | None:
    if resource["kind"] == "Pod":
        return resource["spec"]  # type: ignore[no-any-return]
    if resource["kind"] == "CronJob":
        return resource["spec"]["jobTemplate"]["spec"]["template"]["spec"]  # type: ignore[no-any-return]
    if resource["kind"] in POD_TEMPLATE_KINDS:
        return resource["spec"]["template"]["spec"]  # type: ignore[no-any-return]
    return None


def _name(path: Path) -> str:
    return str(path.relative_to(DEPLOY))


def test_there_are_manifests() -> None:
    assert DEPLOY / "k8s" / "batch-job.yaml" in MANIFESTS
    assert DEPLOY / "k8s" / "batch-merge-job.yaml" in MANIFESTS


@pytest.mark.parametrize("path", MANIFESTS, ids=_name)
def test_manifest_is_valid_kubernetes(path: Path) -> None:
    resources = _resources(path)
    assert resources, f"{_name(path)} holds no resource"
    for resource in resources:
        # Raises ValidationError (a wrong field or type) or SchemaNotFoundError (an unknown kind).
        assert kubernetes_validate.validate(resource, K8S_VERSION, strict=True) == "1.33"


@pytest.mark.parametrize("path", MANIFESTS, ids=_name)
def test_pods_are_hardened(path: Path) -> None:
    for resource in _resources(path):
        pod = _pod_spec(resource)
        if pod is None:
            continue
        assert pod.get("automountServiceAccountToken") is False
        context = pod.get("securityContext", {})
        assert context.get("runAsNonRoot") is True
        assert context.get("seccompProfile", {}).get("type") in SECCOMP_TYPES
        for container in pod["containers"] + pod.get("initContainers", []):
            secure = container.get("securityContext", {})
            assert secure.get("readOnlyRootFilesystem") is True, container["name"]
            assert secure.get("allowPrivilegeEscalation") is False, container["name"]
            assert secure.get("privileged", False) is False, container["name"]
            assert secure.get("capabilities", {}).get("drop") == ["ALL"], container["name"]
            assert not secure.get("capabilities", {}).get("add"), container["name"]
            limits = container.get("resources", {}).get("limits", {})
            assert {"cpu", "memory"} <= set(limits), container["name"]


def _argument(arguments: list[str], flag: str) -> str:
    return arguments[arguments.index(flag) + 1]


def test_the_indexed_job_agrees_with_itself() -> None:
    [job] = _resources(DEPLOY / "k8s" / "batch-job.yaml")
    spec = job["spec"]
    [container] = spec["template"]["spec"]["containers"]
    arguments = container["args"]
    assert spec["completionMode"] == "Indexed"
    assert int(_argument(arguments, "--shards")) == spec["completions"]
    assert int(_argument(arguments, "--jobs")) == int(container["resources"]["limits"]["cpu"])
    assert "--shard" not in arguments  # the index comes from JOB_COMPLETION_INDEX
    profile = spec["template"]["spec"]["securityContext"]["seccompProfile"]
    assert Path(profile["localhostProfile"]).name == PROFILE.name and PROFILE.is_file()
    [merge] = _resources(DEPLOY / "k8s" / "batch-merge-job.yaml")
    [merger] = merge["spec"]["template"]["spec"]["containers"]
    assert merger["args"][:2] == ["batch-merge", _argument(arguments, "--out")]


def test_the_validator_catches_a_broken_manifest() -> None:
    """The check above can fail: a wrong type, and (strictly) an unknown field, are refused."""
    [job] = _resources(DEPLOY / "k8s" / "batch-job.yaml")
    wrong_type = copy.deepcopy(job)
    wrong_type["spec"]["parallelism"] = "sixteen"
    unknown_field = copy.deepcopy(job)
    unknown_field["spec"]["template"]["spec"]["containers"][0]["securityContex"] = {}
    for broken in (wrong_type, unknown_field):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, K8S_VERSION, strict=True)
