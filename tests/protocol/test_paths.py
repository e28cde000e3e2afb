"""The path policy: containment, symlinks, file types, sizes, inline data; on its own and,
for the root's boundary, through the real server over real stdio.

Tests whose names end in ``over_stdio`` spawn the server; ``scripts/mutation.sh`` leaves them
out and runs the in-process rest against every mutant.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pdfs
import pytest
from conftest import HELLO_PAGES, connect

from pdf_airlock.server.boundary.paths import PathPolicy, _copy_sealed, within
from pdf_airlock.server.errors import ToolError

SECRET_TEXT = "Beside the root, not inside it."
# The module's own limits, spelled out: a test that imported them would follow a changed value.
HASH_INLINE_MAX = 4 << 20
COPIES_KEPT = 16
SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
SIBLING_SUFFIXES = ("-evil", "evil")


def code_of(policy: PathPolicy, raw: str) -> str:
    with pytest.raises(ToolError) as caught:
        policy.open_path(raw)
    return caught.value.code


def test_regular_file_opens_with_digest(docs: Path) -> None:
    policy = PathPolicy([docs], 1 << 30)
    document = policy.open_path("hello.pdf")
    try:
        data = (docs / "hello.pdf").read_bytes()
        assert document.sha256 == hashlib.sha256(data).hexdigest()
        assert document.size == len(data)
        assert document.display == "hello.pdf"
        assert os.pread(document.fd, 5, 0) == b"%PDF-"
    finally:
        document.close()


def test_escapes_and_types(docs: Path) -> None:
    policy = PathPolicy([docs], 1 << 30)
    assert code_of(policy, "escape.pdf") == "path_denied"
    assert code_of(policy, "sub/../../x.pdf") == "path_denied"
    assert code_of(policy, "fifo.pdf") == "not_a_file"
    assert code_of(policy, "nothing-here.pdf") == "not_found"
    assert code_of(policy, "with\x00nul.pdf") == "invalid_arguments"


def test_root_itself_proc_is_refused(tmp_path: Path) -> None:
    policy = PathPolicy([Path("/")], 1 << 30)
    assert code_of(policy, "/proc/self/environ") == "not_a_file"
    assert code_of(policy, "/dev/zero") == "not_a_file"


def test_size_cap(docs: Path) -> None:
    policy = PathPolicy([docs], 100)
    assert code_of(policy, "hello.pdf") == "too_large"


def test_inline_is_sealed_memfd() -> None:
    policy = PathPolicy([Path("/nonexistent")], 1 << 20)
    document = policy.open_inline(base64.b64encode(b"%PDF-1.7 inline").decode())
    try:
        assert os.pread(document.fd, 100, 0) == b"%PDF-1.7 inline"
        with pytest.raises(PermissionError):
            os.pwrite(document.fd, b"x", 0)
    finally:
        document.close()
    with pytest.raises(ToolError) as caught:
        PathPolicy([Path("/")], 10).open_inline(base64.b64encode(b"0" * 100).decode())
    assert caught.value.code == "too_large"


def test_a_large_input_is_hashed_off_the_event_loop_with_the_same_digest(tmp_path: Path) -> None:
    """Over 4 MiB, ``open_path_async`` and ``open_inline_async`` hash in a worker thread: the
    same digest, size and checks, and a changed file is hashed again."""
    data = os.urandom(5 << 20)
    (tmp_path / "big.pdf").write_bytes(data)
    policy = PathPolicy([tmp_path], 1 << 30)

    async def opened() -> list[tuple[str, int, bytes]]:
        found = []
        for document in (
            await policy.open_path_async("big.pdf"),
            await policy.open_path_async("big.pdf"),  # unchanged: the digest remembered
            await policy.open_inline_async(base64.b64encode(data).decode()),
        ):
            found.append((document.sha256, document.size, os.pread(document.fd, 16, 0)))
            document.close()
        (tmp_path / "big.pdf").write_bytes(data[:-1] + b"!")
        changed = await policy.open_path_async("big.pdf")
        found.append((changed.sha256, changed.size, os.pread(changed.fd, 16, 0)))
        changed.close()
        return found

    digest = hashlib.sha256(data).hexdigest()
    first, again, inline, changed = anyio.run(opened)
    assert first == again == inline == (digest, len(data), data[:16])
    assert changed == (hashlib.sha256(data[:-1] + b"!").hexdigest(), len(data), data[:16])
    with pytest.raises(ToolError) as caught:
        anyio.run(PathPolicy([tmp_path], 4 << 20).open_path_async, "big.pdf")
    assert caught.value.code == "too_large"


def _copied(fd: int, limit: int) -> tuple[str, int, bytes]:
    """``_copy_sealed``'s digest and size, and the bytes its memfd holds (then closed)."""
    memfd, digest, size = _copy_sealed(fd, limit, os.fstat(fd).st_size)
    try:
        assert fcntl.fcntl(memfd, fcntl.F_GET_SEALS) & fcntl.F_SEAL_WRITE  # sealed: no one writes it
        return digest, size, os.pread(memfd, size + 1, 0)
    finally:
        os.close(memfd)


