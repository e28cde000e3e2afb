"""What makes a fresh job child cheap (issue #27) holds, and costs no isolation: the zygote's
warm memory is in huge pages, children are forked without CPython's at-fork hooks (and with
them when a second thread exists), and a child's environment is the allowlist whatever the
zygote's was. The CPU itself is measured by bench/perf/cpu_per_doc.py, not asserted here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_pool import READ_ARGS, run, settled_zygote

from pdf_airlock.server.pool.pool import Pool

MIN_HUGE_KIB = 8 << 10  # Tesseract's model alone is ~30 MiB of warm memory
THP_SETTING = Path("/sys/kernel/mm/transparent_hugepage/enabled")
MADV_COLLAPSE_KERNEL = (6, 1)
HOOKS = "PDF_AIRLOCK_TEST_HOOKS"


def _kernel() -> tuple[int, int]:
    major, minor = os.uname().release.split(".")[:2]
    return int(major), int("".join(ch for ch in minor if ch.isdigit()) or 0)


def _thp_setting() -> str:
    return THP_SETTING.read_text() if THP_SETTING.exists() else "[never]"


def _python(code: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-I", "-c", textwrap.dedent(code)],
        capture_output=True, text=True, check=True, timeout=60, env=env,
    )  # fmt: skip
    return done.stdout.strip()


_FORK_HOOKS = """
import os, threading, time
from pdf_airlock.worker.sandbox.process import fork_bare
os.register_at_fork(after_in_child=lambda: os.write(1, b"hook "))

def child_and_wait():
    pid = fork_bare()
    if pid == 0:
        os.write(1, b"child ")
        os._exit(7)
    _, status = os.waitpid(pid, 0)
    os.write(1, f"exit {os.waitstatus_to_exitcode(status)}; ".encode())

child_and_wait()
stop = threading.Event()
helper = threading.Thread(target=stop.wait)
helper.start()
child_and_wait()
stop.set()
helper.join()
"""


def test_fork_bare_skips_at_fork_hooks_only_with_one_thread() -> None:
    assert _python(_FORK_HOOKS) == "child exit 7; hook child exit 7;"


_SCRUB = """
import json, os
from pdf_airlock.worker.sandbox.process import scrub_environment
print(json.dumps([scrub_environment(), dict(os.environ)]))
"""


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"LANG": "de_DE.UTF-8", "SECRET": "x", HOOKS: "1"}, {"LANG": "de_DE.UTF-8", "TZ": "UTC"}),
        ({"LANG": "C.UTF-8", "TZ": "UTC"}, {"LANG": "C.UTF-8", "TZ": "UTC"}),  # scrubbed already
        ({}, {"LANG": "C.UTF-8", "TZ": "UTC"}),
    ],
)
def test_environment_is_the_allowlist(given: dict[str, str], expected: dict[str, str]) -> None:
    assert json.loads(_python(_SCRUB, env=given)) == ["active", expected]


@pytest.mark.anyio
@pytest.mark.skipif(
    _kernel() < MADV_COLLAPSE_KERNEL or "[never]" in _thp_setting(),
    reason="no MADV_COLLAPSE (Linux < 6.1) or transparent huge pages off",
)
async def test_zygote_warm_memory_is_in_huge_pages(docs: Path) -> None:
    async with Pool(1, 4, 60, 1) as pool:
        await run(pool, docs / "hello.pdf", READ_ARGS)
        zygote = await settled_zygote()
        rollup = Path(f"/proc/{zygote.pid}/smaps_rollup").read_text()
        huge_kib = int(rollup.split("AnonHugePages:")[1].split()[0])
        assert huge_kib >= MIN_HUGE_KIB
