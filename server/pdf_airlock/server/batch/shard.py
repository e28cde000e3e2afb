"""Sharding a ``batch`` run over several processes, containers or machines.

``--shard I/N`` (or ``--shards N`` with the index from ``JOB_COMPLETION_INDEX``, which a
Kubernetes Indexed Job sets, 0 to N-1) makes a run read only the documents whose **key** hashes
to shard I. A document's key is its path relative to the root it lies under (``--root``, or
without it the folder named), with ``/`` between its parts: the same on every machine that
mounts the inputs at the same place relative to the root, whatever the order of the listing and
whatever was added since. The hash is SHA-256 of the key's bytes (the first 8 bytes, big-endian,
modulo N), so every Python, every run and every node agrees on it.

Each shard writes its own output, named for it: ``--out results.jsonl`` is written as
``results.shard-03-of-16.jsonl`` by shard 3 of 16 (``Shard.output``), so restarting a shard (a
Job retries a failed index) resumes its own file: documents settled there are skipped, a torn
last line is cut and its document read again (``pdf_airlock.server.batch.output``).
``pdf-airlock batch-merge`` (``pdf_airlock.server.batch.merge``) finds the shard files by the
same names.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pdf_airlock.server.boundary.paths import within

__all__ = [
    "INDEX_VARIABLE",
    "Shard",
    "ShardError",
    "chosen_shard",
    "document_key",
    "parse_shard",
    "shard_files",
    "shard_of",
]

# The variable a Kubernetes Indexed Job sets in each pod: the completion index, 0 to N-1.
INDEX_VARIABLE: Final = "JOB_COMPLETION_INDEX"
_HASH_BYTES: Final = 8  # of the key's SHA-256: far more than any shard count needs
_MAX_SHARDS: Final = 1_000_000
_SPEC: Final = re.compile(r"^(\d+)/(\d+)$")
_FILE_PART: Final = re.compile(r"\.shard-(\d+)-of-(\d+)$")


class ShardError(ValueError):
    """A shard specification that cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``index`` (from 0) of ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 0 < self.count <= _MAX_SHARDS:
            raise ShardError(f"the shard count must be between 1 and {_MAX_SHARDS}")
        if not 0 <= self.index < self.count:
            raise ShardError(f"the shard index must be between 0 and {self.count - 1}")

    @property
    def name(self) -> str:
        """``shard-03-of-16``: zero-padded, so shard files sort in order."""
        width = len(str(self.count))
        return f"shard-{self.index:0{width}d}-of-{self.count:0{width}d}"

    def output(self, out: Path) -> Path:
        """This shard's file for the run's ``--out``: the shard's name before the suffix."""
        return out.with_name(f"{out.stem}.{self.name}{out.suffix}")

    def owns(self, key: str) -> bool:
        return shard_of(key, self.count) == self.index


def shard_of(key: str, count: int) -> int:
    """The shard of a document key: stable across processes, runs and machines."""
    digest = hashlib.sha256(os.fsencode(key)).digest()
    return int.from_bytes(digest[:_HASH_BYTES], "big") % count


def parse_shard(text: str) -> Shard:
    """``"3/16"`` (index/count, index from 0)."""
    found = _SPEC.match(text.strip())
    if found is None:
        raise ShardError("--shard takes INDEX/COUNT, e.g. 0/4 (the index counts from 0)")
    return Shard(int(found[1]), int(found[2]))


def chosen_shard(spec: str | None, count: int | None, environment: Mapping[str, str]) -> Shard | None:
    """The run's shard: ``--shard I/N``; else ``--shards N`` with ``JOB_COMPLETION_INDEX``;
    else None (the run reads every document)."""
    if spec is not None:
        shard = parse_shard(spec)
        if count is not None and count != shard.count:
            raise ShardError(f"--shard {spec} and --shards {count} disagree")
        return shard
    if count is None:
        return None
    index = environment.get(INDEX_VARIABLE, "")
    if not (index.isascii() and index.isdigit()):
        raise ShardError(f"--shards needs --shard or an index in {INDEX_VARIABLE}")
    return Shard(int(index), count)


def document_key(path: Path, roots: Sequence[Path]) -> str:
    """The path of a document relative to the first root it lies under, by its absolute path
    as listed or, failing that, through the real path of its folder (the roots themselves may
    be real paths); the absolute path when it is under none."""
    listed = os.path.abspath(path)
    candidates = (listed, os.path.join(os.path.realpath(os.path.dirname(listed)), os.path.basename(listed)))
    for root in roots:
        for base in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
            for candidate in candidates:
                if candidate != base and within(candidate, base):
                    return os.path.relpath(candidate, base).replace(os.sep, "/")
    return listed


def shard_files(out: Path) -> tuple[int, dict[int, Path]]:
    """The shard count and each shard's file that a sharded run with ``--out out`` wrote
    (``out.stem`` + ``.shard-I-of-N`` + ``out.suffix``, beside ``out``); raises ``ShardError``
    when there are none or they disagree on the count."""
    found: dict[int, Path] = {}
    counts: set[int] = set()
    pattern = f"{glob_escape(out.stem)}.shard-*-of-*{glob_escape(out.suffix)}"
    for path in sorted(out.parent.glob(pattern)):
        stem = path.name[: len(path.name) - len(out.suffix)] if out.suffix else path.name
        part = _FILE_PART.search(stem)
        if part is None or stem[: part.start()] != out.stem:
            continue
        index, count = int(part[1]), int(part[2])
        if not 0 <= index < count <= _MAX_SHARDS or Shard(index, count).name != part[0][1:]:
            continue  # not a name a run writes (another padding, an index past the count)
        found[index] = path
        counts.add(count)
    if not counts:
        raise ShardError(f"no shard files {out.stem}.shard-I-of-N{out.suffix} in {out.parent}")
    if len(counts) > 1:
        raise ShardError(f"shard files of different counts: {sorted(counts)}")
    return counts.pop(), found


def glob_escape(text: str) -> str:
    """``text`` matched literally by ``Path.glob``."""
    return re.sub(r"([*?\[])", r"[\1]", text)
