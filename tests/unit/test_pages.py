"""Page selectors, resolved inside the worker against the real page count."""

from __future__ import annotations

import pytest

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.pages import select_pages


@pytest.mark.parametrize(
    ("selector", "count", "expected"),
    [
        (None, 3, [0, 1, 2]),
        ("all", 2, [0, 1]),
        ("1-3,7", 10, [0, 1, 2, 6]),
        ("8-", 10, [7, 8, 9]),
        ("-2", 10, [0, 1]),
        ("3,1,3", 5, [2, 0]),
        (" 2 - 3 ", 5, [1, 2]),
    ],
)
def test_selectors(selector: str | None, count: int, expected: list[int]) -> None:
    assert select_pages(selector, count) == expected


@pytest.mark.parametrize(
    ("selector", "code"),
    [
        ("0", "invalid_arguments"),
        ("3-2", "invalid_arguments"),
        ("x", "invalid_arguments"),
        ("4", "page_out_of_range"),
    ],
)
def test_bad_selectors(selector: str, code: str) -> None:
    with pytest.raises(WorkerError) as caught:
        select_pages(selector, 3)
    assert caught.value.code == code


LABELS = ["i", "ii", "iii", "1", "2", "A-1", "A-2"]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("ii", [1]),
        ("ii-1", [1, 2, 3]),
        ("A-1", [5]),  # a label containing a dash is matched whole first
        ("A-1-A-2", [5, 6]),
        ("iii,1-2", [2, 0, 1]),  # digits stay physical page numbers
        ("2,ii", [1]),
    ],
)
def test_label_selectors(selector: str, expected: list[int]) -> None:
    assert select_pages(selector, len(LABELS), lambda: LABELS) == expected


@pytest.mark.parametrize("selector", ["xiv", "1-iii-x", "2-i"])
def test_bad_label_selectors(selector: str) -> None:
    with pytest.raises(WorkerError) as caught:
        select_pages(selector, len(LABELS), lambda: LABELS)
    assert caught.value.code == "invalid_arguments"
