"""Completions of ``path`` and ``pages`` (``pdf_airlock.server.app.completions``): a real folder
tree with symbolic links pointing in and out of the root, hidden entries and other roots. Over
the protocol: ``tests/protocol/test_era_matrix.py`` (every client) and
``tests/protocol/test_resources_prompts.py`` (refusals)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pdf_airlock.server.app.completions import MAX_VALUES, complete_pages, complete_path
from pdf_airlock.server.boundary.paths import PathPolicy


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("complete")
    root, other, outside = base / "root", base / "other", base / "outside"
    for folder in (root, other, outside, root / "reports", root / "reports" / "2024", root / ".hidden"):
        folder.mkdir()
    for path in (
        root / "alpha.pdf",
        root / "ALPHA-2.PDF",
        root / "reports" / "annual.pdf",
        root / "reports" / "2024" / "q1.pdf",
        root / ".hidden" / "secret.pdf",
        root / ".dotfile.pdf",
        other / "alpaca.pdf",
        outside / "away.pdf",
    ):
        path.write_bytes(b"%PDF-1.7\n")
    (root / "notes.txt").write_text("not a PDF")
    (root / "all-out").symlink_to(outside)  # a folder link out of the root
    (root / "away-link.pdf").symlink_to(outside / "away.pdf")  # a file link out
    (root / "alpha-link.pdf").symlink_to(root / "alpha.pdf")  # a link that stays inside
    (root / "reports" / "up").symlink_to(root)  # a loop
    return {"root": root, "other": other, "outside": outside}


def values(paths: PathPolicy, typed: str) -> list[str]:
    return complete_path(paths, typed)[0]


def test_pdfs_and_folders_by_prefix_without_links(tree: dict[str, Path]) -> None:
    paths = PathPolicy([tree["root"]], 1 << 20)
    assert values(paths, "") == ["ALPHA-2.PDF", "alpha.pdf", "reports/"]
    assert values(paths, "al") == ["alpha.pdf"]
    assert values(paths, "a") == ["alpha.pdf"]  # no link, in or out of the root, no text file
    assert values(paths, "reports/") == ["reports/2024/", "reports/annual.pdf"]
    assert values(paths, "reports/2024/q") == ["reports/2024/q1.pdf"]
    assert values(paths, "./reports/an") == ["./reports/annual.pdf"]


@pytest.mark.parametrize(
    "typed",
    ["all-out/", "all-out/aw", "reports/up/", "reports/up/alpha", "../outside/", "reports/../../outside/"],
)
def test_nothing_through_a_link_or_out_of_the_root(tree: dict[str, Path], typed: str) -> None:
    assert values(PathPolicy([tree["root"]], 1 << 20), typed) == []


def test_hidden_entries_only_for_a_dot(tree: dict[str, Path]) -> None:
    paths = PathPolicy([tree["root"]], 1 << 20)
    assert values(paths, ".") == [".dotfile.pdf", ".hidden/"]
    assert values(paths, ".hidden/") == [".hidden/secret.pdf"]


def test_absolute_paths_under_a_root_only(tree: dict[str, Path]) -> None:
    root = os.path.realpath(tree["root"])
    paths = PathPolicy([tree["root"]], 1 << 20)
    assert values(paths, root + "/rep") == [root + "/reports/"]
    assert values(paths, root[:-2]) == [root + "/"]
    assert values(paths, os.path.realpath(tree["outside"]) + "/") == []
    assert values(paths, "/etc/pas") == []


def test_every_root_of_the_caller_and_no_other(tree: dict[str, Path]) -> None:
    both = PathPolicy([tree["root"], tree["other"]], 1 << 20)
    assert values(both, "alp") == ["alpaca.pdf", "alpha.pdf"]
    assert values(PathPolicy([tree["other"]], 1 << 20), "alp") == ["alpaca.pdf"]
    assert values(PathPolicy([], 1 << 20), "") == []  # a principal with no roots


def test_at_most_a_hundred_values_and_the_total(tmp_path: Path) -> None:
    for n in range(MAX_VALUES + 20):
        (tmp_path / f"doc-{n:03d}.pdf").write_bytes(b"%PDF")
    found, total = complete_path(PathPolicy([tmp_path], 1 << 20), "doc-")
    assert len(found) == MAX_VALUES and total == MAX_VALUES + 20


def test_page_labels_complete_the_last_part() -> None:
    info = {"pages": [{"label": label} for label in ("i", "ii", "iii", "1", "2", "A-1")]}
    assert complete_pages(info, "i") == (["i", "ii", "iii"], 3)
    assert complete_pages(info, "ii") == (["ii", "iii"], 2)
    assert complete_pages(info, "1-2,a") == (["1-2,A-1"], 1)
    assert complete_pages(info, "") == (["i", "ii", "iii", "1", "2", "A-1"], 6)
    assert complete_pages({}, "1") == ([], 0)
