"""The sandbox for real: escape attempts in real job children, the self-test, required layers,
the seccomp program's decisions, and every job kind still parsing under the full sandbox."""

from __future__ import annotations

import ctypes
import errno
import json
import mmap
import os
import struct
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pdfs
import psutil
import pytest
from conftest import PROJECT, connect, needs_landlock
from escape_table import run_attempt
from tool_calls import every_job, job_kinds

from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.pool.verdict import classify
from pdf_airlock.worker.contract import Limits
from pdf_airlock.worker.sandbox import seccomp
from pdf_airlock.worker.testing import escape

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
    "prlimit_zygote": "sandbox_violation",
    "mmap_exec": "sandbox_violation",
    "mprotect_exec": "sandbox_violation",
    "raise_cpu_rlimit": "sandbox_violation",
    "read_closed_fd": "EBADF",
    "recvmsg_input_fd": "sandbox_violation",
    "prctl_set_dumpable": "sandbox_violation",
    "allocate_past_budget": "memory_limit",
    "spin_past_cpu_budget": "cpu_limit",
}


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
        [sys.executable, "-m", "pdf_airlock.server", "self-test", "--json", *extra],
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
    # The fallback fonts' row depends on Debian packages, not the sandbox: tests/sandbox/test_fonts.py.
    checked = {name: status for name, status in report["layers"].items() if name != "fonts"}
    assert all(status.startswith("active") for status in checked.values())
    assert report["layers"]["seccomp"].startswith("active")


class _Insn(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _Prog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_Insn)))


RET_ALLOW, RET_KILL_PROCESS, RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
NR = {"mmap": 9, "mprotect": 10, "kill": 62, "ptrace": 101, "getppid": 110, "openat": 257, "prlimit64": 302}


def _install_filter(rules: dict[int, int]) -> None:
    """In a throwaway child: a filter that returns ``rules[nr]`` for those syscalls, allows the
    rest; the child exits 99 if the kernel refuses it."""
    insns = [_Insn(BPF_LD_W_ABS, 0, 0, 0)]  # ld nr
    for nr, action in rules.items():
        insns += [_Insn(BPF_JEQ_K, 0, 1, nr), _Insn(BPF_RET_K, 0, 0, action)]
    insns.append(_Insn(BPF_RET_K, 0, 0, RET_ALLOW))
    program = (_Insn * len(insns))(*insns)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(38, 1, 0, 0, 0)  # PR_SET_NO_NEW_PRIVS
    if libc.prctl(22, 2, ctypes.byref(_Prog(len(insns), program)), 0, 0) != 0:  # PR_SET_SECCOMP
        os._exit(99)


def _docker_like_seccomp() -> None:
    """In the child before exec: refuse unshare with EPERM, as Docker's default profile does."""
    _install_filter({272: RET_ERRNO | errno.EPERM})


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
        [
            sys.executable,
            "-m",
            "pdf_airlock.server",
            "serve",
            "--root",
            str(docs),
            "--require-sandbox",
            "namespaces",
        ],
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


def _decide(program: Sequence[Any], nr: int, args: Sequence[int]) -> int:
    """What the kernel would answer: classic BPF over x86_64's ``struct seccomp_data``."""
    data = struct.pack("<IIQ6Q", nr, 0xC000003E, 0, *args, *[0] * (6 - len(args)))
    accumulator, pc = 0, 0
    while True:
        insn = program[pc]
        if insn.code == BPF_RET_K:
            return int(insn.k)
        if insn.code == BPF_LD_W_ABS:
            (accumulator,) = struct.unpack_from("<I", data, insn.k)
        elif insn.code in {BPF_JEQ_K, BPF_JGE_K, BPF_JSET_K}:
            taken = {
                BPF_JEQ_K: accumulator == insn.k,
                BPF_JGE_K: accumulator >= insn.k,
                BPF_JSET_K: bool(accumulator & insn.k),
            }[insn.code]
            pc += insn.jt if taken else insn.jf
        else:
            raise AssertionError(f"opcode {insn.code:#x} not modelled")
        pc += 1


RW, RX, RWX = (
    mmap.PROT_READ | mmap.PROT_WRITE,
    mmap.PROT_READ | mmap.PROT_EXEC,
    mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC,
)
PAGE_FLAGS = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
NULL, SOME_POINTER = 0, 0x7F0000001000


