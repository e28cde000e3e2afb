"""Argument completion: documents by path, pages by label (``completion/complete``).

``path``: the PDF files and folders under the caller's roots whose path starts with what the
user has typed, relative to a root (or absolute under one). Listed without following any
symbolic link: each folder of the typed path is opened under its root ``O_DIRECTORY |
O_NOFOLLOW`` (a ``..`` or a symlink on the way ends the listing), and a symlink among the
entries is not offered (one that stays inside a root still works when typed). Hidden entries are
offered only to a prefix that starts with a dot. At most ``MAX_SCANNED`` entries of a folder are
looked at.

``pages``: the page labels of the document named by the completion context's ``path`` (as a
viewer shows them: ``iv``, ``A-1``, or the number), from ``tools.info`` run for the caller like any
call (its roots, limits, audit), so the document is opened and read in the sandbox. Only the
last part of a comma-separated selector is completed.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from typing import Any, Final

from pdf_airlock.server.boundary.paths import PathPolicy, within

__all__ = ["MAX_VALUES", "complete_pages", "complete_path"]

MAX_VALUES: Final = 100  # the protocol's cap on one completion's values
MAX_SCANNED: Final = 10_000
MAX_PREFIX_CHARS: Final = 4096
_OPEN_DIR: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_PDF_SUFFIX: Final = ".pdf"


def _listing(root: str, folders: list[str], start: str) -> list[str]:
    """Names in ``root``/``folders`` starting with ``start``: PDF files, and folders with a
    trailing slash; symlinks never followed nor offered. Empty when the folder cannot be opened."""
    fds: list[int] = []
    try:
        fds.append(os.open(root, _OPEN_DIR))
        for folder in folders:
            fds.append(os.open(folder, _OPEN_DIR, dir_fd=fds[-1]))
        found: list[str] = []
        with os.scandir(fds[-1]) as entries:
            for scanned, entry in enumerate(entries):
                if scanned >= MAX_SCANNED:
                    break
                name = entry.name
                if not name.startswith(start) or (name.startswith(".") and not start.startswith(".")):
                    continue
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    found.append(name + "/")
                elif entry.is_file(follow_symlinks=False) and name.lower().endswith(_PDF_SUFFIX):
                    found.append(name)
        return found
    except OSError:
        return []
    finally:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)


def _split(typed: str) -> tuple[list[str], str] | None:
    """(folders, start of the last name) of a relative path typed so far; None for one that
    climbs out (``..``) or is not a plain path."""
    if "\x00" in typed or len(typed) > MAX_PREFIX_CHARS:
        return None
    *folders, start = typed.split("/")
    folders = [folder for folder in folders if folder not in ("", ".")]
    if ".." in folders:
        return None
    return folders, start


def _under(root: str, relative: str) -> Iterable[str]:
    split = _split(relative)
    if split is None:
        return []
    folders, start = split
    lead = relative[: len(relative) - len(start)]
    return (lead + name for name in _listing(root, folders, start))


def complete_path(paths: PathPolicy, typed: str) -> tuple[list[str], int]:
    """(values, total) for a ``path`` typed so far, under ``paths``'s roots."""
    found: dict[str, None] = {}
    if typed.startswith("/"):
        for root in paths.roots:
            if within(typed.rstrip("/") or "/", root) and typed != root:
                base = root.rstrip("/") + "/"
                found.update(dict.fromkeys(base + name for name in _under(root, typed[len(base) :])))
            elif (root.rstrip("/") + "/").startswith(typed):
                found[root.rstrip("/") + "/"] = None
    else:
        for root in paths.roots:
            found.update(dict.fromkeys(_under(root, typed)))
    values = sorted(found)
    return values[:MAX_VALUES], len(values)


def complete_pages(structured: dict[str, Any], typed: str) -> tuple[list[str], int]:
    """(values, total) for a ``pages`` selector typed so far, from a ``tools.info`` result: the
    labels that start its last comma-separated part (case-insensitively), in page order."""
    kept, _, last = typed.rpartition(",")
    lead = kept + "," if kept else ""
    wanted = last.strip().lower()
    labels: dict[str, None] = {}
    for page in structured.get("pages", []):
        label = str(page.get("label", ""))
        if label and label.lower().startswith(wanted):
            labels[label] = None
    values = [lead + label for label in labels]
    return values[:MAX_VALUES], len(values)
