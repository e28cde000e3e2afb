"""Text normalisations shared by the engines, so a word reads (and is found) the same in both.

Input: text an engine extracted from an untrusted document; nothing else is assumed.

- Line breaks: ``\\r\\n`` and ``\\r`` become ``\\n``.
- Ligatures: the Latin presentation forms U+FB00..U+FB06 (``ﬁ``, ``ﬂ``, ``ﬀ``...) become their
  letters, as Unicode's compatibility decomposition says.
- Hyphenation across a line break is joined: PDFium marks such a hyphen with U+FFFE and drops
  the break (``com\\ufffepile``), which becomes ``compile``; in pdfminer's text a hyphen that ends
  a line between two letters, the next one lower case (``com-\\npile``), is joined the same way.
  A hyphen before an upper-case letter or a digit is kept (``Jean-\\nPierre``, ``COVID-\\n19``).
"""

from __future__ import annotations

import re
from typing import Final

import regex

__all__ = ["layout_text", "pdfium_text", "searchable", "text_layer"]

_PDFIUM_HYPHEN: Final = "\ufffe"
_LIGATURES: Final = {
    0xFB00: "ff",
    0xFB01: "fi",
    0xFB02: "fl",
    0xFB03: "ffi",
    0xFB04: "ffl",
    0xFB05: "st",
    0xFB06: "st",
}
_PDFIUM_TABLE: Final = {**_LIGATURES, ord(_PDFIUM_HYPHEN): None}
_SPECIAL: Final = regex.compile("[\ufffe\ufb00-\ufb06]")
_LINE_END_HYPHEN: Final = regex.compile(r"(?<=\p{L})-\n(?=\p{Ll})")
# A page's text layer is unusable when a good share of its characters are glyph codes without a
# Unicode map: control, private-use, surrogate or replacement characters, or pdfminer's (cid:N).
# (``re``, not ``regex``: a plain character class is several times faster over a page of text.)
_GARBAGE: Final = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ue000-\uf8ff\ud800-\udfff\ufffd\U000f0000-\U0010ffff]"
)
_CID: Final = re.compile(r"\(cid:\d+\)")  # pdfminer's stand-in for a glyph it cannot map
_WHITESPACE: Final = re.compile(r"\s+")
_JUDGED_MIN_CHARS: Final = 20
_MAX_GARBAGE_SHARE: Final = 0.3


def _lines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def pdfium_text(raw: str) -> str:
    """PDFium's page text as a read returns it."""
    return _lines(raw).translate(_PDFIUM_TABLE)


def layout_text(raw: str) -> str:
    """pdfminer's page text as a read returns it."""
    joined: str = _LINE_END_HYPHEN.sub("", _lines(raw).translate(_LIGATURES))
    return joined


def searchable(raw: str) -> tuple[str, list[int] | None]:
    """PDFium's text with ligatures and hyphenation mended, and for each of its characters (plus
    one past the end) the index of the PDFium character it came from, so a match still maps to
    character boxes. None: nothing changed, the indices are the same."""
    if not _SPECIAL.search(raw):
        return raw, None
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(raw):
        if char == _PDFIUM_HYPHEN:
            continue
        letters = _LIGATURES.get(ord(char), char)
        chars.append(letters)
        origin.extend([index] * len(letters))
    origin.append(len(raw))
    return "".join(chars), origin


def text_layer(text: str) -> str:
    """``ok``, ``none`` (no text at all) or ``unusable`` (it decodes to garbage), for a page's
    whole text as its engine extracted it (before control characters are removed)."""
    if not _GARBAGE.search(text) and "(cid:" not in text:  # the common case, at C speed
        return "ok" if text and not text.isspace() else "none"
    visible = _CID.sub("\x00", _WHITESPACE.sub("", text))
    if not visible:
        return "none"
    if len(visible) < _JUDGED_MIN_CHARS:
        return "ok"
    garbage = len(_GARBAGE.findall(visible))
    return "unusable" if garbage >= _MAX_GARBAGE_SHARE * len(visible) else "ok"
