"""The documents a ``batch`` run names: files as given, directories walked for ``*.pdf``.

Nothing named is dropped in silence. In a directory, every entry whose name ends in ``.pdf``
(any case) and that is not itself a directory is a document, whatever it is (a FIFO, a device,
a dangling symbolic link): the tool's path policy answers for it with a typed error
(``not_a_file``, ``not_found``, ``path_denied``), as it would for any call naming it. Symbolic
links to directories are followed when they stay inside the roots, each directory once (a link
back up the tree is not walked again); a folder of untrusted uploads holding a link to ``/``
is not a way to list the host. A directory that cannot be listed, or a link to one outside the
roots, is an ``Unlisted`` entry of its own, which ``batch`` writes as a failed line.

Without ``--root`` the roots are what the operator named (``named_roots``): each folder, and
the folder of each file. A link in a named folder to a document elsewhere is ``path_denied``,
as any call outside the roots. Each path comes once, in a repeatable order: as given; within a
directory, its own documents by name, then each subdirectory's (by name, depth first).

``--list FILE`` names inputs one a line (``listed``), as the command line would: a file or a
folder, a relative path taken from the working directory; blank lines and lines starting with
``#`` are skipped. Names are bytes as the file system has them (undecodable bytes kept).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pdf_airlock.server.boundary.paths import within

__all__ = ["Unlisted", "documents", "listed", "named_roots"]


@dataclass(frozen=True, slots=True)
class Unlisted:
    """A directory not walked: it could not be listed (``reason``: the system's message) or it is
    a link to one outside the roots."""

    path: Path
    reason: str


def named_roots(paths: Iterable[Path]) -> tuple[Path, ...]:
    """The roots of a run without ``--root``: each folder named, the folder of each file named
    (through symbolic links: the operator named them)."""
    roots = [real if real.is_dir() else real.parent for real in (path.resolve() for path in paths)]
    return tuple(dict.fromkeys(roots))


def listed(list_file: Path) -> list[Path]:
    """The inputs a ``--list`` file names, in its order (``OSError`` if it cannot be read)."""
    with open(list_file, encoding="utf-8", errors="surrogateescape", newline="\n") as lines:
        names = [line.removesuffix("\n").removesuffix("\r") for line in lines]
    return [Path(name) for name in names if name.strip() and not name.startswith("#")]


def documents(paths: Iterable[Path], roots: Sequence[Path]) -> Iterator[Path | Unlisted]:
    given: set[str] = set()
    walked: set[tuple[int, int]] = set()  # (device, inode) of every directory listed
    inside = tuple(os.path.realpath(root) for root in roots)
    for path in paths:
        for found in _walk(path, walked, inside) if path.is_dir() else (path,):
            key = os.path.abspath(found.path if isinstance(found, Unlisted) else found)
            if key not in given:
                given.add(key)
                yield found


def _walk(top: Path, walked: set[tuple[int, int]], roots: tuple[str, ...]) -> Iterator[Path | Unlisted]:
    """Depth first without recursion: a tree deeper than Python's stack is still walked."""
    pending: list[Path] = [top]
    while pending:
        directory = pending.pop()
        try:
            status = directory.stat()
            if (status.st_dev, status.st_ino) in walked:
                continue
            walked.add((status.st_dev, status.st_ino))
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as exc:
            yield Unlisted(directory, exc.strerror or type(exc).__name__)
            continue
        subdirectories = []
        for entry in entries:
            if _is_dir(entry):
                if entry.is_symlink() and not _inside(entry.path, roots):
                    yield Unlisted(Path(entry.path), "a link to a directory outside the allowed roots")
                else:
                    subdirectories.append(Path(entry.path))
            elif entry.name.lower().endswith(".pdf"):
                yield Path(entry.path)
        pending.extend(reversed(subdirectories))


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    return any(within(real, root) for root in roots)


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()  # follows a symbolic link; a dangling or looping one is not a directory
    except OSError:
        return False
