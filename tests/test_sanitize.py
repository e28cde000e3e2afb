"""Text hygiene on strings from a job child (server/sanitize.py), exact results per case."""

from __future__ import annotations

import base64

import pytest

from server.sanitize import clean_text


@pytest.mark.parametrize(
    ("untrusted", "cleaned", "removed"),
    [
        ("plain text\twith tab\nand newline", "plain text\twith tab\nand newline", 0),
        ("carriage\r\nreturn", "carriage\nreturn", 1),
        ("\x1b[31mred\x1b[0m", "red", 9),
        ("title\x1b]0;owned\x07end", "titleend", 10),
        ("bidi \u202eevil\u202c", "bidi evil", 2),
        ("zero\u200bwidth\ufeff", "zerowidth", 2),
        ("C1 \x85 and DEL \x7f", "C1  and DEL ", 2),
        ("caf\u00e9 \u4e2d\u6587", "caf\u00e9 \u4e2d\u6587", 0),
        ("", "", 0),
    ],
)
def test_clean_text(untrusted: str, cleaned: str, removed: int) -> None:
    assert clean_text(untrusted) == (cleaned, removed)


def test_base64_passes_unchanged() -> None:
    data = base64.b64encode(bytes(range(256)) * 1000).decode()
    assert clean_text(data) == (data, 0)
