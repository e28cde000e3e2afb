"""The disk cache's checks, in process: the directory (created private, refused when it is not
ours or not a directory, then used only through the descriptor opened at start), the key file
(made once 0600, refused when unsafe, never read whole), each entry (an HMAC over its key and body,
a regular file of bounded size, a successful result) and the budgets of disk and memory.

Real temporary files, directories, symlinks, FIFOs, sockets and modes; no server. These are the tests
``scripts/mutation.sh --modules signed`` runs against every mutant of
``server/pdf_airlock/server/app/cache.py``, so each asserts the exact reason or message
(tests/tools/test_cache.py drives the same cache through the real server)."""

from __future__ import annotations

import errno
import gc
import hashlib
import hmac
import importlib.metadata
import json
import os
import resource
import signal
import socket
import stat
import threading
import tracemalloc
from collections.abc import Callable, Iterator, MutableMapping
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import structlog

import pdf_airlock.server
import pdf_airlock.server.tools.cursors
from pdf_airlock.server.app.cache import (
    CacheDirError,
    CacheKeyError,
    ResultCache,
    _read_at_most,
    answer_generation,
    prepare_directory,
    prepare_key_file,
)
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.tools.cursors import decode_cursor, encode_cursor, share_key

MIB = 1 << 20
SHA = "ab" * 32
NOBODY = 65534
# The format, spelled out: a test that imported these would follow a changed value.
KEY_BYTES = 32
ENTRY_LABEL = b"pdf-airlock cache entry"
SALT_LABEL = b"pdf-airlock password salt"
HEADER_BYTES = 65  # the MAC in hex, then a newline
FORMAT = 3
HUGE_KEY_FILE = 16 * MIB  # sparse: it takes no disk
NAME_MAX = 255


def result(text: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content={"pages": [{"page": 1, "text": text}]},
        is_error=False,
    )


def wire(text: str) -> dict[str, Any]:
    """``result(text)`` as the client receives it: by alias, no nulls."""
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": {"pages": [{"page": 1, "text": text}]},
        "isError": False,
        "resultType": "complete",
    }


def path_of(directory: Path, key: str) -> Path:
    return directory / f"{key}.json"


def keys(cache: ResultCache, count: int) -> list[str]:
    return [cache.key(SHA, "pdf_read", {"path": "a.pdf", "pages": str(n)}) for n in range(count)]


def entry_mac(secret: bytes, key: str, body: bytes, generation: str | None = None) -> bytes:
    """The MAC of an entry: over the generation of answers, the key and the body."""
    mac_key = hmac.new(secret, ENTRY_LABEL, hashlib.sha256).digest()
    signed = (generation or answer_generation()).encode() + b"\n" + key.encode() + b"\n" + body
    return hmac.new(mac_key, signed, hashlib.sha256).hexdigest().encode()


def plant(directory: Path, key: str, secret: bytes, body: bytes) -> Path:
    """An entry whose MAC is right for ``body``: what only a holder of the key file can write."""
    mac = entry_mac(secret, key, body).decode()
    path = path_of(directory, key)
    path.write_bytes(mac.encode() + b"\n" + body)
    return path


def open_fds() -> set[int]:
    """This process's open descriptors (the listing's own, and the copy it makes, are closed)."""
    listing = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY)
    try:
        listed = {int(name) for name in os.listdir(listing)}
    finally:
        os.close(listing)
    return {fd for fd in listed if _is_open(fd)}


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def bind_socket(path: Path) -> None:
    """A Unix socket at ``path``, bound from its folder: a socket's path has a short length limit."""
    folder = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.chdir(path.parent)
        with socket.socket(socket.AF_UNIX) as listener:
            listener.bind(path.name)
    finally:
        os.fchdir(folder)
        os.close(folder)


def rejections(logs: list[MutableMapping[str, Any]]) -> list[tuple[str, str]]:
    return [(log["key"], log["reason"]) for log in logs if log["event"] == "cache_entry_rejected"]


