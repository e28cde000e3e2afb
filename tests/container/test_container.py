"""The real image under the production flags, driven by the real ``mcp`` client over ``docker run -i``.

Runs when ``PDF_AIRLOCK_DOCKER=1`` and a Docker engine answers (``.ci/run`` sets both up with
scripts/container.sh); skipped otherwise, with the reason. ``PDF_AIRLOCK_SECCOMP`` picks the
seccomp option: a profile path (default: the project's seccomp/profile.json), ``unconfined``, or
``default`` for Docker's own profile.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pdfs
import psutil
import pytest
from conftest import ALL_TOOLS, HELLO_PAGES, PROJECT
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [
    pytest.mark.skipif(os.environ.get("PDF_AIRLOCK_DOCKER") != "1", reason="PDF_AIRLOCK_DOCKER=1 not set"),
]

IMAGE = os.environ.get("PDF_AIRLOCK_IMAGE", "pdf-airlock")
IMAGE_UID = 10001  # the Dockerfile's runtime user
SCAN_LINES = ["Scanned in a container", "Invoice number 4711"]
SECCOMP = os.environ.get("PDF_AIRLOCK_SECCOMP", str(PROJECT / "seccomp" / "profile.json"))


def production_flags(docs: Path, *volumes: str, options: Sequence[str] = ()) -> list[str]:
    """``docker run`` as the README shows it; ``volumes`` are more ``-v`` mounts (writable),
    ``options`` more ``docker run`` options (a name, an environment variable)."""
    seccomp = [] if SECCOMP == "default" else ["--security-opt", f"seccomp={SECCOMP}"]
    mounts = [flag for volume in volumes for flag in ("-v", volume)]
    return [
        "run", "-i", "--rm", "--network", "none", "--read-only", "--cap-drop", "ALL",
        "--security-opt", "no-new-privileges", *seccomp, "-v", f"{docs}:/data:ro", *mounts, *options, IMAGE,
    ]  # fmt: skip


def owned_by_the_image(folder: Path) -> Path:
    """A writable mount for the image's user (uid 10001, mode 0700 as the cache requires)."""
    folder.mkdir()
    os.chown(folder, IMAGE_UID, IMAGE_UID)
    folder.chmod(0o700)
    return folder


@pytest.fixture(scope="module", autouse=True)
def _engine() -> None:
    inspect = subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True, check=False)
    if inspect.returncode != 0:
        pytest.fail(f"PDF_AIRLOCK_DOCKER=1 but there is no image {IMAGE!r}: run scripts/container.sh build")


