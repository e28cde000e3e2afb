"""Derive and verify the container's seccomp profile (seccomp/profile.json) from traces.

    python scripts/seccomp_profile.py derive [TRACE]   # trace a container workload, write the profile
    python scripts/seccomp_profile.py write TRACE      # write it from a trace ``derive`` kept
    python scripts/seccomp_profile.py verify           # the workload again, under the profile: must pass

``derive`` attaches ``strace -f`` to the private dockerd's containerd (scripts/container.sh
start), runs the image under Docker's default profile through the workload (self-test; an MCP session over the
bundled examples and the hostile corpus with every tool and engine), and collects every syscall
made by the container's first process from the moment runc loads its seccomp filter (runc still
runs a few calls before it execs the entrypoint) and by all its descendants.
The profile allows exactly those, minus families a PDF reader never needs (DENIED below) and
calls whose failure costs nothing (UNNEEDED), with ``clone`` restricted to calls that create no
namespace (as Docker's default profile does) and ``clone3`` answered with ENOSYS so libc falls
back to ``clone``. Calls that could reach beyond the process are allowed only with the arguments
the trace shows (FILTERED: ``ioctl`` requests, ``prctl`` options, the signals of ``kill`` and
``tgkill``; any pid, since the container's pid namespace holds only its own processes); a value
the script does not know stops the derivation. Everything else gets EPERM.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import termios
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
PROFILE = ROOT / "seccomp" / "profile.json"
STATE = Path(os.environ.get("PDF_AIRLOCK_DOCKER_STATE", "/tmp/pdf-airlock-docker"))
DOCKER_HOST = f"unix://{STATE}/docker.sock"
ENTRYPOINT = "/usr/bin/tini"  # the image's PID 1; it starts /opt/airlock/bin/pdf-airlock
CLONE_NAMESPACE_FLAGS = 0x7E020000  # CLONE_NEWNS|NEWCGROUP|NEWUTS|NEWIPC|NEWUSER|NEWPID|NEWNET
DENIED = {
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "ptrace", "process_vm_readv",
    "process_vm_writev", "keyctl", "add_key", "request_key", "bpf", "perf_event_open",
    "io_uring_setup", "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load",
    "init_module", "finit_module", "delete_module", "userfaultfd", "open_by_handle_at",
    "name_to_handle_at", "fsopen", "fsmount", "fsconfig", "move_mount", "open_tree", "mount_setattr",
    "swapon", "swapoff", "reboot", "settimeofday", "clock_settime", "acct", "quotactl", "syslog",
    "clone3",
}  # fmt: skip
ALWAYS = {"execve", "exit", "exit_group", "rt_sigreturn"}  # runc's last call and the way out
# Traced, but refused: glibc asks nscd (not in the image) for user names over a unix socket and
# reads /etc/passwd when it cannot; nothing else opens a socket or connects in the stdio mode.
UNNEEDED = {"socket", "connect"}
# The argument each of these is allowed on (its index), by the values the trace shows.
FILTERED = {"ioctl": 1, "prctl": 0, "kill": 1, "tgkill": 2}
_PRCTL = {
    "PR_SET_PDEATHSIG": 1,
    "PR_SET_DUMPABLE": 4,
    "PR_SET_NAME": 15,
    "PR_SET_SECCOMP": 22,
    "PR_SET_NO_NEW_PRIVS": 38,
}
_IOCTL = {name: getattr(termios, name) for name in ("TCGETS", "TIOCGWINSZ", "FIONBIO", "TIOCSPGRP")}
_SIGNALS = {member.name: int(member) for member in signal.Signals}
# The signals tini, the container's PID 1, passes on to the server when `docker stop` or a
# terminal sends them: the workload never stops a container that way, so the trace lacks them.
FORWARDED = {"SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM"}
_LOW_32 = 0xFFFFFFFF  # an int argument: compare its low 32 bits only (the kernel ignores the rest)
_LINE = re.compile(r"^(\d+)\s+(\w+)\((.*)")
_RESUMED = re.compile(r"^(\d+)\s+<\.\.\. (\w+) resumed>(.*)")
# Clone results are pids in the container's namespace; --decode-pids=pidns appends the host pid.
_CHILD = re.compile(r"=\s+\d+ /\* (\d+) in strace's PID NS \*/\s*$")


def run_workload(security: str) -> None:
    """The container test suites (self-test, MCP sessions, batch, shards and batch-merge), with
    the given seccomp option."""
    env = os.environ | {
        "DOCKER_HOST": DOCKER_HOST,
        "PDF_AIRLOCK_DOCKER": "1",
        "PDF_AIRLOCK_SECCOMP": security,
    }
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/container/test_container.py",
         "tests/container/test_container_shards.py"],
        cwd=ROOT, env=env, check=True,
    )  # fmt: skip


def containerd_pid() -> int:
    out = subprocess.run(["pgrep", "-f", f"containerd --config {STATE}"], capture_output=True, text=True)
    return int(out.stdout.split()[0])


def _number(name: str, token: str) -> int:
    """The value strace printed for a FILTERED argument."""
    table = {"ioctl": _IOCTL, "prctl": _PRCTL}.get(name, _SIGNALS)
    if token not in table:
        raise SystemExit(
            f"{name}: {token!r} is not one this script knows: add it to the table, if it is needed"
        )
    return table[token]


def _argument(name: str, rest: str) -> str | None:
    """The FILTERED argument of a call's first trace line (None on a resumed line)."""
    parts = [part.strip() for part in rest.split(",")]
    index = FILTERED[name]
    if len(parts) <= index or not parts[0] or parts[0].startswith(")"):
        return None
    return parts[index].split(")")[0].split("<")[0].strip()