@pytest.fixture
def cursor_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Lets a test change the cursor key (``share_key``), as another process would have it."""
    monkeypatch.setattr(
        pdf_airlock.server.tools.cursors, "_key", pdf_airlock.server.tools.cursors._key
    )  # restored afterwards
    yield


# -- the directory ---------------------------------------------------------------------------


def test_a_new_directory_is_made_private_with_its_parents_and_no_descriptor_is_kept(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "a" / "b" / "cache"
    before = open_fds()
    prepare_directory(directory)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert open_fds() == before


def test_an_existing_directory_is_made_private(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)
    ResultCache(MIB, directory, MIB).close()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700


def _file(path: Path) -> None:
    path.write_text("x")


def _symlink_to_a_directory(path: Path) -> None:
    target = path.with_name("target")
    target.mkdir(mode=0o755)
    path.symlink_to(target)


def _dangling_symlink(path: Path) -> None:
    path.symlink_to(path.with_name("nowhere"))


def _another_users(path: Path) -> None:
    path.mkdir(mode=0o700)
    os.chown(path, NOBODY, NOBODY)


@pytest.mark.parametrize(
    ("name", "make", "problem"),
    [
        ("cache", _file, "is not a directory"),
        ("cache", _symlink_to_a_directory, "is a symbolic link"),
        ("cache", _dangling_symlink, "is a symbolic link"),
        ("file/cache", lambda path: _file(path.parent), "is not a directory"),
        ("c" * (NAME_MAX + 1), lambda path: None, "cannot be created: File name too long"),
        ("cache", _another_users, "belongs to another user"),
    ],
    ids=["file", "symlink", "dangling", "under-a-file", "too-long", "owner"],
)
def test_an_unusable_directory_is_refused(
    tmp_path: Path, name: str, make: Callable[[Path], None], problem: str
) -> None:
    directory = tmp_path / name
    make(directory)
    before = open_fds()
    with pytest.raises(CacheDirError) as caught:
        prepare_directory(directory)
    assert str(caught.value) == f"{directory} {problem}"
    with pytest.raises(CacheDirError):
        ResultCache(MIB, directory, MIB)
    assert open_fds() == before
    if (tmp_path / "target").exists():
        assert stat.S_IMODE((tmp_path / "target").stat().st_mode) == 0o755  # left as it was


@pytest.mark.skipif(os.geteuid() != 0, reason="/proc/sys belongs to root")
def test_a_directory_that_cannot_be_made_private_is_refused() -> None:
    """/proc/sys is root's own directory, mode 0555, whose mode the kernel never lets change."""
    before = open_fds()
    with pytest.raises(CacheDirError) as caught:
        prepare_directory(Path("/proc/sys"))
    assert str(caught.value).startswith("cannot make /proc/sys private: ")
    assert open_fds() == before