@pytest.fixture(scope="module")
def shared(docs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test documents, readable by the image's unprivileged user (pytest's folders are 0700)."""
    folder = tmp_path_factory.mktemp("container-data")
    for name in ("hello.pdf", "encrypted.pdf", "not-a-pdf.pdf", "bomb.pdf", "glyphs.pdf"):
        shutil.copy(docs / name, folder / name)
        (folder / name).chmod(0o644)
    pdfs.write(folder / "scan.pdf", pdfs.scan_pdf([SCAN_LINES])).chmod(0o644)
    os.mkfifo(folder / "fifo.pdf")
    (folder / "escape.pdf").symlink_to("/etc/passwd")
    folder.chmod(0o755)
    return folder


def shipped_ocr_languages() -> list[str]:
    """``OCR_LANGUAGES`` of scripts/container.sh: the tesseract-ocr-<lang> packages of the image."""
    script = (Path(__file__).resolve().parents[2] / "scripts" / "container.sh").read_text()
    line = next(line for line in script.splitlines() if line.startswith("OCR_LANGUAGES="))
    return line.split("=", 1)[1].strip('"').split()


def test_self_test_inside_the_container(shared: Path) -> None:
    command = ["docker", *production_flags(shared), "self-test", "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    layers: dict[str, str] = json.loads(done.stdout)["layers"]
    for layer in ("process_group", "closed_fds", "rlimits", "no_new_privs", "seccomp", "landlock"):
        assert layers[layer].startswith("active"), (layer, layers[layer])
    assert layers["unprivileged_uid"] == "active: already uid 10001"
    # The image ships Tesseract's data for OCR_LANGUAGES (scripts/container.sh): the self-test's
    # OCR job reads its sample page, with orientation and script detection, and lists them all.
    assert layers["ocr"].startswith("active: read the sample page"), layers["ocr"]
    shipped = sorted(lang.replace("-", "_") for lang in shipped_ocr_languages() if lang != "osd")
    assert len(shipped) == 26
    assert layers["ocr"].endswith("; scripts and orientation detected; languages: " + ", ".join(shipped))
    # The image carries the fallback fonts: a page naming a font of each script draws them all.
    assert layers["fonts"].startswith("active: 27 faces; fonts not embedded drew Chinese"), layers["fonts"]
    if SECCOMP != "unconfined":  # the project's profile, like Docker's, refuses unshare
        assert layers["namespaces"].startswith("unavailable")


@pytest.mark.anyio
async def test_mcp_session_in_the_container(shared: Path) -> None:
    args = [*production_flags(shared), "serve", "--root", "/data", "--timeout", "3", "--memory-mb", "256"]
    params = StdioServerParameters(command="docker", args=args, env=dict(os.environ))
    results: dict[str, Any] = {}
    job_nice: list[int] = []
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        results["read"] = await client.call_tool("pdf_read", {"path": "hello.pdf"})
        results["info"] = await client.call_tool("pdf_info", {"path": "/data/encrypted.pdf"})
        for name, path, extra in (
            ("outside", "/etc/passwd", {}),
            ("escape", "escape.pdf", {}),
            ("junk", "not-a-pdf.pdf", {}),
            ("bomb", "bomb.pdf", {}),
            ("slow", "glyphs.pdf", {"engine": "layout"}),
            ("fifo", "fifo.pdf", {}),
        ):
            if name == "slow":  # its job child, seen from the host while it parses
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_job_niceness, job_nice)
                    results[name] = await client.call_tool("pdf_read", {"path": path, **extra})
                continue
            results[name] = await client.call_tool("pdf_read", {"path": path, **extra})
        results["after"] = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "2"})
        # The image codecs, the regex engine and XMP parsing under the container's seccomp profile.
        rendered = await client.call_tool("pdf_render", {"path": "hello.pdf", "dpi": 36})
        found = await client.call_tool("pdf_search", {"path": "hello.pdf", "query": "page", "regex": True})
        described = await client.call_tool("pdf_info", {"path": "hello.pdf"})
        # The supervisor keeps the zygote's pre-forked spares (the profile allows the calls it
        # makes on their sockets): the same idle spares are still there a moment later. A spare
        # it refused would read EOF and exit, and every job would fork on demand, several times
        # slower (docs/container.md).
        await anyio.sleep(1.0)
        kept = _idle_spares()
        await anyio.sleep(0.5)
        kept &= _idle_spares()
    assert kept
    assert rendered.is_error is False and rendered.content[1].mime_type == "image/png"
    assert rendered.structured_content["image"]["width_px"] == 306
    assert found.is_error is False and found.structured_content["pages_searched"] == len(HELLO_PAGES)
    assert described.is_error is False and described.structured_content["repair"]["warning_count"] == 0
    assert tools == ALL_TOOLS
    assert job_nice == [10]  # setpriority is allowed by the profile: the child yields the CPU
    assert [p["text"] for p in results["read"].structured_content["pages"]] == HELLO_PAGES
    codes = {
        name: result.structured_content["error"]["code"]
        for name, result in results.items()
        if result.is_error
    }
    assert codes.pop("bomb") in {"memory_limit", "decompression_limit"}
    assert codes.pop("slow") in {"timeout", "cpu_limit"}
    assert codes == {
        "info": "encrypted",
        "outside": "path_denied",
        "escape": "path_denied",
        "junk": "not_a_pdf",
        "fifo": "not_a_file",
    }
    assert results["after"].structured_content["pages"][0]["text"] == HELLO_PAGES[1]


def _idle_spares() -> set[int]:
    """The container's idle pre-forked spares (the image's user), seen from the host."""
    return {
        process.pid
        for process in psutil.process_iter(["name", "uids"])
        if process.info["name"] == "airlock-spare" and process.info["uids"].real == IMAGE_UID
    }


async def _job_niceness(found: list[int]) -> None:
    """The niceness of the container's job child (the image's user, uid 10001), once it runs."""
    with anyio.fail_after(20):
        while not found:
            for process in psutil.process_iter(["name", "uids", "nice"]):
                if process.info["name"] == "airlock-job" and process.info["uids"].real == IMAGE_UID:
                    found.append(process.info["nice"])
                    return
            await anyio.sleep(0.02)


@pytest.mark.anyio
async def test_a_dead_zygotes_children_are_reaped(shared: Path) -> None:
    """The image's PID 1 is tini: when the zygote dies, its pre-forked spares die with it (their
    parent-death signal) and are re-parented to PID 1, which reaps them. With the server as PID 1
    they stayed zombies for the container's whole life, one set per zygote restart."""
    args = [*production_flags(shared), "serve", "--root", "/data"]
    params = StdioServerParameters(command="docker", args=args, env=dict(os.environ))
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        first = await client.call_tool("pdf_read", {"path": "hello.pdf"})
        with anyio.fail_after(30):
            while not (spares := _idle_spares()):
                await anyio.sleep(0.05)
        zygote = psutil.Process(next(iter(spares))).parent()
        assert zygote is not None and "pdf_airlock.worker.zygote" in " ".join(zygote.cmdline())
        zygote.kill()
        with anyio.fail_after(60):  # a new zygote takes over: calls work again
            while (again := await client.call_tool("pdf_read", {"path": "hello.pdf"})).is_error:
                assert again.structured_content["error"]["retryable"] is True
                await anyio.sleep(0.2)
        with anyio.fail_after(10):
            while left := _image_zombies(spares):
                await anyio.sleep(0.1)
    assert first.is_error is False and again.is_error is False
    assert not left