def test_copying_reads_no_more_than_one_byte_past_the_cap(tmp_path: Path) -> None:
    """A file someone keeps appending to after its ``fstat`` is copied up to the cap and one
    byte, then refused as too_large, instead of read for as long as it grows; the copy holds
    exactly the bytes hashed."""
    (tmp_path / "growing.pdf").write_bytes(b"%PDF-" + b"x" * 99_995)
    fd = os.open(tmp_path / "growing.pdf", os.O_RDONLY)
    try:
        head = b"%PDF-" + b"x" * 996
        assert _copied(fd, 1001) == (hashlib.sha256(head).hexdigest(), 1001, head)
        assert _copied(fd, 1 << 30)[1] == 100_000
        memfd, _digest, size = _copy_sealed(fd, 1 << 30, 10)  # it grew after its fstat said 10 bytes
        os.close(memfd)
        assert size == 100_000
    finally:
        os.close(fd)
    data = os.urandom(2 << 20)
    (tmp_path / "large.pdf").write_bytes(data)
    fd = os.open(tmp_path / "large.pdf", os.O_RDONLY)
    try:
        limit = (1 << 20) + 10
        assert _copied(fd, limit) == (hashlib.sha256(data[:limit]).hexdigest(), limit, data[:limit])
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Boundary:
    """A root with outside folders beside it whose names start with the root's own name."""

    base: Path
    root: Path

    def sibling(self, suffix: str) -> Path:
        return self.base / f"root{suffix}"

    def attempts(self) -> dict[str, str]:
        """Every way tried to reach a sibling's PDF, by a name for the report."""
        found: dict[str, str] = {}
        for suffix in SIBLING_SUFFIXES:
            target = self.sibling(suffix) / "x.pdf"
            found |= {
                f"absolute root{suffix}": str(target),
                f"relative dot-dot root{suffix}": f"../root{suffix}/x.pdf",
                f"absolute dot-dot root{suffix}": f"{self.root}/../root{suffix}/x.pdf",
                f"file symlink root{suffix}": f"link{suffix}.pdf",
                f"folder symlink root{suffix}": f"dir{suffix}/x.pdf",
                f"file uri root{suffix}": target.as_uri(),
                f"file uri dot-dot root{suffix}": f"file://{self.root}/../root{suffix}/x.pdf",
                f"localhost uri root{suffix}": f"file://localhost{target}",
                f"encoded uri root{suffix}": "file://" + str(target).replace("/root", "/%72oot"),
            }
        return found