def test_the_descriptor_is_closed_by_close_and_by_the_collector(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    before = open_fds()
    cache = ResultCache(MIB, directory, MIB)
    (opened,) = open_fds() - before
    assert os.readlink(f"/proc/self/fd/{opened}") == str(directory)
    cache.close()
    cache.close()  # twice is harmless
    assert open_fds() == before
    dropped = ResultCache(MIB, directory, MIB)
    assert open_fds() != before
    del dropped
    gc.collect()
    assert open_fds() == before
    ResultCache(MIB).close()  # a memory-only cache has nothing to close


def test_the_directory_is_used_through_the_descriptor_opened_at_start(tmp_path: Path) -> None:
    directory, moved, elsewhere = tmp_path / "cache", tmp_path / "moved", tmp_path / "elsewhere"
    cache = ResultCache(0, directory, MIB)
    first, second = keys(cache, 2)
    cache.put(first, result("one"), 100)
    directory.rename(moved)
    elsewhere.mkdir()
    directory.symlink_to(elsewhere)  # the configured path now leads elsewhere
    cache.put(second, result("two"), 100)
    assert cache.get(first) == result("one") and cache.get(second) == result("two")
    assert sorted(path.name for path in moved.iterdir()) == sorted(f"{key}.json" for key in (first, second))
    assert list(elsewhere.iterdir()) == []


# -- the key file ----------------------------------------------------------------------------


def test_a_key_file_is_made_once_private_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "cache.key"
    with structlog.testing.capture_logs() as logs:
        secret = prepare_key_file(path, None)
    assert logs == [{"event": "cache_key_created", "key_file": str(path), "log_level": "info"}]
    assert len(secret) == KEY_BYTES and path.read_bytes() == secret
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with structlog.testing.capture_logs() as logs:
        assert prepare_key_file(path, tmp_path / "cache") == secret
    assert logs == []
    assert prepare_key_file(tmp_path / "other.key", None) != secret


def _key_file(path: Path, size: int = KEY_BYTES, mode: int = 0o600) -> None:
    path.write_bytes(os.urandom(size))
    path.chmod(mode)


def _key_socket(path: Path) -> None:
    bind_socket(path)
    path.chmod(0o600)


def _key_file_symlink(path: Path) -> None:
    target = path.with_name("target.key")
    _key_file(target)
    path.symlink_to(target)


def _key_file_of_another_user(path: Path) -> None:
    _key_file(path)
    os.chown(path, NOBODY, NOBODY)


@pytest.mark.parametrize(
    ("name", "make", "problem"),
    [
        ("k", lambda path: _key_file(path, mode=0o640), "has mode 0640; it must be 0600 or stricter"),
        ("k", lambda path: _key_file(path, mode=0o604), "has mode 0604; it must be 0600 or stricter"),
        ("k", _key_file_of_another_user, f"belongs to another user (uid {NOBODY})"),
        (
            "k",
            lambda path: _key_file(path, KEY_BYTES - 1),
            f"holds {KEY_BYTES - 1} bytes, not {KEY_BYTES}; remove it to make a new one "
            "(the disk cache then starts afresh)",
        ),
        ("k", lambda path: _key_file(path, 100), f"holds 100 bytes, not {KEY_BYTES}; remove it"),
        ("k", _key_file_symlink, "is a symbolic link"),
        ("k", lambda path: path.mkdir(mode=0o700), "is not a regular file"),
        ("k", lambda path: os.mkfifo(path, 0o600), "is not a regular file"),  # and no hang
        ("k", _key_socket, "cannot be read: No such device or address"),
        ("missing/k", lambda path: None, "cannot be created: No such file or directory"),
    ],
    ids=["mode", "other-mode", "owner", "short", "long", "symlink", "dir", "fifo", "socket", "no-parent"],
)
def test_an_unsafe_key_file_is_refused_and_left_as_it_was(
    tmp_path: Path, name: str, make: Callable[[Path], None], problem: str
) -> None:
    path = tmp_path / name
    make(path)
    before = sorted((entry.name, entry.lstat().st_mode) for entry in tmp_path.iterdir())
    content = path.read_bytes() if path.is_file() else None
    with pytest.raises(CacheKeyError) as caught:
        prepare_key_file(path, None)
    assert str(caught.value).startswith(f"{path} {problem}")
    assert sorted((entry.name, entry.lstat().st_mode) for entry in tmp_path.iterdir()) == before
    assert (path.read_bytes() if path.is_file() else None) == content


KEY_FILE_RACERS = 96  # processes starting at once on one new key file (6 of 96 used to fail)
KEY_FILE_RACES = 5  # the race was lost by about one start in a hundred: several rounds find it


@pytest.mark.parametrize("round_", range(KEY_FILE_RACES))
def test_processes_starting_together_share_one_new_key_file(tmp_path: Path, round_: int) -> None:
    """Each process makes the file whole under a name of its own and links it into place: one
    link wins, every other process reads that one secret, none sees a file still being written."""
    path = tmp_path / "cache.key"
    go_read, go_write = os.pipe()
    children: list[tuple[int, int]] = []
    for _ in range(KEY_FILE_RACERS):
        answer_read, answer_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: wait for the start, make or read the key, report, exit
            code = 1
            try:
                os.close(answer_read)
                os.read(go_read, 1)
                try:
                    answer = prepare_key_file(path, None).hex()
                except CacheKeyError as exc:
                    answer = f"refused: {exc}"
                os.write(answer_write, answer.encode())
                code = 0
            finally:
                os._exit(code)
        os.close(answer_write)
        children.append((pid, answer_read))
    os.write(go_write, b"x" * KEY_FILE_RACERS)  # all at once
    answers = []
    for pid, answer_read in children:
        with os.fdopen(answer_read, "rb") as answer:
            answers.append(answer.read().decode())
        assert os.waitpid(pid, 0)[1] == 0
    os.close(go_read)
    os.close(go_write)
    assert [a for a in answers if a.startswith("refused")] == []
    assert set(answers) == {path.read_bytes().hex()}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [entry.name for entry in tmp_path.iterdir()] == ["cache.key"]  # no temporary left


def test_a_whole_key_file_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading again is for a file read short; a whole one costs one open (a retry loop that
    read a good file fifty times would add half a second to every start)."""
    path = tmp_path / "cache.key"
    _key_file(path)
    opened: list[Any] = []
    real_open = os.open

    def counting(file: Any, *args: Any, **kwargs: Any) -> int:
        opened.append(file)
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    assert prepare_key_file(path, None) == path.read_bytes()
    assert opened == [path]


def test_a_key_file_read_short_is_read_again(tmp_path: Path) -> None:
    """A file another process (without this care) has created but not yet written."""
    path = tmp_path / "cache.key"
    secret = os.urandom(KEY_BYTES)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    writer = threading.Timer(0.1, lambda: (os.write(descriptor, secret), os.close(descriptor)))
    writer.start()
    try:
        assert prepare_key_file(path, None) == secret
    finally:
        writer.join()


def test_without_link_a_new_key_file_is_created_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file system without hard links (EPERM from link()): the file is created exclusively
    and written, as before, and no temporary is left."""

    def no_links(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    path = tmp_path / "cache.key"
    with structlog.testing.capture_logs() as logs:
        secret = prepare_key_file(path, None)
    assert logs == [{"event": "cache_key_created", "key_file": str(path), "log_level": "info"}]
    assert path.read_bytes() == secret and len(secret) == KEY_BYTES
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [entry.name for entry in tmp_path.iterdir()] == ["cache.key"]
    assert prepare_key_file(path, None) == secret


def _competitor(path: Path, secret: bytes, real_link: Callable[..., None]) -> Callable[..., None]:
    """``os.link`` as it goes when another process links its key file into place first."""

    def link(source: Any, destination: Any, **kwargs: Any) -> None:
        if not path.exists():
            path.write_bytes(secret)
            path.chmod(0o600)
        real_link(source, destination, **kwargs)

    return link


def test_a_lost_race_reads_the_winners_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interleaving the 96-process race finds by chance: the file is missing when read,
    and there when this process links its own: the winner's secret is the one, and nothing of
    this process's is left behind."""
    path = tmp_path / "cache.key"
    winner = os.urandom(KEY_BYTES)
    monkeypatch.setattr(os, "link", _competitor(path, winner, os.link))
    with structlog.testing.capture_logs() as logs:
        assert prepare_key_file(path, None) == winner
    assert logs == []  # this process made nothing
    assert [entry.name for entry in tmp_path.iterdir()] == ["cache.key"]


def test_without_link_a_lost_race_reads_the_winners_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "cache.key"
    winner = os.urandom(KEY_BYTES)

    def no_links_but_a_winner(*args: Any, **kwargs: Any) -> None:
        path.write_bytes(winner)
        path.chmod(0o600)
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    monkeypatch.setattr(os, "link", no_links_but_a_winner)
    assert prepare_key_file(path, None) == winner
    assert [entry.name for entry in tmp_path.iterdir()] == ["cache.key"]


@pytest.mark.parametrize("links", [True, False], ids=["link", "no-link"])
def test_a_new_key_file_that_cannot_be_placed_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, links: bool
) -> None:
    """link() failing for want of space (or, without link(), the write failing) is a start-up
    error naming the file; no temporary and no empty key file are left."""
    path = tmp_path / "cache.key"

    def failing(*args: Any, **kwargs: Any) -> None:
        if links:
            raise OSError(errno.ENOSPC, "No space left on device")
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "link", failing)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    with pytest.raises(CacheKeyError) as caught:
        if links:
            prepare_key_file(path, None)
        else:  # the temporary is written; the in-place file's write fails
            real_open = os.open

            def open_then_limit(file: Any, flags: int, *args: Any, **kwargs: Any) -> int:
                descriptor = real_open(file, flags, *args, **kwargs)
                if Path(file) == path:
                    resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
                return descriptor

            monkeypatch.setattr(os, "open", open_then_limit)
            try:
                prepare_key_file(path, None)
            finally:
                resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    signal.signal(signal.SIGXFSZ, previous)
    if links:
        assert str(caught.value) == f"{path} cannot be created: No space left on device"
    else:
        assert str(caught.value) == f"{path} cannot be written: File too large"
    assert list(tmp_path.iterdir()) == []


