"""Text hygiene on strings from a job child (server/pdf_airlock/server/boundary/sanitize.py),
exact results per case."""

from __future__ import annotations

import base64

import pytest

import pdf_airlock.server.boundary.sanitize as sanitize
from pdf_airlock.server.boundary.sanitize import clean_text, removal_warnings


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


REMOVED = (
    [chr(c) for c in range(0x00, 0x20) if c not in (0x09, 0x0A)]
    + [chr(c) for c in range(0x7F, 0xA0)]
    + ["\u200b", "\u200e", "\u200f", "\ufeff", "\ufff9", "\ufffa", "\ufffb"]
    + [chr(c) for c in range(0x202A, 0x202F)]  # bidi embeddings and overrides
    + [chr(c) for c in range(0x2060, 0x2065)]  # word joiner, invisible operators
    + [chr(c) for c in range(0x2066, 0x206A)]  # bidi isolates
)
# Neighbours of the removed ranges that real text needs: tab, newline, NBSP, the zero-width
# (non-)joiners of Indic and Arabic scripts, the object replacement character.
KEPT = ["\t", "\n", " ", "~", "\u00a0", "\u200c", "\u200d", "\u2010", "\u202f", "\u2065", "\u206a", "\ufffc"]


@pytest.mark.parametrize("char", REMOVED, ids=lambda char: f"U+{ord(char):04X}")
def test_each_control_and_invisible_character_is_removed(char: str) -> None:
    # ESC and a following byte in 0x30-0x7E are one two-byte escape sequence: see below.
    neighbour = " " if char == "\x1b" else ""
    assert clean_text(f"a{char}{neighbour}b") == (f"a{neighbour}b", 1)


@pytest.mark.parametrize("char", KEPT, ids=lambda char: f"U+{ord(char):04X}")
def test_their_neighbours_are_kept(char: str) -> None:
    assert clean_text(f"a{char}b") == (f"a{char}b", 0)


@pytest.mark.parametrize(
    ("untrusted", "cleaned"),
    [
        ("\x1b[1;31;42mbold\x1b[m", "bold"),  # CSI with parameters
        ("\x1b[?25lhidden cursor", "hidden cursor"),  # private CSI
        ("\x1b]8;;http://evil.example\x1b\\link\x1b]8;;\x1b\\", "link"),  # OSC 8 ended by ST
        ("\x1b]0;title", ""),  # an OSC never ended swallows the rest
        ("\x1b_private\x1b\\", "private"),  # APC opener and ST: two-byte escapes
        # Other two-byte escapes (ESC c, ESC 7, ESC 8) are removed whole.
        ("\x1bcreset", "reset"),
        ("\x1b7saved\x1b8", "saved"),
        ("\x9b31mC1 CSI", "31mC1 CSI"),  # the 8-bit CSI is a C1 control: removed, its tail kept
    ],
)
def test_escape_sequences(untrusted: str, cleaned: str) -> None:
    assert clean_text(untrusted)[0] == cleaned
    assert clean_text(untrusted)[1] == len(untrusted) - len(cleaned)


def test_printable_ascii_skips_the_regular_expressions(monkeypatch: pytest.MonkeyPatch) -> None:
    """The common case (plain ASCII text, base64) is answered without a regex pass."""

    class Refuse:
        def sub(self, _replacement: str, _text: str) -> str:
            raise AssertionError("regex pass on printable ASCII")

    monkeypatch.setattr(sanitize, "_ANSI", Refuse())
    monkeypatch.setattr(sanitize, "_INVISIBLE", Refuse())
    printable = "".join(chr(c) for c in range(0x20, 0x7F)) + "\t\n"
    assert clean_text(printable) == (printable, 0)
    with pytest.raises(AssertionError):
        clean_text("x\ry")


@pytest.mark.parametrize(
    ("removed", "warnings"),
    [
        (0, []),
        (1, ["removed 1 control/invisible character(s) from the text"]),
        (40, ["removed 40 control/invisible character(s) from the text"]),
    ],
)
def test_removal_warnings(removed: int, warnings: list[str]) -> None:
    assert removal_warnings(removed) == warnings
