"""Answers delivered as resources (``pdf_airlock.server.resources``): parts, owners, expiry, the
memory and disk bounds and the disk's integrity rules, then end to end over stdio (the link, the
parts read back, the summary, the refusals). Another principal's read over HTTP:
``tests/test_http.py`` (``test_a_delivered_answer_is_readable_only_by_its_principal``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import mcp_types as types
import pdfs
import pytest
from conftest import connect
from mcp.shared.exceptions import MCPError

from pdf_airlock.server.resources import RESOURCE_URI, ResourceStore, parse_uri

SECRET = b"k" * 32
KEY = "call-key"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def fields(**changed: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "tool": "pdf_read",
        "source": "a.pdf",
        "sha256": "ab" * 32,
        "mime_type": "text/plain",
        "title": "Read PDF text: a.pdf",
        "pages": 3,
        "headings": [(1, "Intro")],
        "complete": True,
        "cursor": None,
    }
    return base | changed


def store(tmp: Path | None = None, **kwargs: Any) -> ResourceStore:
    options: dict[str, Any] = {"max_bytes": 1 << 20, "ttl_s": 60.0, "part_chars": 100} | kwargs
    directory = tmp
    disk = options.pop("disk_max_bytes", 1 << 20 if tmp is not None else 0)
    return ResourceStore(
        options["max_bytes"],
        options["ttl_s"],
        options["part_chars"],
        SECRET,
        directory=directory,
        disk_max_bytes=disk,
        clock=options.get("clock", Clock()),
    )


def test_parts_cut_at_line_ends_and_join_to_the_whole() -> None:
    text = "".join(f"line {n:03d} " + "x" * 20 + "\n" for n in range(40))
    delivered = store().put("alice", KEY, fields(), text, private=False)
    assert delivered.parts > 1
    parts = [delivered.part(n) for n in range(1, delivered.parts + 1)]
    assert "".join(parts) == text
    assert all(len(part) <= 100 for part in parts)
    assert all(part.endswith("\n") for part in parts)


def test_only_its_principal_reads_it_until_it_expires() -> None:
    clock = Clock()
    kept = store(clock=clock)
    delivered = kept.put("alice", KEY, fields(), "text", private=False)
    assert kept.get(delivered.id, "alice") is delivered
    assert kept.get(delivered.id, "bob") is None
    assert kept.get(delivered.id, "") is None  # stdio's client is no HTTP principal
    assert [entry.id for entry in kept.listed("alice")] == [delivered.id]
    assert kept.listed("bob") == []
    clock.now += 60
    assert kept.get(delivered.id, "alice") is None
    assert kept.listed("alice") == []


def test_the_same_call_gets_the_same_answer_back() -> None:
    kept = store()
    first = kept.put("alice", KEY, fields(), "text", private=False)
    assert kept.put("alice", KEY, fields(), "text", private=False) is first
    assert kept.put("bob", KEY, fields(), "text", private=False).id != first.id


def test_memory_is_bounded_least_recently_read_first() -> None:
    kept = store(max_bytes=400)  # one answer: at most 100 bytes
    ids = [kept.put("alice", f"key{n}", fields(), "y" * 90, private=False).id for n in range(4)]
    assert kept.get(ids[0], "alice") is not None  # read: now the most recent
    kept.put("alice", "key4", fields(), "y" * 90, private=False)
    assert kept.get(ids[1], "alice") is None  # the least recently read went
    assert kept.get(ids[0], "alice") is not None
    assert kept.used <= 400
    assert kept.get(kept.put("alice", "big", fields(), "z" * 101, private=False).id, "alice") is None


def test_on_disk_each_entry_is_checked_and_passwords_stay_in_memory(tmp_path: Path) -> None:
    written = store(tmp_path, max_bytes=400)
    public = written.put("alice", "k1", fields(), "public text", private=False)
    secret = written.put("alice", "k2", fields(), "decrypted text", private=True)
    folder = tmp_path / "resources"
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    names = sorted(os.listdir(folder))
    assert len(names) == 1  # the password's answer never went to disk
    assert public.id not in names[0]  # the file's name does not give the URI away
    body = (folder / names[0]).read_bytes()
    assert b"alice" not in body and b"decrypted" not in body
    # A second process with the same secret reads it back, as alice only.
    reader = store(tmp_path)
    assert reader.get(secret.id, "alice") is None
    again = reader.get(public.id, "alice")
    assert again is not None and again.text == "public text"
    assert reader.get(public.id, "bob") is None
    # Edited on disk: refused (its MAC) and removed.
    (folder / names[0]).write_bytes(body.replace(b"public text", b"PUBLIC TEXT"))
    assert store(tmp_path).get(public.id, "alice") is None
    assert os.listdir(folder) == []


def test_a_planted_entry_is_refused(tmp_path: Path) -> None:
    written = store(tmp_path)
    delivered = written.put("alice", "k1", fields(), "text", private=False)
    (name,) = os.listdir(tmp_path / "resources")
    planted = json.dumps({"format": 2, "result": {"id": delivered.id, "text": "planted"}})
    (tmp_path / "resources" / name).write_text("0" * 64 + "\n" + planted)
    assert store(tmp_path).get(delivered.id, "alice") is None


@pytest.mark.parametrize(
    "uri",
    [
        RESOURCE_URI,
        RESOURCE_URI + "short",
        RESOURCE_URI + "A" * 22 + "?part=0",
        RESOURCE_URI + "A" * 22 + "?part=x",
        RESOURCE_URI + "A" * 22 + "/../x",
        "file:///etc/passwd",
        "pdf-airlock://other/" + "A" * 22,
    ],
)
def test_other_uris_name_nothing(uri: str) -> None:
    assert parse_uri(uri) is None


def test_uris_name_an_id_and_a_part() -> None:
    assert parse_uri(RESOURCE_URI + "A" * 22) == ("A" * 22, 1)
    assert parse_uri(RESOURCE_URI + "A" * 22 + "?part=12") == ("A" * 22, 12)


# -- end to end over stdio -------------------------------------------------------------------

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("resources")
    pdfs.write(
        root / "long.pdf", pdfs.text_pdf([f"Page {n}: " + "lorem ipsum dolor " * 30 for n in range(1, 13)])
    )
    pdfs.write(root / "locked.pdf", pdfs.encrypted_pdf("s3cret", "Locked text"))
    return root


async def read_all(client: Any, uri: str) -> list[types.TextResourceContents]:
    parts: list[types.TextResourceContents] = []
    next_uri: str | None = uri
    while next_uri:
        contents = (await client.read_resource(next_uri)).contents[0]
        assert isinstance(contents, types.TextResourceContents)
        parts.append(contents)
        next_uri = (contents.meta or {})["io.pdf-airlock/resource"]["next"]
    return parts


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_delivered_read_is_the_inline_answer_in_parts(folder: Path, mode: str) -> None:
    async with connect(folder, "--resource-part-chars", "1500", "--timeout", "60", mode=mode) as client:
        inline = await client.call_tool("pdf_read", {"path": "long.pdf", "max_chars": 2_000_000})
        result = await client.call_tool("pdf_read", {"path": "long.pdf", "deliver": "resource"})
        assert not result.is_error and result.structured_content is not None
        link = result.content[1]
        assert isinstance(link, types.ResourceLink)
        summary = result.structured_content["resource"]
        assert summary["uri"] == str(link.uri) and summary["pages"] == 12 and summary["complete"] is True
        assert link.mime_type == "text/plain" and link.size == summary["size_bytes"]
        assert "pages" not in result.structured_content  # the text is not inline
        parts = await read_all(client, str(link.uri))
        assert len(parts) == summary["parts"] > 1
        assert [part.uri for part in parts][1] == f"{link.uri}?part=2"
        assert inline.structured_content is not None
        pages = inline.structured_content["pages"]
        expected = "\n".join(f"--- page {page['page']} ---\n{page['text']}" for page in pages)
        assert "".join(part.text for part in parts) == expected
        listed = await client.list_resources()
        assert [str(resource.uri) for resource in listed.resources] == [str(link.uri)]
        again = await client.call_tool("pdf_read", {"path": "long.pdf", "deliver": "resource"})
        assert again.structured_content is not None
        assert again.structured_content["resource"]["uri"] == summary["uri"]  # the same answer
        for wrong in (RESOURCE_URI + "A" * 22, f"{link.uri}?part=99", "file:///etc/passwd"):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(wrong)
            assert refused.value.error.code == types.INVALID_PARAMS


async def test_delivery_off_and_an_answer_too_large_are_refused(folder: Path) -> None:
    async with connect(folder, "--resource-mb", "0", "--timeout", "60") as client:
        off = await client.call_tool("pdf_read", {"path": "long.pdf", "deliver": "resource"})
        assert off.is_error and off.structured_content is not None
        assert off.structured_content["error"]["code"] == "invalid_arguments"
    async with connect(folder, "--resource-mb", "1", "--timeout", "60") as client:  # 256 KiB an answer
        big = pdfs.text_pdf(["word " * 3000 for _ in range(20)])
        pdfs.write(folder / "big.pdf", big)
        large = await client.call_tool("pdf_read", {"path": "big.pdf", "deliver": "resource"})
        assert large.is_error and large.structured_content is not None
        assert large.structured_content["error"]["code"] == "output_limit"
