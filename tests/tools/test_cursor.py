"""Signed cursors: a cursor edited, forged or issued by another process is refused exactly like
a malformed one (``invalid_arguments``, "not one this server issued"), in process and over the
real server; a genuine one still pages; a result read back from the disk cache gets its cursor
signed again by the process serving it.

Tests whose names end in ``over_stdio`` spawn the server; ``scripts/mutation.sh --modules signed`` leaves them
out and runs the in-process rest against every mutant of ``server/pdf_airlock/server/tools/cursors.py``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import PROJECT, connect

import pdf_airlock.server.tools.cursors
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.tools.cursors import (
    _b64,
    _unb64,
    cursor_cache_key,
    decode_cursor,
    encode_cursor,
    reissue_cursors,
    selection_key,
    share_key,
)

SHA = hashlib.sha256(b"a document").hexdigest()
OTHER_SHA = hashlib.sha256(b"another document").hexdigest()
KEY = selection_key(pages=None, engine="fast")
NOT_ISSUED = "cursor is not one this server issued"
CURSOR_CHARS = 512  # pdf_airlock.server.tools.models.Cursor's max_length
# The format, spelled out: a test that imported these would follow a changed value.
KEY_LABEL = b"pdf-airlock cursor key"
TAG_BYTES = 16
SECRET = bytes(range(32))  # a --cache-key-file secret


def b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def body_of(token: str) -> dict[str, Any]:
    text = token.partition(".")[0]
    return dict(json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))))


def tampered(token: str, **changes: Any) -> str:
    """``token`` with fields of its body changed and its tag kept: what a client can forge."""
    body = body_of(token) | changes
    _, separator, tag = token.partition(".")
    return b64(json.dumps(body, separators=(",", ":")).encode()) + separator + tag


def refusal(token: str, sha256: str = SHA, tool: str = "pdf_read", key: str = KEY) -> str:
    with pytest.raises(ToolError) as caught:
        decode_cursor(token, sha256, tool, key)
    assert caught.value.code == "invalid_arguments"
    return caught.value.message


def other_process(code: str) -> str:
    """What ``code`` prints in a fresh interpreter: another process, with its own key."""
    run = subprocess.run(
        [sys.executable, "-c", "from pdf_airlock.server.tools.cursors import *\n" + code],
        capture_output=True,
        text=True,
        cwd=PROJECT,
        check=True,
        timeout=60,
    )
    return run.stdout.strip()


# -- in process ------------------------------------------------------------------------------


def test_a_genuine_cursor_round_trips_and_fits_the_schema() -> None:
    position = {"index": 2**40, "offset": 2**40}
    token = encode_cursor(SHA, "pdf_annotations", KEY, position)
    assert decode_cursor(token, SHA, "pdf_annotations", KEY) == position
    assert len(token) < CURSOR_CHARS and token.isascii()


@pytest.mark.parametrize(
    "changes",
    [
        {"p": {"index": 9, "offset": 0}},  # position
        {"p": {"index": 0, "offset": 0, "extra": 1}},
        {"t": "pdf_info", "p": {"start": 0}},  # tool
        {"d": OTHER_SHA[:32]},  # document
        {"a": selection_key(pages="1", engine="fast")},  # arguments
        {"v": 1},
    ],
)
def test_an_edited_cursor_is_refused_as_not_issued(changes: dict[str, Any]) -> None:
    token = encode_cursor(SHA, "pdf_read", KEY, {"index": 1, "offset": 5})
    forged = tampered(token, **changes)
    target = body_of(forged)
    assert refusal(
        forged, sha256=OTHER_SHA if "d" in changes else SHA, tool=target["t"], key=target["a"]
    ) == (NOT_ISSUED)


def test_forged_malformed_and_unsigned_cursors_are_refused_alike() -> None:
    token = encode_cursor(SHA, "pdf_read", KEY, {"index": 1, "offset": 5})
    body, _, tag = token.partition(".")
    unsigned_v1 = b64(
        json.dumps({"v": 1, "d": SHA[:32], "t": "pdf_read", "a": KEY, "p": {"index": 1}}).encode()
    )
    forged = [
        body,  # no tag
        body + ".",
        f"{body}.{b64(bytes(16))}",  # a tag of zeros
        f"{body}.{tag[:-2]}",  # a cut tag
        f"{body}.{tag}=",  # padding: not the one spelling
        f"{body}.{tag}.{tag}",
        unsigned_v1,
        "not a cursor",
        "é" * 10,
        "",
    ]
    assert [refusal(token) for token in forged] == [NOT_ISSUED] * len(forged)


def test_a_cursor_signed_by_another_process_is_refused() -> None:
    foreign = other_process(
        f"print(encode_cursor({SHA!r}, 'pdf_read', {KEY!r}, {{'index': 1, 'offset': 5}}))"
    )
    assert body_of(foreign) == body_of(encode_cursor(SHA, "pdf_read", KEY, {"index": 1, "offset": 5}))
    assert refusal(foreign) == NOT_ISSUED
    with pytest.raises(ToolError):
        cursor_cache_key(foreign)


def test_a_genuine_cursor_used_elsewhere_says_why() -> None:
    token = encode_cursor(SHA, "pdf_read", KEY, {"index": 1, "offset": 5})
    assert refusal(token, tool="pdf_search") == f"{NOT_ISSUED} for this tool"
    assert refusal(token, sha256=OTHER_SHA) == "cursor belongs to a different version of the document"
    assert refusal(token, key=selection_key(pages="1", engine="fast")).startswith(
        "cursor was issued for different"
    )


def test_the_cache_key_of_a_cursor_is_its_position_in_every_process() -> None:
    mine = cursor_cache_key(encode_cursor(SHA, "pdf_read", KEY, {"index": 3, "offset": 0}))
    code = (
        f"print(cursor_cache_key(encode_cursor({SHA!r}, 'pdf_read', {KEY!r}, {{'index': 3, 'offset': 0}})))"
    )
    assert other_process(code) == mine
    assert cursor_cache_key(encode_cursor(SHA, "pdf_read", KEY, {"index": 4, "offset": 0})) != mine


def cached_result(cursor: Any, sha256: str = SHA) -> dict[str, Any]:
    """A result as the disk cache holds it (``CallToolResult`` JSON, by alias)."""
    return {
        "content": [
            {
                "type": "text",
                "text": f"--- page 1 ---\ntext\n--- more text: call again with cursor={cursor} ---",
            },
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        ],
        "structuredContent": {"sha256": sha256, "pages": [], "cursor": cursor},
        "isError": False,
    }


def test_a_cached_cursor_of_an_earlier_process_is_signed_again() -> None:
    earlier = other_process(
        f"print(encode_cursor({SHA!r}, 'pdf_read', {KEY!r}, {{'index': 2, 'offset': 7}}))"
    )
    result = reissue_cursors(cached_result(earlier))
    assert result is not None
    fresh = result["structuredContent"]["cursor"]
    assert fresh != earlier and decode_cursor(fresh, SHA, "pdf_read", KEY) == {"index": 2, "offset": 7}
    assert result["content"][0]["text"].endswith(f"cursor={fresh} ---") and earlier not in str(result)
    assert result["content"][1] == cached_result(earlier)["content"][1]
    assert result["structuredContent"] | {"cursor": earlier} == cached_result(earlier)["structuredContent"]


def test_a_cached_result_without_a_usable_cursor() -> None:
    assert reissue_cursors(cached_result(None)) == cached_result(None)
    token = encode_cursor(SHA, "pdf_read", KEY, {"index": 2, "offset": 7})
    assert reissue_cursors(cached_result(token, sha256=OTHER_SHA)) is None  # another document's
    assert reissue_cursors(cached_result(tampered(token, p={"index": -1}))) is None
    assert reissue_cursors(cached_result("not a cursor")) is None
    assert reissue_cursors(cached_result(5)) is None


def signed_with(secret: bytes, body: bytes) -> str:
    """``body`` signed as a process given ``secret`` (``share_key``) signs it, computed here."""
    key = hmac.new(secret, KEY_LABEL, hashlib.sha256).digest()
    return f"{b64(body)}.{b64(hmac.new(key, body, hashlib.sha256).digest()[:TAG_BYTES])}"


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> bytes:
    """This process signs with the key of ``SECRET`` (as with ``--cache-key-file``) for one test."""
    monkeypatch.setattr(
        pdf_airlock.server.tools.cursors, "_key", pdf_airlock.server.tools.cursors._key
    )  # restored afterwards
    share_key(SECRET)
    return SECRET


def test_the_cursor_format_is_fixed(shared: bytes) -> None:
    """Processes given the same key file take each other's cursors, whichever version wrote them:
    the compact JSON body and its tag, under a key derived from the secret, are the format."""
    token = encode_cursor(SHA, "pdf_read", KEY, {"index": 1, "offset": 5})
    body = f'{{"v":2,"d":"{SHA[:32]}","t":"pdf_read","a":"{KEY}","p":{{"index":1,"offset":5}}}}'
    assert token == signed_with(shared, body.encode())
    assert "=" not in token


def test_only_processes_given_the_same_secret_take_each_others_cursors(shared: bytes) -> None:
    token = encode_cursor(SHA, "pdf_read", KEY, {"index": 1, "offset": 5})
    share_key(bytes(32))
    assert refusal(token) == NOT_ISSUED
    share_key(shared)
    assert decode_cursor(token, SHA, "pdf_read", KEY) == {"index": 1, "offset": 5}


def test_the_selection_key_is_the_digest_of_the_canonical_arguments() -> None:
    canonical = b'{"engine":"fast","pages":"1"}'
    expected = hashlib.sha256(canonical).hexdigest()[:32]
    assert selection_key(pages="1", engine="fast") == selection_key(engine="fast", pages="1") == expected
    assert selection_key(pages="2", engine="fast") != expected


@pytest.mark.parametrize("length", range(7))
def test_base64_is_the_one_unpadded_urlsafe_spelling(length: int) -> None:
    for byte in range(256):  # every last character, "X" and "-" and "_" among them
        raw = bytes([0xFB]) * length + bytes([byte])
        text = base64.urlsafe_b64encode(raw).decode().rstrip("=")
        assert _b64(raw) == text
        assert _unb64(text) == raw
    assert _b64(b"") == "" and _unb64("") == b""


def test_a_position_may_start_at_zero() -> None:
    token = encode_cursor(SHA, "pdf_read", KEY, {"index": 0, "offset": 0})
    assert decode_cursor(token, SHA, "pdf_read", KEY) == {"index": 0, "offset": 0}
    reissued = reissue_cursors(cached_result(token))
    assert reissued is not None and body_of(reissued["structuredContent"]["cursor"]) == body_of(token)


WELL_FORMED = {"v": 2, "d": SHA[:32], "t": "pdf_read", "a": KEY, "p": {"index": 1}}
ILL_FORMED_BODIES = [
    b"not json",
    b"[1]",
    b'"a string"',
    b"[" * 100_000,  # nesting that json.loads refuses with RecursionError
    json.dumps(WELL_FORMED | {"v": 1}).encode(),
    json.dumps({k: v for k, v in WELL_FORMED.items() if k != "v"}).encode(),
    json.dumps({k: v for k, v in WELL_FORMED.items() if k != "p"}).encode(),
    json.dumps(WELL_FORMED | {"p": [1]}).encode(),
    json.dumps(WELL_FORMED | {"p": {"index": -1}}).encode(),
    json.dumps(WELL_FORMED | {"p": {"index": True}}).encode(),
    json.dumps(WELL_FORMED | {"p": {"index": 1.5}}).encode(),
    json.dumps(WELL_FORMED | {"p": {"index": "1"}}).encode(),
]


def test_a_signed_body_that_is_not_a_cursor_is_refused_as_not_issued(shared: bytes) -> None:
    """A tag this process would give, over a body it never writes (a key file shared with a
    buggy or older version): refused like a forgery, never a crash."""
    assert decode_cursor(signed_with(shared, json.dumps(WELL_FORMED).encode()), SHA, "pdf_read", KEY) == {
        "index": 1
    }
    for body in ILL_FORMED_BODIES:
        assert refusal(signed_with(shared, body)) == NOT_ISSUED, body[:40]


@pytest.mark.parametrize("body", ILL_FORMED_BODIES, ids=range(len(ILL_FORMED_BODIES)))
def test_a_cached_cursor_with_an_ill_formed_body_makes_the_entry_useless(body: bytes) -> None:
    assert reissue_cursors(cached_result(b64(body) + ".AAAA")) is None


@pytest.mark.parametrize(
    "old_tag", ["", ".", ".AAAA", ".not base64!"], ids=["none", "empty", "short", "junk"]
)
def test_the_tag_of_a_cached_cursor_plays_no_part(old_tag: str) -> None:
    """The process that signed it is gone, so its tag cannot be checked: the entry's MAC vouches."""
    token = encode_cursor(SHA, "pdf_read", KEY, {"index": 2, "offset": 7})
    result = reissue_cursors(cached_result(token.partition(".")[0] + old_tag))
    assert result is not None and result["structuredContent"]["cursor"] == token


