"""A document rewritten in place while it is read: no answer may carry one version's sha256 with
another version's text, and the cache may never hold such an answer.

A writer under a served root rewrites the file in place (same inode, same size), alternating two
versions, in a loop, while the real server (real children) reads it call after call: first with
the cache off, so that every call parses (the race, each time), then with it on, where such an
answer would be kept for that sha256 and served for it again.
The supervisor once hashed the file through its fd and the child read the same fd later, so
answers carried the genuine sha256 with the altered text, and the cache then served that text
for the genuine file to everyone. Every call now copies the file into a sealed memfd and hashes
the copy (``pdf_airlock.server.boundary.paths``): each answer's text is that of the bytes its
sha256 names.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path
from typing import Any

import pdfs
import pytest
from conftest import connect

pytestmark = pytest.mark.anyio

CALLS = 60
GENUINE = "Pay the genuine supplier, account 1111"
ALTERED = "Pay the attacker instead, account 9999"


def _versions() -> tuple[bytes, bytes]:
    """Two documents of one size, differing in their text."""
    genuine, altered = pdfs.text_pdf([GENUINE]), pdfs.text_pdf([ALTERED])
    size = max(len(genuine), len(altered))
    return genuine + b"\n" * (size - len(genuine)), altered + b"\n" * (size - len(altered))


class Rewriter(threading.Thread):
    """Rewrites ``path`` in place with each version in turn until stopped."""

    def __init__(self, path: Path, versions: tuple[bytes, bytes]) -> None:
        super().__init__(daemon=True)
        self.path, self.versions = path, versions
        self.stop = threading.Event()
        self.writes = 0

    def run(self) -> None:
        fd = os.open(self.path, os.O_WRONLY)
        try:
            while not self.stop.is_set():
                os.pwrite(fd, self.versions[self.writes % 2], 0)
                self.writes += 1
        finally:
            os.close(fd)


def _text(result: Any) -> str:
    return "".join(page["text"] for page in result.structured_content["pages"])


async def _race(root: Path, *flags: str) -> tuple[list[Any], Any, int]:
    """``CALLS`` reads while the file is rewritten, then one more once the genuine version is
    back: (the answers, that last answer, the writes made)."""
    genuine, altered = _versions()
    target = root / "invoice.pdf"
    target.write_bytes(genuine)
    answers = []
    async with connect(root, *flags) as client:
        writer = Rewriter(target, (genuine, altered))
        writer.start()
        try:
            for _ in range(CALLS):
                answers.append(await client.call_tool("pdf_read", {"path": "invoice.pdf"}))
        finally:
            writer.stop.set()
            writer.join()
        target.write_bytes(genuine)
        after = await client.call_tool("pdf_read", {"path": "invoice.pdf"})  # the cache's answer, if any
    return answers, after, writer.writes


@pytest.mark.parametrize("cache", ["off", "on"])
async def test_no_answer_mixes_one_version_s_hash_with_another_s_text(tmp_path: Path, cache: str) -> None:
    genuine, altered = _versions()
    text_of = {hashlib.sha256(genuine).hexdigest(): GENUINE, hashlib.sha256(altered).hexdigest(): ALTERED}
    answers, after, writes = await _race(tmp_path, *(["--cache-mb", "0"] if cache == "off" else []))
    assert writes > CALLS  # the file did change under the calls
    named = [a for a in answers if not a.is_error and a.structured_content["sha256"] in text_of]
    assert len(named) >= CALLS // 2  # most reads saw one whole version (the rest, a torn mix)
    mixed = [a for a in named if _text(a).strip() != text_of[a.structured_content["sha256"]]]
    assert mixed == []
    assert after.structured_content["sha256"] == hashlib.sha256(genuine).hexdigest()
    assert _text(after).strip() == GENUINE