def test_a_huge_key_file_is_refused_without_being_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "cache.key"
    with path.open("wb") as out:
        out.truncate(HUGE_KEY_FILE)
    path.chmod(0o600)
    tracemalloc.start()
    try:
        with pytest.raises(CacheKeyError) as caught:
            prepare_key_file(path, None)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value).startswith(f"{path} holds {HUGE_KEY_FILE} bytes, not {KEY_BYTES}; ")
    assert peak < HUGE_KEY_FILE // 16


def test_a_key_file_that_cannot_be_written_is_not_left_behind(tmp_path: Path) -> None:
    """A file size limit of 0 (RLIMIT_FSIZE, SIGXFSZ ignored): the write fails with EFBIG. An
    empty key file left behind would refuse every later start."""
    path = tmp_path / "cache.key"
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, hard))
        try:
            with pytest.raises(CacheKeyError) as caught:
                prepare_key_file(path, None)
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    finally:
        signal.signal(signal.SIGXFSZ, previous)
    assert str(caught.value) == f"{path} cannot be written: File too large"
    assert not path.exists()


def test_a_key_file_inside_the_cache_directory_is_refused(tmp_path: Path) -> None:
    directory, link = tmp_path / "cache", tmp_path / "link"
    directory.mkdir()
    link.symlink_to(directory)
    for path in (directory / "k", link / "k", directory):  # directly, through a symlink, itself
        with pytest.raises(CacheKeyError) as caught:
            prepare_key_file(path, directory)
        assert str(caught.value) == f"{path} is inside the cache directory {directory}; keep it elsewhere"
    with pytest.raises(CacheKeyError, match="is inside the cache directory"):
        ResultCache(MIB, directory, MIB, directory / "k")
    assert list(directory.iterdir()) == []


# -- the cache and its start-up --------------------------------------------------------------


def test_the_disk_cache_is_on_only_with_a_directory_and_a_budget(tmp_path: Path) -> None:
    for directory, budget in [(tmp_path / "default", None), (tmp_path / "zero", 0), (None, MIB)]:
        cache = ResultCache(MIB, directory) if budget is None else ResultCache(MIB, directory, budget)
        (key,) = keys(cache, 1)
        assert (cache.used, cache.hits, cache.misses) == (0, 0, 0)
        assert cache.get(key) is None and cache.misses == 1
        cache.put(key, result("memory"), 100)
        assert cache.get(key) == result("memory")
        cache.close()
        assert directory is None or not directory.exists()
    ResultCache(MIB, tmp_path / "tiny", 1).close()
    assert (tmp_path / "tiny").is_dir()


def test_the_start_up_says_how_long_the_disk_cache_lasts(tmp_path: Path) -> None:
    key_file = tmp_path / "cache.key"
    with structlog.testing.capture_logs() as logs:
        ResultCache(MIB, tmp_path / "shared", MIB, key_file).close()
        ResultCache(MIB, tmp_path / "own", MIB).close()
        ResultCache(MIB).close()
    assert [log for log in logs if log["event"] == "cache_disk"] == [
        {
            "event": "cache_disk",
            "log_level": "info",
            "directory": str(tmp_path / "shared"),
            "key": "file",
            "key_file": str(key_file),
            "lasts": "across restarts",
        },
        {
            "event": "cache_disk",
            "log_level": "info",
            "directory": str(tmp_path / "own"),
            "key": "process",
            "key_file": None,
            "lasts": "this process only",
        },
    ]


