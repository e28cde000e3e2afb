"""Text hygiene for strings that come out of a job child.

Strips what could steer a terminal or hide text from a human reviewer: C0/C1 control
characters (tab and newline kept), ANSI escape sequences, bidi overrides and zero-width marks.
Returns the cleaned text and how many characters were removed, so callers can warn.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["clean_text", "removal_warnings"]

_ANSI: Final = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[0-~]")
_INVISIBLE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]"
)

_KEPT_ASCII: Final = bytes(range(0x20, 0x7F)) + b"\t\n"


def clean_text(text: str) -> tuple[str, int]:
    if text.isascii() and not text.encode("ascii").translate(None, _KEPT_ASCII):
        return text, 0  # printable ASCII, tab and newline only: nothing to strip, no regex pass
    without_ansi = _ANSI.sub("", text)
    cleaned = _INVISIBLE.sub("", without_ansi)
    return cleaned, len(text) - len(cleaned)


def removal_warnings(removed: int) -> list[str]:
    """The warning a tool result carries when ``removed`` characters were stripped from it."""
    return [f"removed {removed} control/invisible character(s) from the text"] if removed else []
