"""The sandbox for real: escape attempts in real job children, the self-test, required layers."""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import PROJECT, connect
from escape_table import run_attempt

from server.pool import Pool
from worker import landlock

pytestmark = pytest.mark.anyio

FULL_SANDBOX = {
    "open_etc_passwd": "EACCES",
    "read_proc_environ": "EACCES",
    "list_root": "EACCES",
    "write_file": "EACCES",
    "tcp_connect_loopback": "sandbox_violation",
    "execve_sh": "sandbox_violation",
    "fork": "sandbox_violation",
    "ptrace_parent": "sandbox_violation",
    "unshare_user": "sandbox_violation",
    "mount_tmpfs": "sandbox_violation",
    "kill_init": "sandbox_violation",
    "kill_zygote": "sandbox_violation",
    "raise_cpu_rlimit": "sandbox_violation",
    "read_closed_fd": "EBADF",
    "recvmsg_input_fd": "sandbox_violation",
    "prctl_set_dumpable": "sandbox_violation",
    "allocate_past_budget": "memory_limit",
    "spin_past_cpu_budget": "cpu_limit",
}
needs_landlock = pytest.mark.skipif(landlock.abi_version() < 4, reason="kernel without Landlock ABI >= 4")


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@needs_landlock
@pytest.mark.parametrize(("attempt", "expected"), FULL_SANDBOX.items())
async def test_escape_attempt_is_denied(attempt: str, expected: str) -> None:
    async with Pool(1, 4, 60, 1) as pool:
        assert await run_attempt(pool, attempt, []) == expected


@needs_landlock
async def test_layers_hold_without_seccomp() -> None:
    """Defence in depth: with seccomp off, Landlock and the empty root still deny the filesystem."""
    async with Pool(1, 4, 60, 1) as pool:
        assert await run_attempt(pool, "open_etc_passwd", ["seccomp"]) in {"EACCES", "ENOENT"}
        assert await run_attempt(pool, "open_etc_passwd", ["seccomp", "landlock"]) == "ENOENT"
        assert await run_attempt(pool, "tcp_connect_loopback", ["seccomp"]) == "EACCES"


def self_test(*extra: str, preexec: object = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", "self-test", "--json", *extra],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=60,
        check=False,
        preexec_fn=preexec,  # type: ignore[arg-type]
    )


@needs_landlock
def test_self_test_reports_every_layer_active_here() -> None:
    done = self_test("--require-sandbox", "seccomp,landlock,namespaces,rlimits,no_new_privs")
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stdout
    assert report["missing"] == []
    assert all(status.startswith("active") for status in report["layers"].values())
    assert report["layers"]["seccomp"].startswith("active")


def _docker_like_seccomp() -> None:
    """In the child before exec: refuse unshare with EPERM, as Docker's default profile does."""
    libc = ctypes.CDLL(None, use_errno=True)

    class Insn(ctypes.Structure):
        _fields_ = (
            ("code", ctypes.c_uint16),
            ("jt", ctypes.c_uint8),
            ("jf", ctypes.c_uint8),
            ("k", ctypes.c_uint32),
        )

    class Prog(ctypes.Structure):
        _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Insn)))

    unshare_nr, eperm = 272, 1
    program = (Insn * 4)(
        Insn(0x20, 0, 0, 0),  # ld nr
        Insn(0x15, 0, 1, unshare_nr),  # jeq unshare
        Insn(0x06, 0, 0, 0x00050000 | eperm),  # ret ERRNO(EPERM)
        Insn(0x06, 0, 0, 0x7FFF0000),  # ret ALLOW
    )
    libc.prctl(38, 1, 0, 0, 0)
    if libc.prctl(22, 2, ctypes.byref(Prog(4, program)), 0, 0) != 0:
        os._exit(99)


def test_namespaces_reported_unavailable_when_unshare_is_refused() -> None:
    done = self_test(preexec=_docker_like_seccomp)
    report = json.loads(done.stdout)
    assert done.returncode == 0
    assert report["layers"]["namespaces"].startswith("unavailable")
    assert report["layers"]["rlimits"] == "active"
    refused = self_test("--require-sandbox", "namespaces", preexec=_docker_like_seccomp)
    assert refused.returncode == 1
    assert json.loads(refused.stdout)["missing"] == ["namespaces"]


def test_server_refuses_to_start_without_required_layer(docs: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server", "serve", "--root", str(docs), "--require-sandbox", "namespaces"],
        input="",
        capture_output=True,
        text=True,
        cwd=PROJECT,
        timeout=60,
        check=False,
        preexec_fn=_docker_like_seccomp,
    )
    assert done.returncode != 0
    assert "required sandbox layer(s) not active: namespaces" in done.stderr
    assert done.stdout == ""


async def test_required_layers_still_serve_when_present(docs: Path) -> None:
    async with connect(docs, "--require-sandbox", "rlimits,no_new_privs,process_group") as client:
        result = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "1"})
    assert result.is_error is False