@pytest.fixture(scope="session")
def boundary(tmp_path_factory: pytest.TempPathFactory) -> Boundary:
    """``base/root`` with ``hello.pdf`` inside, and ``base/root-evil/x.pdf`` and
    ``base/rootevil/x.pdf`` beside it, each reachable from inside by a file and a folder symlink."""
    base = tmp_path_factory.mktemp("boundary")
    layout = Boundary(base, base / "root")
    layout.root.mkdir()
    pdfs.write(layout.root / "hello.pdf", pdfs.text_pdf(HELLO_PAGES))
    for suffix in SIBLING_SUFFIXES:
        layout.sibling(suffix).mkdir()
        pdfs.write(layout.sibling(suffix) / "x.pdf", pdfs.text_pdf([SECRET_TEXT]))
        (layout.root / f"link{suffix}.pdf").symlink_to(layout.sibling(suffix) / "x.pdf")
        (layout.root / f"dir{suffix}").symlink_to(layout.sibling(suffix), target_is_directory=True)
    return layout


@pytest.mark.parametrize(
    ("path", "root", "inside"),
    [
        ("/x/root", "/x/root", True),
        ("/x/root/a.pdf", "/x/root", True),
        ("/x/root/sub/a.pdf", "/x/root", True),
        ("/x/root/a.pdf", "/x/root/", True),
        ("/x/root-evil", "/x/root", False),
        ("/x/root-evil/a.pdf", "/x/root", False),
        ("/x/rootevil/a.pdf", "/x/root", False),
        ("/x/roo", "/x/root", False),
        ("/x", "/x/root", False),
        ("/x/other/a.pdf", "/x/root", False),
        ("/x/root/a.pdf", "/x/rootX", False),
        ("/x/root/a.pdf", "/x/root//", True),
        ("/anything/at/all", "/", True),
        ("/", "/", True),
    ],
)
def test_within_is_a_component_prefix_not_a_string_prefix(path: str, root: str, inside: bool) -> None:
    assert within(path, root) is inside


def test_a_sibling_named_like_the_root_is_outside(boundary: Boundary) -> None:
    """``root-evil`` and ``rootevil`` start with the root's name but are not under it, however
    they are reached: absolute, ``..``, symlinks from inside, ``file://`` URIs."""
    policy = PathPolicy([boundary.root], 1 << 30)
    codes = {name: code_of(policy, raw) for name, raw in boundary.attempts().items()}
    assert codes == dict.fromkeys(boundary.attempts(), "path_denied")
    document = policy.open_path("hello.pdf")  # the root's own files still open
    document.close()


def test_a_sibling_root_stays_reachable_when_it_is_a_root_too(boundary: Boundary) -> None:
    """The refusal is about containment, not about the name: serve ``root-evil`` as a root of its
    own and it opens, shown relative to that root."""
    policy = PathPolicy([boundary.root, boundary.sibling("-evil")], 1 << 30)
    document = policy.open_path(str(boundary.sibling("-evil") / "x.pdf"))
    try:
        assert document.display == "x.pdf"
    finally:
        document.close()
    assert code_of(policy, str(boundary.sibling("evil") / "x.pdf")) == "path_denied"


def _outcome(result: Any) -> str:
    if result.is_error:
        return str(result.structured_content["error"]["code"])
    return "ok"


@pytest.mark.anyio
async def test_a_sibling_named_like_the_root_is_refused_over_stdio(boundary: Boundary) -> None:
    """The same attempts through the real server, real ``mcp`` client, real stdio and sandbox:
    each one ``path_denied``, none of the sibling's text in any answer; the root's own file reads."""
    async with connect(boundary.root) as client:
        results = {
            name: await client.call_tool("pdf_read", {"path": raw})
            for name, raw in boundary.attempts().items()
        }
        inside = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "1"})
    assert {name: _outcome(result) for name, result in results.items()} == dict.fromkeys(
        results, "path_denied"
    )
    for result in results.values():
        assert result.structured_content["error"]["retryable"] is False
        assert SECRET_TEXT not in str(result.content)
    assert inside.structured_content["pages"][0]["text"] == HELLO_PAGES[0]


