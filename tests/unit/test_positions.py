"""A job child's position must move past the call's: one that stays put would send a client
that follows cursors (``batch`` does) round for ever, so it is refused as ``crashed``."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pdfs
import pytest

from pdf_airlock.server.boundary.paths import Document, PathPolicy
from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.tools import base as tools
from pdf_airlock.server.tools.outline import PdfOutlineOutput, PdfOutlineUntrusted
from pdf_airlock.server.tools.read import PdfReadOutput, PdfReadUntrusted


@pytest.fixture
def document(tmp_path: Path) -> Any:
    encoded = base64.b64encode(pdfs.text_pdf(["one", "two"])).decode()
    opened = PathPolicy([tmp_path], 1 << 20).open_inline(encoded)
    yield opened
    opened.close()


def read_result(next_position: dict[str, int] | None) -> PdfReadUntrusted:
    page = {
        "page": 2,
        "text": "tw",
        "offset": 0,
        "complete": False,
        "text_layer": "ok",
        "text_source": "text_layer",
        "ocr_confidence": None,
    }
    untrusted = {"engine": "fast", "page_count": 2, "selected_pages": 2, "pages": [page], "warnings": []}
    return PdfReadUntrusted.model_validate(untrusted | {"next": next_position})


def publish_read(document: Document, start: dict[str, int], next_position: dict[str, int] | None) -> Any:
    position = tools.Position("next", "pdf_read", "key", start)
    return tools.published(PdfReadOutput, read_result(next_position), [], document, position=position)


@pytest.mark.parametrize("stuck", [{"index": 1, "offset": 0}, {"index": 0, "offset": 9}])
def test_a_read_position_that_does_not_advance_is_crashed(document: Document, stuck: dict[str, int]) -> None:
    with pytest.raises(ToolError) as raised:
        publish_read(document, {"index": 1, "offset": 0}, stuck)
    assert raised.value.code == "crashed"


def test_a_read_position_that_advances_is_a_cursor(document: Document) -> None:
    assert publish_read(document, {"index": 1, "offset": 0}, {"index": 1, "offset": 2}).cursor
    assert publish_read(document, {"index": 0, "offset": 7}, {"index": 1, "offset": 0}).cursor
    assert publish_read(document, {"index": 1, "offset": 0}, None).cursor is None


def test_a_list_position_that_does_not_advance_is_crashed(document: Document) -> None:
    untrusted = {"items": [], "truncated": False, "warnings": []}

    def publish(start: int, next_start: int) -> Any:
        result = PdfOutlineUntrusted.model_validate(untrusted | {"next_start": next_start})
        position = tools.Position("next_start", "pdf_outline", "key", {"start": start})
        return tools.published(PdfOutlineOutput, result, [], document, position=position)

    assert publish(3, 4).cursor
    with pytest.raises(ToolError) as raised:
        publish(3, 3)
    assert raised.value.code == "crashed"
