"""``pdf-airlock batch-merge``: the shard outputs of a sharded ``batch`` run, as one file.

Given the ``--out`` of the sharded run, it finds the shard files beside it
(``pdf_airlock.server.batch.shard.shard_files``) and writes one line per document (its tool and
path) to the merged output: the last line that settles it (a result, or an error that is not
``retryable``), else its last line. It reports, as one ``batch_merge_done`` event on stderr:

- ``missing_shards``: shard indexes with no file (a shard that never started);
- ``duplicates``: documents settled more than once (in two shards, or twice in one: their
  bytes changed between two runs of a shard); the merged file keeps one line each;
- ``missing``: with the run's inputs given again (the same paths, ``--list`` and ``--root``),
  every document listed that no shard settled, with the shard that owns it (the one to run
  again);
- ``unreadable_lines``: lines that are not whole JSON (a shard killed mid-write and not run
  again).

The shard files are read a line at a time, twice (the lines to keep, then copying them), never
whole: rendered pages make large outputs. The merged file is written beside its final name and
renamed into place, so a reader never sees half of it. Exit status 0 when every shard is there
and no document is missing or duplicated, 1 otherwise, 2 when no shard file is found.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, Final

from pdf_airlock.server.batch.inputs import Unlisted
from pdf_airlock.server.batch.shard import ShardError, document_key, shard_files, shard_of
from pdf_airlock.server.log import report_logger

__all__ = ["MergeReport", "merge_shards"]

# Paths named in the closing event, each list; the counts are always whole.
SHOWN: Final = 100
_COPY_CHUNK: Final = 1 << 20


@dataclass(slots=True)
class _Seen:
    """Where a document's line to keep is, and how many lines settle it (and in which shards)."""

    shard: int
    offset: int
    length: int
    settled_in: list[int] = field(default_factory=list)


@dataclass(slots=True)
class MergeReport:
    shards: int
    missing_shards: list[int]
    documents: int = 0
    duplicates: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)
    unreadable_lines: int = 0

    @property
    def status(self) -> int:
        return 1 if self.missing_shards or self.duplicates or self.missing else 0

    def log(self) -> None:
        report_logger().info(
            "batch_merge_done",
            shards=self.shards,
            missing_shards=self.missing_shards,
            documents=self.documents,
            duplicates=len(self.duplicates),
            duplicated=self.duplicates[:SHOWN],
            missing=len(self.missing),
            missing_documents=self.missing[:SHOWN],
            unreadable_lines=self.unreadable_lines,
        )


def _lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(offset, line) of each line of a file, newline included."""
    offset = 0
    with open(path, "rb") as lines:
        for line in lines:
            yield offset, line
            offset += len(line)


def _settles(record: dict[str, Any]) -> bool:
    error = record.get("error")
    return not (isinstance(error, dict) and error.get("retryable") is True)


def _scan(files: dict[int, Path], report: MergeReport) -> dict[tuple[str, str], _Seen]:
    kept: dict[tuple[str, str], _Seen] = {}
    for index, path in sorted(files.items()):
        for offset, line in _lines(path):
            try:
                record = json.loads(line)
                identity = (str(record.get("tool", "")), str(record["path"]))
            except (ValueError, KeyError, TypeError, AttributeError):
                report.unreadable_lines += 1
                continue
            seen = kept.get(identity)
            settles = _settles(record)
            if seen is None:
                seen = kept[identity] = _Seen(index, offset, len(line))
            elif settles or not seen.settled_in:  # a settling line stands over a retryable one
                seen.shard, seen.offset, seen.length = index, offset, len(line)
            if settles:
                seen.settled_in.append(index)
    return kept


def _write(out: Path, files: dict[int, Path], kept: dict[tuple[str, str], _Seen]) -> None:
    temporary = out.with_name(f".{out.name}.merging")
    in_order = sorted(kept.values(), key=lambda seen: (seen.shard, seen.offset))
    with open(temporary, "wb") as merged:
        for index, lines in itertools.groupby(in_order, key=lambda seen: seen.shard):
            with open(files[index], "rb") as source:
                for seen in lines:
                    source.seek(seen.offset)
                    _copy(source, merged, seen.length)
        merged.flush()
        os.fsync(merged.fileno())
    os.replace(temporary, out)


def _copy(source: BinaryIO, merged: BinaryIO, length: int) -> None:
    """One line, in bounded reads; a whole last line without its newline gets one."""
    last = b""
    while length > 0 and (last := source.read(min(length, _COPY_CHUNK))):
        merged.write(last)
        length -= len(last)
    if not last.endswith(b"\n"):
        merged.write(b"\n")


def merge_shards(
    out: Path, merged: Path, expected: Sequence[Path | Unlisted] | None, roots: Sequence[Path]
) -> MergeReport:
    """Merge the shard files of a run whose ``--out`` was ``out`` into ``merged``; with the run's
    inputs listed again (``expected``), also the documents no shard settled."""
    count, files = shard_files(out)
    if any(os.path.realpath(merged) == os.path.realpath(path) for path in files.values()):
        raise ShardError("--merged names one of the shard files it would read")
    report = MergeReport(shards=count, missing_shards=sorted(set(range(count)) - set(files)))
    kept = _scan(files, report)
    _write(merged, files, kept)
    report.documents = len(kept)
    report.duplicates = [
        {"tool": tool, "path": path, "shards": seen.settled_in}
        for (tool, path), seen in kept.items()
        if len(seen.settled_in) > 1
    ]
    if expected is not None:
        settled = {path for (_, path), seen in kept.items() if seen.settled_in}
        for found in expected:
            path = found.path if isinstance(found, Unlisted) else found
            if str(path) not in settled:
                owner = shard_of(document_key(path, roots), count)
                report.missing.append({"path": str(path), "shard": owner})
    return report
