"""The store of answers delivered as resources (``pdf_airlock.server.app.resources``): parts,
owners, expiry, the memory and disk bounds and the disk's integrity rules. Over stdio:
``tests/protocol/test_resources_prompts.py``; another principal's read over HTTP:
``tests/protocol/test_http.py`` (``test_a_delivered_answer_is_readable_only_by_its_principal``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pdf_airlock.server.app.resources import RESOURCE_URI, ResourceStore, parse_uri

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