def _image_zombies(pids: set[int]) -> set[int]:
    """Those of ``pids`` that are still zombies (dead, never waited for)."""
    found = set()
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess):
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                found.add(pid)
    return found


def test_batch_in_the_container(shared: Path, tmp_path: Path) -> None:
    """A pipeline stage under the production flags and the profile: the output's lock (flock),
    a torn last line cut (ftruncate), a line per document, JSON on stderr; then a resume."""
    out = owned_by_the_image(tmp_path / "out")
    results = out / "results.jsonl"
    results.write_text('{"path": "/data/gone.pdf", "sha256": "ab')  # a run killed mid-line
    os.chown(results, IMAGE_UID, IMAGE_UID)
    command = ["docker", *production_flags(shared, f"{out}:/out"), "batch", "pdf_read", "/data"]
    command += ["--out", "/out/results.jsonl", "--timeout", "3", "--memory-mb", "256"]
    first, again = _run(command, 300), _run(command, 300)
    events = [json.loads(line) for line in first.stderr.splitlines()]
    lines = {Path(line["path"]).name: line for line in map(json.loads, results.read_text().splitlines())}
    codes = {name: line["error"]["code"] if line.get("error") else "ok" for name, line in lines.items()}
    assert first.returncode == 1, first.stderr[-2000:]
    assert "batch_torn_line_cut" in [event["event"] for event in events]
    assert codes.pop("bomb.pdf") in {"memory_limit", "decompression_limit"}
    assert codes.pop("glyphs.pdf") == "ok"
    assert codes == {
        "hello.pdf": "ok",
        "scan.pdf": "ok",
        "encrypted.pdf": "encrypted",
        "not-a-pdf.pdf": "not_a_pdf",
        "fifo.pdf": "not_a_file",
        "escape.pdf": "path_denied",
    }
    assert [page["text"] for page in lines["hello.pdf"]["result"]["pages"]] == HELLO_PAGES
    [done] = [json.loads(line) for line in again.stderr.splitlines() if '"batch_done"' in line]
    # Read again: the two that failed before they were opened (no sha256), so never settled.
    assert again.returncode == 1 and done["outcomes"] == {"skipped": 6, "not_a_file": 1, "path_denied": 1}


def test_shared_children_in_the_container(shared: Path, tmp_path: Path) -> None:
    """``--documents-per-child`` under the production flags and the profile (the supervisor's
    hand-over to a resident child, the child's RLIMIT_CPU renewal): the same lines as a child
    per document."""
    out = owned_by_the_image(tmp_path / "out")
    lines = {}
    for name, extra in (("fresh", []), ("shared", ["--documents-per-child", "10"])):
        command = ["docker", *production_flags(shared, f"{out}:/out"), "batch", "pdf_read", "/data"]
        command += ["--out", f"/out/{name}.jsonl", "--timeout", "3", "--memory-mb", "256", *extra]
        assert _run(command, 300).returncode == 1  # the hostile documents fail, typed
        read = [json.loads(line) for line in (out / f"{name}.jsonl").read_text().splitlines()]
        for line in read:  # a failure's details measure the run (peak memory), not the document
            line.get("error", {}).pop("details", None)
        lines[name] = sorted(read, key=lambda line: line["path"])
    assert lines["shared"] == lines["fresh"]
    assert sum(line["ok"] for line in lines["fresh"]) >= 3


def test_cache_dir_in_the_container(shared: Path, tmp_path: Path) -> None:
    """``--cache-dir`` and ``--cache-key-file`` side by side on a writable mount: one container
    makes the directory, the key file and the entry (temporary file, rename), the next reads the
    key and answers from the entry."""
    state = owned_by_the_image(tmp_path / "state")
    flags = production_flags(shared, f"{state}:/state")
    command = ["docker", *flags, "call", "pdf_read", "--root", "/data", "--cache-dir", "/state/cache"]
    command += ["--cache-key-file", "/state/cache.key", "--json", json.dumps({"path": "hello.pdf"})]
    runs = [_run(command, 120) for _ in range(2)]
    audits = [
        next(json.loads(line) for line in run.stderr.splitlines() if '"tool_call"' in line) for run in runs
    ]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr[-2000:]
    assert all("cache_write_failed" not in run.stderr for run in runs)
    assert all("cache_entry_rejected" not in run.stderr for run in runs)
    assert audits[0].get("cache") is None and audits[1]["cache"] == "hit"
    key = (state / "cache.key").stat()
    assert (key.st_uid, key.st_mode & 0o777, key.st_size) == (IMAGE_UID, 0o600, 32)
    texts = [[page["text"] for page in json.loads(run.stdout)["structuredContent"]["pages"]] for run in runs]
    assert texts == [HELLO_PAGES, HELLO_PAGES]