def test_a_cached_result_without_structured_content_is_left_alone() -> None:
    results: list[dict[str, Any]] = [
        {"content": [], "isError": False},
        {"content": [], "structuredContent": None},
        {"content": [], "structuredContent": ["cursor"]},
        {"content": [], "structuredContent": {"sha256": SHA}},
    ]
    for result in results:
        assert reissue_cursors(result) == result


def test_only_text_blocks_quoting_a_cached_cursor_are_rewritten() -> None:
    earlier = other_process(
        f"print(encode_cursor({SHA!r}, 'pdf_read', {KEY!r}, {{'index': 2, 'offset': 7}}))"
    )
    others: list[Any] = [
        {"type": "resource", "text": earlier},
        {"type": "text", "text": 5},
        f"cursor={earlier}",
        None,
    ]
    result = reissue_cursors(
        cached_result(earlier) | {"content": [cached_result(earlier)["content"][0], *others]}
    )
    assert result is not None
    fresh = result["structuredContent"]["cursor"]
    assert result["content"] == [
        {"type": "text", "text": cached_result(fresh)["content"][0]["text"]},
        *others,
    ]


# -- over the real server --------------------------------------------------------------------

READ = {"path": "long.pdf", "max_chars": 700}


def error_of(result: Any) -> dict[str, Any]:
    assert result.is_error is True, result
    return dict(result.structured_content["error"])