def parse(trace: Path) -> tuple[set[str], dict[str, set[int]]]:
    """Syscalls of the entrypoint process (from its execve on) and all its descendants, and the
    values of the FILTERED arguments they were made with.

    Two passes: strace may log a child's first calls before its parent's clone returns."""
    lines = [
        m.groups()
        for line in trace.read_text(errors="replace").splitlines()
        if (m := _LINE.match(line) or _RESUMED.match(line))
    ]
    roots: set[str] = set()
    children: dict[str, list[str]] = defaultdict(list)
    for pid, name, rest in lines:
        if name == "execve" and ENTRYPOINT in rest:
            roots.add(pid)
        if name in ("clone", "clone3", "fork", "vfork") and (child := _CHILD.search(rest)):
            children[pid].append(child.group(1))
    root_of = {root: root for root in roots}
    todo = list(roots)
    while todo:
        parent = todo.pop()
        for child in children[parent]:
            if child not in root_of:
                root_of[child] = root_of[parent]
                todo.append(child)
    # Per container: from the line where runc loads its seccomp filter, every call of the first
    # process and of its descendants (runc's Go threads included) is made under the profile.
    marker: dict[str, int] = {}
    for index, (pid, name, rest) in enumerate(lines):
        is_filter = name in ("seccomp", "prctl") and "MODE_FILTER" in rest and "len=" in rest
        if pid in roots and is_filter and pid not in marker:
            marker[pid] = index
    used: set[str] = set()
    values: dict[str, set[int]] = defaultdict(set)
    for index, (pid, name, rest) in enumerate(lines):
        root = root_of.get(pid)
        if root is not None and root in marker and index > marker[root]:
            used.add(name)
            if name in FILTERED and (token := _argument(name, rest)) is not None:
                values[name].add(_number(name, token))
    return used, dict(values)


def _filtered_rules(values: dict[str, set[int]]) -> list[dict[str, object]]:
    """One rule per allowed value of each FILTERED call's argument (rules of a call are ORed)."""
    values = {**values, "kill": values.get("kill", set()) | {_SIGNALS[name] for name in FORWARDED}}
    rules: list[dict[str, object]] = []
    for name, index in sorted(FILTERED.items()):
        for value in sorted(values.get(name, ())):
            args = [{"index": index, "value": _LOW_32, "valueTwo": value, "op": "SCMP_CMP_MASKED_EQ"}]
            rules.append({"names": [name], "action": "SCMP_ACT_ALLOW", "args": args})
    return rules


def profile(used: set[str], values: dict[str, set[int]]) -> dict[str, object]:
    allowed = sorted((used | ALWAYS) - DENIED - UNNEEDED - set(FILTERED) - {"clone"})
    return {
        "defaultAction": "SCMP_ACT_ERRNO",
        "defaultErrnoRet": 1,
        "archMap": [
            {"architecture": "SCMP_ARCH_X86_64", "subArchitectures": ["SCMP_ARCH_X86", "SCMP_ARCH_X32"]}
        ],
        "syscalls": [
            {"names": allowed, "action": "SCMP_ACT_ALLOW"},
            {
                "names": ["clone"],
                "action": "SCMP_ACT_ALLOW",
                "args": [
                    {"index": 0, "value": CLONE_NAMESPACE_FLAGS, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}
                ],
                "comment": "threads and processes only: no new namespaces",
            },
            *_filtered_rules(values),
            {
                "names": ["clone3"],
                "action": "SCMP_ACT_ERRNO",
                "errnoRet": 38,
                "comment": "ENOSYS: libc uses clone",
            },
        ],
    }


def derive(keep: Path | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        trace = keep or Path(tmp) / "trace.txt"
        command = [
            "strace",
            "-f",
            "-qq",
            "--decode-pids=pidns",
            "-o",
            str(trace),
            "-p",
            str(containerd_pid()),
        ]
        tracer = subprocess.Popen(command)
        time.sleep(1)
        try:
            run_workload("default")  # Docker's profile: runc's load of a filter marks where ours applies
        finally:
            tracer.terminate()
            tracer.wait()
        write(trace)


def write(trace: Path) -> None:
    """The profile from a trace of the workload."""
    used, values = parse(trace)
    if not used:
        raise SystemExit("no syscalls traced: was the entrypoint found?")
    written = profile(used, values)
    PROFILE.write_text(json.dumps(written, indent=2) + "\n")
    refused = sorted(used & (DENIED | UNNEEDED))
    allowed = written["syscalls"][0]["names"]  # type: ignore[index]
    sys.stdout.write(f"{len(used)} syscalls traced; profile allows {len(allowed)} outright")
    sys.stdout.write(f", {', '.join(sorted(FILTERED))} by argument")
    sys.stdout.write(f"; traced but refused (EPERM): {', '.join(refused) or 'none'}\n")


def verify() -> None:
    run_workload(str(PROFILE))
    sys.stdout.write("the container workload passes under seccomp/profile.json\n")


if __name__ == "__main__":
    if sys.argv[1] == "derive":
        derive(Path(sys.argv[2]) if len(sys.argv) > 2 else None)
    elif sys.argv[1] == "write":
        write(Path(sys.argv[2]))
    else:
        verify()