def _run(command: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.mark.anyio
async def test_cache_dir_keeps_to_its_budget_in_the_container(shared: Path, tmp_path: Path) -> None:
    """Past ``--cache-disk-mb`` the oldest entries are removed (unlink) under the profile, and
    every call still answers."""
    cache = owned_by_the_image(tmp_path / "cache")
    flags = production_flags(shared, f"{cache}:/cache")
    args = [*flags, "serve", "--root", "/data", "--cache-dir", "/cache", "--cache-disk-mb", "1"]
    params = StdioServerParameters(command="docker", args=args, env=dict(os.environ))
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        renders = [
            await client.call_tool("pdf_render", {"path": "hello.pdf", "page": page, "dpi": dpi})
            for dpi in (240, 260, 280, 300)
            for page in range(1, len(HELLO_PAGES) + 1)
        ]
    stored = sum(path.stat().st_size for path in cache.iterdir() if not path.name.startswith("."))
    sizes = [len(render.content[1].data) for render in renders if not render.is_error]
    assert len(sizes) == len(renders) and sum(sizes) > 1 << 20  # more than the budget was stored
    assert 0 < stored <= 1 << 20


@pytest.mark.anyio
async def test_ocr_of_a_scanned_page_in_the_container(shared: Path) -> None:
    """Tesseract and its English data in the image, loaded by the zygote, read in the sandbox
    under the production flags (and the project's seccomp profile)."""
    args = [*production_flags(shared), "serve", "--root", "/data", "--timeout", "20"]
    params = StdioServerParameters(command="docker", args=args, env=dict(os.environ))
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        read = await client.call_tool("pdf_read", {"path": "scan.pdf"})
        found = await client.call_tool("pdf_search", {"path": "scan.pdf", "query": "4711"})
        markdown = await client.call_tool("pdf_markdown", {"path": "scan.pdf"})
    assert read.is_error is False, read.content
    (page,) = read.structured_content["pages"]
    assert page["text"].splitlines() == SCAN_LINES
    assert (page["text_source"], page["text_layer"]) == ("ocr", "none")
    assert [hit["text_source"] for hit in found.structured_content["hits"]] == ["ocr"]
    assert markdown.structured_content["pages"][0]["text_source"] == "ocr"


# Calls the server never makes in the container, each tried by the image's own interpreter under
# the profile (its entry point replaced): the profile must refuse each (EPERM), where Docker's
# default profile would allow it. Each prints the errno name it got, or "allowed".
REFUSED_BY_THE_PROFILE = {
    "socket_inet": "import socket; socket.socket(socket.AF_INET, socket.SOCK_STREAM)",
    "socket_unix": "import socket; socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)",
    "ioctl_tiocsti": "import fcntl, termios; fcntl.ioctl(0, termios.TIOCSTI, b'x')",
    "prctl_child_subreaper": "import ctypes; libc = ctypes.CDLL(None, use_errno=True)\n"
    "if libc.prctl(36, 1, 0, 0, 0) != 0: raise OSError(ctypes.get_errno(), '')",  # PR_SET_CHILD_SUBREAPER
    "kill_sigstop": "import os, signal; os.kill(os.getpid(), signal.SIGSTOP)",
}
_ATTEMPT = """
import errno, sys
try:
    exec(sys.argv[1])
except OSError as error:
    print(errno.errorcode.get(error.errno, error.errno))
else:
    print("allowed")
"""


@pytest.mark.skipif(SECCOMP in ("default", "unconfined"), reason="the project's profile is not in use")
@pytest.mark.parametrize("attempt", REFUSED_BY_THE_PROFILE)
def test_the_profile_refuses_what_the_server_never_needs(shared: Path, attempt: str) -> None:
    flags = production_flags(shared)
    at = flags.index(IMAGE)
    flags[at:at] = ["--entrypoint", "/opt/airlock/bin/python"]
    command = ["docker", *flags, "-I", "-c", _ATTEMPT, REFUSED_BY_THE_PROFILE[attempt]]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.stdout.strip() == "EPERM", (done.stdout, done.stderr[-2000:])