def refused(policy: PathPolicy, raw: str) -> tuple[str, str]:
    """(code, message) of refusing ``raw``, checking that the refusal left no fd open."""
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(ToolError) as caught:
        policy.open_path(raw)
    assert len(os.listdir("/proc/self/fd")) == before
    return caught.value.code, caught.value.message


@pytest.mark.parametrize(
    ("raw", "code", "message"),
    [
        ("with\x00nul.pdf", "invalid_arguments", "path contains a NUL character"),
        ("", "invalid_arguments", "path is empty"),
        ("file://", "invalid_arguments", "path is empty"),
        ("file://remote.example/x.pdf", "path_denied", "file:// URIs must not name a remote host"),
        ("escape.pdf", "path_denied", "'escape.pdf' is outside the allowed roots"),
        ("passwd.pdf", "path_denied", "'passwd.pdf' is outside the allowed roots"),
        ("nothing-here.pdf", "not_found", "'nothing-here.pdf' does not exist"),
        ("fifo.pdf", "not_a_file", "'fifo.pdf' is not a regular file"),
        ("sub", "not_a_file", "'sub' is not a regular file"),
        (".", "not_a_file", "'.' is not a regular file"),
    ],
)
def test_each_refusal_has_its_code_and_says_why(docs: Path, raw: str, code: str, message: str) -> None:
    assert refused(PathPolicy([docs], 1 << 30), raw) == (code, message)


def test_a_long_path_is_cut_in_messages(docs: Path) -> None:
    policy = PathPolicy([docs], 1 << 30)
    whole = "x" * 196 + ".pdf"
    assert refused(policy, whole) == ("not_found", f"{whole!r} does not exist")
    cut = "y" * 197 + ".pdf"
    assert refused(policy, cut) == ("not_found", f"{cut[:200] + '...'!r} does not exist")


@pytest.mark.parametrize(
    ("root", "raw", "message"),
    [
        ("/", "/sys", "'/sys' is on a pseudo filesystem"),
        ("/", "/proc/self/status", "'/proc/self/status' is on a pseudo filesystem"),
        ("/", "/dev/null", "'/dev/null' is on a pseudo filesystem"),
        ("/proc", "self/status", "'self/status' is on a pseudo filesystem"),
    ],
)
def test_pseudo_filesystems_are_refused_before_opening(root: str, raw: str, message: str) -> None:
    assert refused(PathPolicy([Path(root)], 1 << 30), raw) == ("not_a_file", message)


def test_file_uris_are_decoded_and_may_name_localhost(docs: Path) -> None:
    policy = PathPolicy([docs], 1 << 30)
    for raw in (
        f"file://localhost{docs}/hello.pdf",
        f"file://{docs}/h%65llo.pdf",
        (docs / "hello.pdf").as_uri(),
    ):
        document = policy.open_path(raw)
        document.close()
        assert document.display == "hello.pdf"


def test_a_relative_path_is_tried_under_each_root_in_order(docs: Path, tmp_path: Path) -> None:
    first = tmp_path / "first"
    first.mkdir()
    (first / "only-here.pdf").write_bytes(b"%PDF-first")
    (first / "hello.pdf").write_bytes(b"%PDF-shadow")
    policy = PathPolicy([first, docs], 1 << 30)
    for raw, data in (("hello.pdf", b"%PDF-shadow"), ("only-here.pdf", b"%PDF-first")):
        document = policy.open_path(raw)
        document.close()
        assert (document.display, document.sha256) == (raw, hashlib.sha256(data).hexdigest())
    nested = policy.open_path("sub/nested.pdf")  # only in the second root
    nested.close()
    assert nested.display == os.path.join("sub", "nested.pdf")
    assert refused(policy, "neither.pdf") == ("not_found", "'neither.pdf' does not exist")


def test_a_symlink_loop_cannot_be_opened(tmp_path: Path) -> None:
    (tmp_path / "loop.pdf").symlink_to("loop.pdf")
    assert refused(PathPolicy([tmp_path], 1 << 30), "loop.pdf") == (
        "path_denied",
        "'loop.pdf' cannot be opened (Too many levels of symbolic links)",
    )