@pytest.mark.parametrize(
    ("call", "args", "expected"),
    [
        ("mmap", (0, 4096, RW, PAGE_FLAGS, -1 & 0xFFFFFFFF, 0), RET_ALLOW),
        ("mmap", (0, 4096, mmap.PROT_READ, mmap.MAP_PRIVATE, 3, 0), RET_ALLOW),
        ("mmap", (0, 4096, RWX, PAGE_FLAGS, -1 & 0xFFFFFFFF, 0), RET_KILL_PROCESS),
        ("mmap", (0, 4096, RX, mmap.MAP_PRIVATE, 3, 0), RET_KILL_PROCESS),
        ("mmap", (0, 4096, mmap.PROT_EXEC | 1 << 32, PAGE_FLAGS, 0, 0), RET_KILL_PROCESS),
        ("mprotect", (SOME_POINTER, 4096, mmap.PROT_READ), RET_ALLOW),
        ("mprotect", (SOME_POINTER, 4096, RW), RET_ALLOW),
        ("mprotect", (SOME_POINTER, 4096, RX), RET_KILL_PROCESS),
        ("mprotect", (SOME_POINTER, 4096, mmap.PROT_EXEC), RET_KILL_PROCESS),
        # glibc's getrlimit: prlimit64(0, resource, NULL, &old)
        ("prlimit64", (0, 7, NULL, SOME_POINTER), RET_ALLOW),
        ("prlimit64", (0, 7, SOME_POINTER, NULL), RET_KILL_PROCESS),
        ("prlimit64", (1, 7, NULL, SOME_POINTER), RET_KILL_PROCESS),
        ("prlimit64", (os.getpid(), 7, NULL, SOME_POINTER), RET_KILL_PROCESS),
        ("getppid", (), RET_KILL_PROCESS),
        ("openat", (0, SOME_POINTER, 0), RET_ERRNO | errno.EACCES),
    ],
)
def test_seccomp_program_decides(call: str, args: tuple[int, ...], expected: int) -> None:
    """The compiled program, run on the arguments: ``PROT_EXEC`` in any form is killed, and
    ``prlimit64`` is a read of the child's own limits only."""
    compiled = seccomp.compile_filter(5)
    assert _decide(compiled.program, NR[call], args) == expected


@pytest.mark.parametrize(
    ("attempt", "call"),
    [("kill_zygote", "kill"), ("ptrace_parent", "ptrace"), ("prlimit_zygote", "prlimit64")],
)
def test_escape_attempt_reaches_the_call_it_names(attempt: str, call: str) -> None:
    """In a fork of this process (which imported pdf_airlock.worker.testing.escape, as the zygote does), under
    a filter that kills ``getppid`` and refuses only the named call with EXDEV: the attempt must
    get EXDEV, so its row in the table is the verdict on that call and nothing before it."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        _install_filter({NR["getppid"]: RET_KILL_PROCESS, NR[call]: RET_ERRNO | errno.EXDEV})
        os.write(write_fd, json.dumps(escape.run(b"", {"attempt": attempt})).encode())
        os._exit(0)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as reader:
        answer = reader.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert json.loads(answer) == {"attempt": attempt, "outcome": "denied", "errno": "EXDEV"}


LEGIT_LIMITS = Limits(
    memory_bytes=512 << 20,
    cpu_seconds=10,
    max_input_bytes=1 << 30,
    max_result_bytes=16 << 20,
)
LEGIT_DEADLINE_S = 20.0
LEGIT_PASSWORD = "airlock"
LEGIT_DOCS = {
    "text": lambda: pdfs.text_pdf(["Hello sandbox\nsecond line", "Second page"]),
    "columns": lambda: pdfs.two_column_pdf(["left A", "left B"], ["right A", "right B"]),
    "encrypted": lambda: pdfs.encrypted_pdf(LEGIT_PASSWORD, "Encrypted body"),
    "structured": pdfs.structured_pdf,
    "interactive": pdfs.interactive_pdf,
    "images": pdfs.images_pdf,
    "xmp": pdfs.xmp_pdf,
}
IMAGES = {"max_items": 100, "max_pixels": 4_000_000}
SEARCH = {"query": "s[a-z]+", "regex": True}
# The document each tool's job reads (the text document unless named here).
DOCUMENT_OF = {
    "pdf_read layout": "columns",
    "pdf_outline": "structured",
    "pdf_attachments": "structured",
    "pdf_annotations": "interactive",
    "pdf_forms": "interactive",
    "pdf_security": "interactive",
    "pdf_images": "images",
}
# label -> (document, job kind, job arguments): every tool's job and engine as the server sends it
# for the tool's defaults (tests/tool_calls.py: from the registry), then variants of some.
LEGIT_JOBS: dict[str, tuple[str, str, dict[str, Any]]] = {
    label: (DOCUMENT_OF.get(label, "text"), kind, args)
    for label, (kind, args) in every_job({"pdf_search": SEARCH}).items()
}
_READ = LEGIT_JOBS["pdf_read"][2]
LEGIT_JOBS |= {
    "info xmp": ("xmp", "pdf_info", {}),
    "info encrypted": ("encrypted", "pdf_info", {"password": LEGIT_PASSWORD}),
    "read encrypted": ("encrypted", "pdf_read", _READ | {"password": LEGIT_PASSWORD}),
    "layout encrypted": ("encrypted", "pdf_read", _READ | {"password": LEGIT_PASSWORD, "engine": "layout"}),
    "attachment": (
        "structured",
        "pdf_attachments",
        {"max_bytes": 1 << 20, "max_items": 1000, "extract": "notes.txt"},
    ),
    "image": ("images", "pdf_images", IMAGES | {"extract": {"page": 2, "name": "Photo"}}),
    "form image": ("images", "pdf_images", IMAGES | {"extract": {"page": 2, "name": "Fm0/Inner"}}),
}


def test_legit_jobs_cover_every_job_kind() -> None:
    assert {kind for _doc, kind, _args in LEGIT_JOBS.values()} == job_kinds()


async def _parse(pool: Pool, path: Path, kind: str, args: dict[str, Any]) -> dict[str, Any]:
    fd = os.open(path, os.O_RDONLY)
    try:
        outcome = await pool.run(kind, args, fd, limits=LEGIT_LIMITS, deadline_s=LEGIT_DEADLINE_S)
    finally:
        os.close(fd)
    return classify(outcome, LEGIT_LIMITS.memory_bytes, LEGIT_DEADLINE_S)


@needs_landlock
async def test_every_job_kind_parses_under_the_full_sandbox(tmp_path: Path) -> None:
    """Real documents through every job kind and engine, with every layer on (no ``skip``):
    none of them needs ``PROT_EXEC``, another process's limits, or anything else refused."""
    paths = {name: pdfs.write(tmp_path / f"{name}.pdf", make()) for name, make in LEGIT_DOCS.items()}
    async with Pool(1, 64, 60, 1) as pool:
        results = {
            label: await _parse(pool, paths[doc], kind, args)
            for label, (doc, kind, args) in LEGIT_JOBS.items()
        }
        layers = pool.layers
    assert layers["seccomp"] == "available"
    assert all(results.values())
    assert "Hello sandbox" in results["pdf_read"]["pages"][0]["text"]
    assert "right A" in results["pdf_read layout"]["pages"][0]["text"]
    assert "Hello sandbox" in results["pdf_markdown"]["pages"][0]["text"]
    assert "Encrypted body" in results["layout encrypted"]["pages"][0]["text"]
    assert results["attachment"]["extracted"] is not None
    assert results["pdf_render"]["png_base64"]
    assert results["image"]["extracted"] is not None