def test_the_key_is_the_digest_of_the_call_with_the_password_salted(tmp_path: Path) -> None:
    """Every process given the same key file computes the same key for the same call."""
    key_file = tmp_path / "cache.key"
    cache = ResultCache(MIB, tmp_path / "cache", MIB, key_file, generation="gen-1")
    call = f'["gen-1", "", "{SHA}", "pdf_read", {{"pages": "1", "path": "a.pdf"}}]'
    plain = "k" + hashlib.sha256(call.encode()).hexdigest()
    assert cache.key(SHA, "pdf_read", {"path": "a.pdf", "pages": "1", "data": "QUJD"}) == plain
    assert cache.key(SHA, "pdf_read", {"pages": "1", "path": "a.pdf", "password": ""}) == plain
    assert cache.key(SHA, "pdf_read", {"pages": "1", "path": "a.pdf", "password": None}) == plain
    salt = hmac.new(key_file.read_bytes(), SALT_LABEL, hashlib.sha256).digest()
    salted = hashlib.sha256(salt + b"hunter2").hexdigest()
    call = f'["gen-1", "", "{SHA}", "pdf_read", {{"pages": "1", "password": "{salted}", "path": "a.pdf"}}]'
    secret = cache.key(SHA, "pdf_read", {"path": "a.pdf", "pages": "1", "password": "hunter2"})
    assert secret == "p" + hashlib.sha256(call.encode()).hexdigest()
    assert cache.key(SHA, "pdf_read", {"path": "a.pdf", "pages": "1", "password": "hunter3"}) != secret


def test_the_generation_names_this_release_and_the_parsers(tmp_path: Path) -> None:
    generation = answer_generation().split(";")
    assert generation[:2] == [f"format={FORMAT}", f"pdf-airlock={pdf_airlock.server.__version__}"]
    for name in ("pikepdf", "pypdfium2", "pdfminer.six", "pdfplumber", "tesserocr", "regex", "pillow"):
        assert f"{name}={importlib.metadata.version(name)}" in generation
    assert ResultCache(MIB).generation == answer_generation()


def test_an_entry_of_another_generation_is_never_served(tmp_path: Path) -> None:
    """An entry written by an older release (a triage verdict a fix has since changed) is not
    an answer of this one: its key differs, and its MAC fails under this key too."""
    directory, key_file = tmp_path / "cache", tmp_path / "cache.key"
    older = ResultCache(MIB, directory, MIB, key_file, generation="pdf-airlock=0.0.9")
    newer = ResultCache(MIB, directory, MIB, key_file, generation="pdf-airlock=0.1.0")
    arguments = {"path": "a.pdf"}
    old_key, new_key = older.key(SHA, "pdf_security", arguments), newer.key(SHA, "pdf_security", arguments)
    assert old_key != new_key
    older.put(old_key, result("risk: low"), 100)
    with structlog.testing.capture_logs() as logs:
        assert newer.get(new_key) is None
        assert rejections(logs) == []  # simply not there
        path_of(directory, new_key).write_bytes(path_of(directory, old_key).read_bytes())  # renamed
        assert newer.get(new_key) is None
        assert newer.get(old_key) is None  # read under its own name by the newer release
    assert rejections(logs) == [(new_key[:12], "mac"), (old_key[:12], "mac")]


def test_each_partition_has_its_own_entries() -> None:
    """On HTTP the partition is the principal (``--cache-scope principal``): one principal's
    entry never answers another's call."""
    cache = ResultCache(MIB)
    call = (SHA, "pdf_read", {"path": "a.pdf"})
    alice, bob, everyone = (cache.key(*call, partition) for partition in ("alice", "bob", ""))
    assert len({alice, bob, everyone}) == 3
    assert cache.key(*call) == everyone
    cache.put(alice, result("alice's"), 100)
    assert cache.get(bob) is None and cache.get(everyone) is None
    assert cache.get(alice) == result("alice's")


def test_a_cursor_argument_is_keyed_by_the_position_it_signs(cursor_key: None) -> None:
    cache = ResultCache(MIB)
    share_key(b"a" * KEY_BYTES)
    first = encode_cursor(SHA, "pdf_read", "selection", {"index": 1})
    keyed = cache.key(SHA, "pdf_read", {"path": "a.pdf", "cursor": first})
    second = encode_cursor(SHA, "pdf_read", "selection", {"index": 2})
    assert cache.key(SHA, "pdf_read", {"path": "a.pdf", "cursor": second}) != keyed
    share_key(b"b" * KEY_BYTES)  # another process's key: the same position, another tag
    again = encode_cursor(SHA, "pdf_read", "selection", {"index": 1})
    assert again != first
    assert cache.key(SHA, "pdf_read", {"path": "a.pdf", "cursor": again}) == keyed
    with pytest.raises(ToolError) as caught:  # refused before any lookup
        cache.key(SHA, "pdf_read", {"path": "a.pdf", "cursor": first})
    assert caught.value.code == "invalid_arguments"