def test_the_opened_fd_is_checked_again(boundary: Boundary, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between resolving and opening, a path can be swapped: the fd's own path decides. Here
    ``resolve`` is made to answer what a swap would give (the sibling's file, then nothing)."""
    policy = PathPolicy([boundary.root], 1 << 30)
    outside = str(boundary.sibling("-evil") / "x.pdf")
    monkeypatch.setattr(policy, "resolve", lambda _raw: outside)
    assert refused(policy, "hello.pdf") == (
        "path_denied",
        "'hello.pdf' moved outside the allowed roots while opening",
    )
    monkeypatch.setattr(policy, "resolve", lambda _raw: str(boundary.root / "vanished.pdf"))
    assert refused(policy, "hello.pdf") == ("not_found", "'hello.pdf' does not exist")
    # A symlink swapped in for the last component is not followed, even one that stays inside.
    monkeypatch.setattr(policy, "resolve", lambda _raw: str(boundary.root / "link-evil.pdf"))
    assert refused(policy, "hello.pdf") == (
        "path_denied",
        "'hello.pdf' cannot be opened (Too many levels of symbolic links)",
    )


def test_an_opened_document_is_a_sealed_close_on_exec_copy(docs: Path) -> None:
    document = PathPolicy([docs], 1 << 30).open_path("hello.pdf")
    try:
        assert os.get_inheritable(document.fd) is False
        seals = fcntl.fcntl(document.fd, fcntl.F_GET_SEALS)
        assert seals & fcntl.F_SEAL_WRITE and seals & fcntl.F_SEAL_GROW and seals & fcntl.F_SEAL_SEAL
        assert os.pread(document.fd, 1 << 20, 0) == (docs / "hello.pdf").read_bytes()
    finally:
        document.close()


def test_the_size_cap_is_inclusive(tmp_path: Path) -> None:
    (tmp_path / "hundred.pdf").write_bytes(b"%PDF-" + b"x" * 95)
    document = PathPolicy([tmp_path], 100).open_path("hundred.pdf")
    document.close()
    assert document.size == 100
    with pytest.raises(ToolError) as caught:
        PathPolicy([tmp_path], 99).open_path("hundred.pdf")
    assert (caught.value.code, caught.value.message, caught.value.details) == (
        "too_large",
        "the document is 100 bytes, over the 99-byte cap (--max-file-mb)",
        {"size": 100, "max_bytes": 99},
    )


class CopySpy:
    """Stands in for ``_copy_sealed``: counts calls, optionally reports ``extra`` bytes more than
    it copied (a file that grew while it was copied)."""

    def __init__(self, extra: int = 0) -> None:
        self.calls: list[int] = []
        self.extra = extra

    def __call__(self, fd: int, limit: int, expected: int) -> tuple[int, str, int]:
        self.calls.append(limit)
        memfd, digest, size = _copy_sealed(fd, limit, expected)
        return memfd, digest, size + self.extra


def test_a_changed_file_is_copied_anew_and_the_old_copy_stays_what_it_hashed(tmp_path: Path) -> None:
    """A file rewritten in place (same inode, same size, its old modification time put back) is
    copied and hashed again; a document opened before keeps reading its own copy."""
    target = tmp_path / "a.pdf"
    target.write_bytes(b"%PDF-one")
    policy = PathPolicy([tmp_path], 1000)
    first = policy.open_path("a.pdf")
    times = os.stat(target)
    with target.open("r+b") as handle:
        handle.write(b"%PDF-two")
    os.utime(target, ns=(times.st_atime_ns, times.st_mtime_ns))
    second = policy.open_path("a.pdf")
    try:
        assert first.sha256 == hashlib.sha256(b"%PDF-one").hexdigest()
        assert os.pread(first.fd, 100, 0) == b"%PDF-one"  # the copy, not the file now
        assert second.sha256 == hashlib.sha256(b"%PDF-two").hexdigest()
        assert os.pread(second.fd, 100, 0) == b"%PDF-two"
        assert os.readlink(f"/proc/self/fd/{first.fd}").startswith("/memfd:pdf-airlock-document")
    finally:
        first.close()
        second.close()


def test_an_unchanged_file_is_copied_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its copy is kept: a later open gets a descriptor of its own on the same sealed bytes."""
    spy = CopySpy()
    monkeypatch.setattr("pdf_airlock.server.boundary.paths._copy_sealed", spy)
    data = b"%PDF-" + b"a" * 95
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "cap.pdf").write_bytes(data)
    policy = PathPolicy([tmp_path], len(data))
    documents = [anyio.run(policy.open_path_async, "sub/cap.pdf"), policy.open_path("sub/cap.pdf")]
    try:
        for document in documents:
            assert (document.sha256, document.size, document.display) == (
                hashlib.sha256(data).hexdigest(),
                100,
                os.path.join("sub", "cap.pdf"),
            )
            assert os.pread(document.fd, 200, 0) == data
        assert documents[0].fd != documents[1].fd
    finally:
        for document in documents:
            document.close()
    assert spy.calls == [101]  # the cap and one byte more, once


def test_the_copies_kept_are_bounded_oldest_first(tmp_path: Path) -> None:
    policy = PathPolicy([tmp_path], 1000)
    before = len(os.listdir("/proc/self/fd"))
    for n in range(COPIES_KEPT + 3):
        (tmp_path / f"{n}.pdf").write_bytes(f"%PDF-{n}".encode())
        policy.open_path(f"{n}.pdf").close()
    kept = [(size, digest) for _fd, digest, size in policy._copies.values()]
    assert len(kept) == COPIES_KEPT
    assert kept[0] == (6, hashlib.sha256(b"%PDF-3").hexdigest())  # the three oldest were let go
    assert len(os.listdir("/proc/self/fd")) == before + COPIES_KEPT  # and their descriptors closed


def test_a_file_that_grew_past_the_cap_while_copied_is_refused_async(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("pdf_airlock.server.boundary.paths._copy_sealed", CopySpy(extra=1))
    (tmp_path / "a.pdf").write_bytes(b"%PDF-grows")
    policy = PathPolicy([tmp_path], 10)
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(ToolError) as caught:
        anyio.run(policy.open_path_async, "a.pdf")
    assert caught.value.details == {"size": 11, "max_bytes": 10}
    assert len(os.listdir("/proc/self/fd")) == before  # neither the file nor its copy left open


def test_a_file_over_the_cap_once_copied_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.pdf").write_bytes(b"%PDF-grows" + b"x" * 5)
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(ToolError) as caught:
        PathPolicy([tmp_path], 14).open_path("a.pdf")
    assert caught.value.details == {"size": 15, "max_bytes": 14}
    assert len(os.listdir("/proc/self/fd")) == before


def test_only_files_over_the_inline_limit_are_hashed_in_a_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threaded: list[object] = []
    run_sync = anyio.to_thread.run_sync

    async def spy(function: Any, *args: Any) -> Any:
        threaded.append(function)
        return await run_sync(function, *args)

    monkeypatch.setattr(anyio.to_thread, "run_sync", spy)
    (tmp_path / "at.pdf").write_bytes(b"a" * HASH_INLINE_MAX)
    (tmp_path / "over.pdf").write_bytes(b"b" * (HASH_INLINE_MAX + 1))
    policy = PathPolicy([tmp_path], 1 << 30)
    for name, count in (("at.pdf", 0), ("over.pdf", 1)):
        document = anyio.run(policy.open_path_async, name)
        document.close()
        assert len(threaded) == count
    at_limit = "A" * HASH_INLINE_MAX
    over_limit = at_limit + "AAAA"
    for encoded, count in ((at_limit, 1), (over_limit, 2)):
        document = anyio.run(policy.open_inline_async, encoded)
        document.close()
        assert len(threaded) == count and document.size == len(encoded) * 3 // 4


def test_inline_data_is_a_sealed_close_on_exec_memfd() -> None:
    data = b"%PDF-1.7 inline!!!"  # 18 bytes: no base64 padding, so the cap can be exact
    document = PathPolicy([Path("/nonexistent")], 18).open_inline(base64.b64encode(data).decode())
    try:
        assert (document.size, document.sha256, document.display) == (
            18,
            hashlib.sha256(data).hexdigest(),
            "<inline data>",
        )
        assert os.readlink(f"/proc/self/fd/{document.fd}") == "/memfd:pdf-airlock-inline (deleted)"
        assert os.get_inheritable(document.fd) is False
        assert fcntl.fcntl(document.fd, fcntl.F_GET_SEALS) == SEALS
        assert os.pread(document.fd, 100, 0) == data
    finally:
        document.close()


@pytest.mark.parametrize(
    ("encoded", "cap", "code"),
    [
        ("", 10, None),
        ("A" * 12, 9, None),  # 9 bytes, no padding: exactly the cap
        ("A" * 16, 11, "too_large"),  # 12 bytes
        ("!" * 100, 10, "too_large"),  # refused on its length, before it is decoded
        ("!" * 100, 75, "invalid_arguments"),
        ("QUJD\n", 10, "invalid_arguments"),
        ("é" * 4, 10, "invalid_arguments"),
    ],
)
def test_inline_data_limits(encoded: str, cap: int, code: str | None) -> None:
    policy = PathPolicy([Path("/nonexistent")], cap)
    if code is None:
        document = policy.open_inline(encoded)
        document.close()
        assert document.size == len(base64.b64decode(encoded))
        return
    with pytest.raises(ToolError) as caught:
        policy.open_inline(encoded)
    assert caught.value.code == code
    if code == "invalid_arguments":
        assert caught.value.message == "data is not valid base64"


def test_inline_data_over_the_cap_says_its_size() -> None:
    with pytest.raises(ToolError) as caught:
        PathPolicy([Path("/nonexistent")], 11).open_inline("A" * 16)
    assert caught.value.message == "the document is 12 bytes, over the 11-byte cap (--max-file-mb)"


def test_a_failed_seal_closes_the_memfd(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object) -> int:
        raise OSError(1, "Operation not permitted")

    monkeypatch.setattr(fcntl, "fcntl", refuse)
    before = len(os.listdir("/proc/self/fd"))
    with pytest.raises(OSError):
        PathPolicy([Path("/nonexistent")], 100).open_inline("QUJD")
    assert len(os.listdir("/proc/self/fd")) == before


def test_padded_inline_data_at_the_cap_opens() -> None:
    """10 bytes encode to 16 characters ending in "=="; 16 * 3 // 4 is 12, so a cap of 10 (or
    11) refuses a 10-byte document, and reports it as 12 bytes."""
    document = PathPolicy([Path("/nonexistent")], 10).open_inline(base64.b64encode(b"0123456789").decode())
    document.close()
    assert document.size == 10


def test_closing_a_document_twice_is_harmless(docs: Path) -> None:
    document = PathPolicy([docs], 1 << 30).open_path("hello.pdf")
    fd = document.fd
    document.close()
    assert document.fd == -1
    with pytest.raises(OSError):
        os.fstat(fd)
    document.close()
    assert document.fd == -1


def test_a_document_on_fd_0_is_closed_too(docs: Path) -> None:
    """With stdin closed (a batch run under ``<&-``), ``open`` returns fd 0: it is closed once
    copied, like any other, and the copy when the document is."""
    saved = os.dup(0)
    try:
        os.close(0)
        document = PathPolicy([docs], 1 << 30).open_path("hello.pdf")
        with pytest.raises(OSError):
            os.fstat(0)
        copy = document.fd
        document.close()
        with pytest.raises(OSError):
            os.fstat(copy)
    finally:
        os.dup2(saved, 0)
        os.close(saved)