@pytest.mark.anyio
async def test_edited_and_foreign_cursors_are_refused_by_the_server_over_stdio(docs: Path) -> None:
    hello = hashlib.sha256((docs / "hello.pdf").read_bytes()).hexdigest()
    async with connect(docs) as first, connect(docs) as second:
        page = await first.call_tool("pdf_read", READ)
        cursor = page.structured_content["cursor"]
        # Each forgery below names a position the tool would serve, were cursors not signed.
        refused = {
            "another server's": await second.call_tool("pdf_read", READ | {"cursor": cursor}),
            "position": await first.call_tool(
                "pdf_read", READ | {"cursor": tampered(cursor, p={"index": 10, "offset": 0})}
            ),
            "tool": await first.call_tool(
                "pdf_info",
                {"path": "long.pdf", "cursor": tampered(cursor, t="pdf_info", a=selection_key(pages=None))},
            ),
            "document": await first.call_tool(
                "pdf_read", READ | {"path": "hello.pdf", "cursor": tampered(cursor, d=hello[:32])}
            ),
        }
        genuine = await first.call_tool("pdf_read", READ | {"cursor": cursor})
        again = await second.call_tool("pdf_read", READ)
    for name, result in refused.items():
        error = error_of(result)
        assert (error["code"], error["message"]) == ("invalid_arguments", NOT_ISSUED), name
    assert genuine.is_error is False
    cut = page.structured_content["pages"][-1]
    assert genuine.structured_content["pages"][0]["page"] == cut["page"]
    assert genuine.structured_content["pages"][0]["offset"] == len(cut["text"]) + cut["offset"]
    # The same position, signed by each server: the same body, different tags.
    assert body_of(again.structured_content["cursor"]) == body_of(cursor)
    assert again.structured_content["cursor"] != cursor