def test_the_memory_budget_keeps_the_most_recently_used() -> None:
    budget = 1000
    cache = ResultCache(budget)
    k = keys(cache, 5)
    cache.put(k[0], result("too big"), budget // 4 + 1)  # an entry may take a quarter, no more
    assert cache.get(k[0]) is None and cache.used == 0
    for key in k[:4]:
        cache.put(key, result(key), budget // 4)
    assert cache.used == budget and all(cache.get(key) == result(key) for key in k[:4])
    cache.put(k[1], result(k[1]), budget // 4)  # again: replaced, not counted twice
    assert cache.used == budget
    assert cache.get(k[0]) == result(k[0])  # least recently used now: k[2]
    cache.put(k[4], result(k[4]), budget // 4)
    assert cache.used == budget
    assert [cache.get(key) is not None for key in k] == [True, True, False, True, True]
    assert (cache.hits, cache.misses, cache.disk_hits) == (9, 2, 0)
    nothing = ResultCache(0)
    nothing.put(k[0], result("x"), 1)
    assert nothing.get(k[0]) is None and nothing.used == 0


# -- entries on disk -------------------------------------------------------------------------


def test_an_entry_is_its_mac_and_the_wire_result_in_utf8(tmp_path: Path) -> None:
    directory, key_file = tmp_path / "cache", tmp_path / "cache.key"
    cache = ResultCache(MIB, directory, MIB, key_file)
    (key,) = keys(cache, 1)
    cache.put(key, result("é ✓ 数"), 100)
    mac, body = path_of(directory, key).read_bytes().split(b"\n", 1)
    assert json.loads(body) == {"format": FORMAT, "result": wire("é ✓ 数")}
    assert "é ✓ 数".encode() in body  # UTF-8, not \\u escapes: entries stay small
    assert mac == entry_mac(key_file.read_bytes(), key, body)
    assert stat.S_IMODE(path_of(directory, key).stat().st_mode) == 0o600
    assert sorted(path.name for path in directory.iterdir()) == [f"{key}.json"]  # nothing else


def test_an_entry_outlives_its_cache_and_a_hit_is_counted_logged_and_refreshed(tmp_path: Path) -> None:
    directory, key_file = tmp_path / "cache", tmp_path / "cache.key"
    first = ResultCache(MIB, directory, MIB, key_file)
    k = keys(first, 3)
    for key in k[:2]:
        first.put(key, result(key), 100)
        os.utime(path_of(directory, key), (1000, 1000))
    second = ResultCache(MIB, directory, MIB, key_file)
    with structlog.testing.capture_logs() as logs:
        assert [second.get(key) for key in (k[0], k[1], k[0], k[2])] == [
            result(k[0]),
            result(k[1]),
            result(k[0]),
            None,
        ]
    assert (second.hits, second.disk_hits, second.misses) == (3, 2, 1)
    assert logs == [{"event": "cache_disk_hit", "key": key[:12], "log_level": "debug"} for key in k[:2]]
    assert all(
        path_of(directory, key).stat().st_mtime > 1000 for key in k[:2]
    )  # least recently used goes first
    other = ResultCache(MIB, directory, MIB, tmp_path / "other.key")  # another secret
    with structlog.testing.capture_logs() as logs:
        assert other.get(k[0]) is None
    assert rejections(logs) == [(k[0][:12], "mac")]


def test_a_password_call_is_kept_in_memory_only(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    cache = ResultCache(MIB, directory, MIB)
    key = cache.key(SHA, "pdf_read", {"path": "a.pdf", "password": "hunter2"})
    cache.put(key, result("decrypted"), 100)
    assert cache.get(key) == result("decrypted")
    assert list(directory.iterdir()) == []


def _truncated(data: bytes, other: bytes) -> bytes:
    return data[:20]


def _edited(data: bytes, other: bytes) -> bytes:
    return data.replace(b"original", b"forgery!")


def _no_newline(data: bytes, other: bytes) -> bytes:
    return data[: HEADER_BYTES - 1] + b" " + data[HEADER_BYTES:]


def _copied(data: bytes, other: bytes) -> bytes:
    return other  # another key's genuine entry


@pytest.mark.parametrize(
    "tamper",
    [_truncated, _edited, _no_newline, _copied, lambda data, other: b"", lambda data, other: data + b" "],
    ids=["truncated", "edited", "no-newline", "copied", "empty", "appended"],
)
def test_a_tampered_entry_is_a_miss_removed_and_logged(
    tmp_path: Path, tamper: Callable[[bytes, bytes], bytes]
) -> None:
    directory = tmp_path / "cache"
    cache = ResultCache(0, directory, MIB)
    key, other = keys(cache, 2)
    cache.put(key, result("original"), 100)
    cache.put(other, result("another"), 100)
    path = path_of(directory, key)
    path.write_bytes(tamper(path.read_bytes(), path_of(directory, other).read_bytes()))
    with structlog.testing.capture_logs() as logs:
        assert cache.get(key) is None
    assert logs == [
        {"event": "cache_entry_rejected", "key": key[:12], "reason": "mac", "log_level": "warning"}
    ]
    assert not path.exists() and cache.misses == 1
    assert cache.get(other) == result("another")


GOOD = wire("good")
CURSOR_ELSEWHERE = encode_cursor("cd" * 32, "pdf_read", "selection", {"index": 1})


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"not json", "malformed"),
        (b"[" * 100_000, "malformed"),  # json.loads: RecursionError
        (b"[1]", "format"),
        (json.dumps({"result": GOOD}).encode(), "format"),
        (json.dumps({"format": 1, "result": GOOD}).encode(), "format"),
        (json.dumps({"format": 2, "result": GOOD}).encode(), "format"),  # the release before
        (json.dumps({"format": FORMAT}).encode(), "malformed"),
        (json.dumps({"format": FORMAT, "result": [GOOD]}).encode(), "malformed"),
        (json.dumps({"format": FORMAT, "result": GOOD | {"content": "text"}}).encode(), "invalid_result"),
        (json.dumps({"format": FORMAT, "result": GOOD | {"isError": True}}).encode(), "not_a_success"),
        (
            json.dumps({"format": FORMAT, "result": {"content": GOOD["content"], "isError": False}}).encode(),
            "not_a_success",
        ),
        (
            json.dumps(
                {
                    "format": FORMAT,
                    "result": GOOD | {"structuredContent": {"sha256": SHA, "cursor": CURSOR_ELSEWHERE}},
                }
            ).encode(),
            "invalid_cursor",
        ),
    ],
    ids=[
        "not-json",
        "deep",
        "list",
        "no-format",
        "old-format",
        "previous-format",
        "no-result",
        "result-list",
        "invalid-result",
        "error",
        "no-structured",
        "cursor-elsewhere",
    ],
)
def test_an_entry_with_a_good_mac_and_a_bad_body_is_a_miss(tmp_path: Path, body: bytes, reason: str) -> None:
    """What only a holder of the key file could write (another version, a bug): still checked."""
    directory, key_file = tmp_path / "cache", tmp_path / "cache.key"
    cache = ResultCache(MIB, directory, MIB, key_file)
    good, bad = keys(cache, 2)
    plant(directory, good, key_file.read_bytes(), json.dumps({"format": FORMAT, "result": GOOD}).encode())
    path = plant(directory, bad, key_file.read_bytes(), body)
    assert cache.get(good) == types.CallToolResult.model_validate(GOOD)  # the planting is right
    with structlog.testing.capture_logs() as logs:
        assert cache.get(bad) is None
    assert logs == [
        {"event": "cache_entry_rejected", "key": bad[:12], "reason": reason, "log_level": "warning"}
    ]
    assert not path.exists() and cache.misses == 1


def sized(length: int) -> types.CallToolResult:
    """A result whose entry grows by one byte per unit of ``length``."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text="x" * length)], structured_content={}, is_error=False
    )


def test_an_entry_may_take_a_quarter_of_the_disk_budget_and_no_more(tmp_path: Path) -> None:
    probe = ResultCache(0, tmp_path / "probe", MIB)
    (key,) = keys(probe, 1)
    probe.put(key, sized(100), 1)
    body = path_of(tmp_path / "probe", key).stat().st_size - HEADER_BYTES
    directory = tmp_path / "cache"
    cache = ResultCache(0, directory, 4 * body)  # entries of up to ``body`` bytes
    fits, too_big, planted, garbage = keys(cache, 4)
    cache.put(fits, sized(100), 1)
    cache.put(too_big, sized(101), 1)
    assert not path_of(directory, too_big).exists()
    assert ResultCache(0, directory, 4 * body).get(fits) == sized(100)
    path_of(directory, planted).write_bytes(b"0" * (HEADER_BYTES + body + 1))
    path_of(directory, garbage).write_bytes(b"0" * (HEADER_BYTES + body))
    with structlog.testing.capture_logs() as logs:
        assert cache.get(planted) is None and cache.get(garbage) is None
    assert rejections(logs) == [(planted[:12], "too_large"), (garbage[:12], "mac")]


def test_read_at_most_gathers_short_reads_and_reads_no_further() -> None:
    """Each read of a SEQPACKET socket returns one message: short reads, as a regular file's
    never are, and a message left unread stays there."""
    reader, writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with reader, writer:
        for message in (b"a" * 9, b"bcd", b"efg"):
            writer.send(message)
        writer.close()
        assert _read_at_most(reader.fileno(), 10) == b"a" * 9 + b"b"
        assert reader.recv(10) == b"efg"


def _directory(path: Path) -> None:
    path.mkdir()


@pytest.mark.parametrize(
    ("make", "removed"),
    [
        (os.mkfifo, True),  # and the read does not hang
        (lambda path: path.symlink_to(path.with_name("target")), True),
        (lambda path: path.symlink_to(path.with_name("nowhere")), True),
        (bind_socket, True),
        (_directory, False),  # cannot be unlinked: left, and still a miss
    ],
    ids=["fifo", "symlink", "dangling", "socket", "directory"],
)
def test_an_entry_that_is_not_a_regular_file_is_a_miss(
    tmp_path: Path, make: Callable[[Path], None], removed: bool
) -> None:
    directory = tmp_path / "cache"
    cache = ResultCache(0, directory, MIB)
    (key,) = keys(cache, 1)
    target = directory / "target"
    target.write_bytes(b"left alone")
    make(path_of(directory, key))
    with structlog.testing.capture_logs() as logs:
        assert cache.get(key) is None
    assert logs == [
        {"event": "cache_entry_rejected", "key": key[:12], "reason": "not_a_file", "log_level": "warning"}
    ]
    assert os.path.lexists(path_of(directory, key)) is not removed
    assert target.read_bytes() == b"left alone"


@pytest.mark.parametrize("blocked", ["entry", "temporary"])
def test_a_failed_write_is_logged_and_leaves_nothing_behind(tmp_path: Path, blocked: str) -> None:
    """A directory planted under the entry's name or its temporary name: the write fails, the call
    does not, and no temporary file is left."""
    directory = tmp_path / "cache"
    cache = ResultCache(MIB, directory, MIB)
    (key,) = keys(cache, 1)
    name = f"{key}.json" if blocked == "entry" else f".{key}.{os.getpid()}.tmp"
    (directory / name).mkdir()
    with structlog.testing.capture_logs() as logs:
        cache.put(key, result("text"), 100)
    reason = "Is a directory" if blocked == "entry" else "File exists"
    assert logs == [{"event": "cache_write_failed", "reason": reason, "log_level": "warning"}]
    assert [path.name for path in directory.iterdir()] == [name]
    assert cache.get(key) == result("text")  # from memory


def test_the_disk_budget_counts_writes_overwrites_and_removals(tmp_path: Path) -> None:
    """Ten equal entries fill the budget exactly; one more evicts the least recently used until
    the directory holds at most 90% of it. Files that are not entries are neither counted nor
    removed."""
    probe = ResultCache(0, tmp_path / "probe", MIB)
    (key,) = keys(probe, 1)
    probe.put(key, result("x" * 300), 1)
    size = path_of(tmp_path / "probe", key).stat().st_size
    budget = 10 * size
    assert budget * 0.9 == 9 * size  # the eviction's bound is hit exactly
    directory = tmp_path / "cache"
    directory.mkdir(mode=0o700)
    foreign = {"notes.txt": "file", "link.json": "symlink", "sub.json": "directory", ".k.1.tmp": "file"}
    (directory / "notes.txt").write_bytes(b"n" * budget)
    (directory / "link.json").symlink_to(directory / "notes.txt")
    (directory / "sub.json").mkdir()
    (directory / ".k.1.tmp").write_bytes(b"t" * size)
    for name in foreign:
        os.utime(directory / name, (1, 1), follow_symlinks=False)  # the oldest, were they entries
    cache = ResultCache(0, directory, budget)
    k = keys(cache, 12)
    clock = iter(range(1000, 2000))

    def put(key: str) -> None:
        cache.put(key, result("x" * 300), 1)
        stamp = next(clock)
        if path_of(directory, key).exists():
            os.utime(path_of(directory, key), (stamp, stamp))

    def entries() -> list[str]:
        return sorted(path.stem for path in directory.glob("k*.json") if path.is_file())

    for key in k[:10]:
        put(key)
    assert entries() == sorted(k[:10])  # exactly the budget: nothing evicted
    for _ in range(3):
        put(k[5])  # an overwrite replaces, it does not add
    assert entries() == sorted(k[:10])
    tampered = path_of(directory, k[0]).read_bytes().replace(b"x", b"y", 1)  # the same size
    path_of(directory, k[0]).write_bytes(tampered)
    assert cache.get(k[0]) is None  # rejected: removed, its space given back
    put(k[10])
    assert entries() == sorted(k[1:11])
    put(k[11])  # over: the two least recently used go
    assert entries() == sorted([*k[3:12]])
    assert sum(path_of(directory, key).stat().st_size for key in entries()) == 9 * size
    assert {path.name for path in directory.iterdir()} >= set(foreign)


def test_a_symlink_planted_under_an_entry_name_does_not_skew_the_budget(tmp_path: Path) -> None:
    """Writing over it replaces the link itself, and counts the link's size, not its target's: a
    link to a huge file must not make the cache think it has room to spare."""
    probe = ResultCache(0, tmp_path / "probe", MIB)
    (key,) = keys(probe, 1)
    probe.put(key, result("x" * 300), 1)
    budget = 10 * path_of(tmp_path / "probe", key).stat().st_size
    huge = tmp_path / "huge"
    with huge.open("wb") as out:
        out.truncate(1000 * budget)  # sparse
    directory = tmp_path / "cache"
    cache = ResultCache(0, directory, budget)
    k = keys(cache, 11)
    path_of(directory, k[0]).symlink_to(huge)
    for key in k:
        cache.put(key, result("x" * 300), 1)
    assert sum(path.stat().st_size for path in directory.glob("*.json")) <= budget
    assert not any(path.is_symlink() for path in directory.iterdir())
    assert huge.stat().st_size == 1000 * budget


def test_a_cursor_read_back_from_disk_is_signed_by_the_reading_process(
    tmp_path: Path, cursor_key: None
) -> None:
    directory, key_file = tmp_path / "cache", tmp_path / "cache.key"
    share_key(b"a" * KEY_BYTES)
    cursor = encode_cursor(SHA, "pdf_read", "selection", {"index": 3})
    paged = types.CallToolResult(
        content=[types.TextContent(type="text", text=f"more: cursor={cursor}")],
        structured_content={"sha256": SHA, "cursor": cursor},
        is_error=False,
    )
    writer = ResultCache(MIB, directory, MIB, key_file)
    (key,) = keys(writer, 1)
    writer.put(key, paged, 100)
    share_key(b"b" * KEY_BYTES)  # the reading process has another cursor key
    served = ResultCache(MIB, directory, MIB, key_file).get(key)
    assert served is not None and served.structured_content is not None
    fresh = served.structured_content["cursor"]
    assert decode_cursor(fresh, SHA, "pdf_read", "selection") == {"index": 3}
    assert served.content == [types.TextContent(type="text", text=f"more: cursor={fresh}")]