def _writable_or_anonymous_code(maps: str) -> list[str]:
    """Mappings that are executable and writable, or executable and not backed by a file."""
    found = []
    for line in maps.splitlines():
        fields = line.split()
        perms, path = fields[1], fields[5] if len(fields) > 5 else ""
        kernel_code = path in {"[vdso]", "[vsyscall]"}
        if "x" in perms and ("w" in perms or not path.startswith("/")) and not kernel_code:
            found.append(line)
    return found


async def test_sandboxed_spare_holds_no_writable_code(docs: Path) -> None:
    """The PROT_EXEC rule keeps new code out; it also needs the zygote to hand down no writable
    and executable page (a ctypes closure made in its warm-up would be one: the fallback fonts'
    callbacks are, until the zygote seals them read-and-execute in a memfd,
    ``pdf_airlock.worker.memory.closures``). Checked from outside on a live spare, sandboxed and
    warmed, waiting for its job."""
    async with Pool(1, 4, 60, 1, spares=1) as pool:
        await _parse(pool, docs / "hello.pdf", "pdf_read", {"max_chars": 100})  # spares for these limits
        with anyio.fail_after(LEGIT_DEADLINE_S):
            while not pool.idle_spares():
                await anyio.sleep(0.01)
        spare = psutil.Process(pool.idle_spares()[0])
        # The zygote hands a spare over as soon as it is forked; the spare then builds its sandbox
        # and warms up before it blocks on its socket: look once it waits there.
        status = ""
        with anyio.fail_after(LEGIT_DEADLINE_S):
            while not ("Seccomp:\t2" in status and "State:\tS" in status):
                await anyio.sleep(0.01)
                status = Path(f"/proc/{spare.pid}/status").read_text()
        name = spare.name()
        maps = Path(f"/proc/{spare.pid}/maps").read_text()
    assert name == "airlock-spare"
    assert "Seccomp:\t2" in status
    assert "r-xp" in maps  # the libraries' code is there, read-only
    assert _writable_or_anonymous_code(maps) == []
    callbacks = [line.split() for line in maps.splitlines() if "/memfd:pdf-airlock-callbacks" in line]
    assert [fields[1] for fields in callbacks] == ["r-xs"]