@pytest.mark.anyio
async def test_a_restarted_server_accepts_the_cursor_of_its_cached_answer_over_stdio(
    docs: Path, tmp_path: Path
) -> None:
    key_file = tmp_path / "keys" / "cache.key"
    key_file.parent.mkdir()
    flags = ("--cache-dir", str(tmp_path / "results"), "--cache-key-file", str(key_file))
    async with connect(docs, *flags) as first:
        page = await first.call_tool("pdf_read", READ)
    async with connect(docs, *flags) as restarted:
        cached = await restarted.call_tool("pdf_read", READ)
        following = await restarted.call_tool(
            "pdf_read", READ | {"cursor": cached.structured_content["cursor"]}
        )
    assert cached.structured_content["pages"] == page.structured_content["pages"]
    assert following.is_error is False, error_of(following)


@pytest.mark.anyio
async def test_only_a_server_sharing_the_key_file_takes_an_earlier_cursor_over_stdio(
    docs: Path, tmp_path: Path
) -> None:
    """The cache keys a cursor argument by the position it signs, checked first: a server with
    another key refuses an earlier process's cursor even though a disk entry holds its answer."""
    key_file = tmp_path / "keys" / "cache.key"
    key_file.parent.mkdir()
    results = ("--cache-dir", str(tmp_path / "results"))
    async with connect(docs, *results, "--cache-key-file", str(key_file)) as first:
        earlier = (await first.call_tool("pdf_read", READ)).structured_content["cursor"]
        served = await first.call_tool("pdf_read", READ | {"cursor": earlier})  # cached on disk
    async with connect(docs, *results, "--cache-key-file", str(key_file)) as sharing:
        again = await sharing.call_tool("pdf_read", READ | {"cursor": earlier})
    async with connect(docs, *results) as stranger:  # a per-process key
        replayed = await stranger.call_tool("pdf_read", READ | {"cursor": earlier})
    assert served.is_error is False and again.is_error is False
    assert again.structured_content["pages"] == served.structured_content["pages"]
    error = error_of(replayed)
    assert (error["code"], error["message"]) == ("invalid_arguments", NOT_ISSUED)
