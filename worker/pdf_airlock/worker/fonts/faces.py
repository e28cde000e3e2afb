"""The faces of one font file (TrueType, OpenType, or a collection of them), read from its
headers as PDFium's own font list reads them (``CFX_FolderFontInfo::ReportFace``).

Runs in the zygote on the catalogue's files (trusted, but read defensively: a short or damaged
file yields no face rather than an exception). Each face keeps what the font mapper needs: its
name (family, plus the style unless it is "Regular"), the character sets its OS/2 code pages
declare, bold / italic / serif, its table directory and where it starts in its file.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ANSI",
    "BOLD",
    "CHARSET_FLAGS",
    "ITALIC",
    "SERIF",
    "TTCF",
    "FontFace",
    "faces_of",
]

TTCF: Final = 0x74746366  # 'ttcf'
_NAME: Final = 0x6E616D65  # 'name'
_OS2: Final = 0x4F532F32  # 'OS/2'
_FAMILY_ID: Final = 1
_STYLE_ID: Final = 2
_MAC, _MAC_ROMAN = 1, 0
_WINDOWS, _WINDOWS_UNICODE = 3, 1
_OS2_CODEPAGES_AT: Final = 78
_OS2_MIN_LENGTH: Final = 86
_TABLE_RECORD: Final = 16
_NAME_RECORD: Final = 12
_MAX_FACES: Final = 64
_REGULAR: Final = b"Regular"

# Style bits, as PDFium's (pdfium::kFontStyle*).
SERIF: Final = 2
ITALIC: Final = 64
BOLD: Final = 0x40000

# Character sets (Windows' numbers, as FPDF_SYSFONTINFO has them) and the OS/2 code-page bits
# that declare them, in the order PDFium registers them; every face is also ANSI.
ANSI: Final = 0
CHARSET_FLAGS: Final[tuple[tuple[int, tuple[int, ...]], ...]] = (
    (128, (17,)),  # Shift-JIS
    (134, (18,)),  # GB2312
    (136, (20,)),  # Big5
    (129, (19, 21)),  # Hangul (Wansung, Johab)
    (2, (31,)),  # symbol
)


@dataclass(frozen=True, slots=True)
class FontFace:
    name: bytes  # as PDFium names it: family, then " " + style unless "Regular"
    file: int  # index of its file in the loaded set
    offset: int  # where the face's table directory starts (0 unless in a collection)
    file_size: int
    tables: bytes  # the directory's 16-byte records: tag, checksum, offset, length
    charsets: frozenset[int]
    styles: int

    @property
    def in_collection(self) -> bool:
        return self.offset != 0

    def table(self, tag: int) -> tuple[int, int] | None:
        """(offset in the file, length) of a table of this face, the last record with ``tag``
        winning as in PDFium."""
        found = None
        for start in range(0, len(self.tables) - _TABLE_RECORD + 1, _TABLE_RECORD):
            record_tag, _checksum, offset, length = struct.unpack_from(">IIII", self.tables, start)
            if record_tag == tag:
                found = (offset, length)
        return found


def _u16(data: memoryview, at: int) -> int:
    value: int = struct.unpack_from(">H", data, at)[0]
    return value


def _u32(data: memoryview, at: int) -> int:
    value: int = struct.unpack_from(">I", data, at)[0]
    return value


def _name(names: memoryview, wanted: int) -> bytes:
    """PDFium's ``GetNameFromTT``: the first record of ``wanted`` in Mac Roman (its bytes) or in
    Windows Unicode (UTF-16BE, as UTF-8); empty when there is none."""
    count, strings = _u16(names, 2), _u16(names, 4)
    for index in range(count):
        at = 6 + index * _NAME_RECORD
        if at + _NAME_RECORD > len(names):
            break
        platform, encoding, _language, name_id, length, offset = struct.unpack_from(">HHHHHH", names, at)
        if name_id != wanted:
            continue
        raw = bytes(names[strings + offset : strings + offset + length])
        if platform == _MAC and encoding == _MAC_ROMAN:
            return raw
        if platform == _WINDOWS and encoding == _WINDOWS_UNICODE:
            if not raw or len(raw) % 2:
                return b""
            return raw.decode("utf-16-be", "replace").encode("utf-8")
    return b""


def _face(data: memoryview, file: int, offset: int) -> FontFace | None:
    count = _u16(data, offset + 4)
    directory = offset + 12
    tables = bytes(data[directory : directory + count * _TABLE_RECORD])
    if len(tables) != count * _TABLE_RECORD:
        return None
    probe = FontFace(b"", file, offset, len(data), tables, frozenset(), 0)
    names = probe.table(_NAME)
    if names is None or names[0] + names[1] > len(data):
        return None
    name_table = data[names[0] : names[0] + names[1]]
    family, style = _name(name_table, _FAMILY_ID), _name(name_table, _STYLE_ID)
    if not family:
        return None
    name = family if style == _REGULAR else family + b" " + style
    charsets = {ANSI}
    os2 = probe.table(_OS2)
    if os2 is not None and os2[1] >= _OS2_MIN_LENGTH and os2[0] + os2[1] <= len(data):
        pages = _u32(data, os2[0] + _OS2_CODEPAGES_AT)
        charsets |= {charset for charset, bits in CHARSET_FLAGS if any(pages >> bit & 1 for bit in bits)}
    styles = (BOLD if b"Bold" in style else 0) | (ITALIC if b"Italic" in style or b"Oblique" in style else 0)
    styles |= SERIF if b"Serif" in name else 0
    return FontFace(name, file, offset, len(data), tables, frozenset(charsets), styles)


def faces_of(data: memoryview, file: int) -> list[FontFace]:
    """Every face PDFium would list from this file's bytes, in its order."""
    try:
        if _u32(data, 0) != TTCF:
            face = _face(data, file, 0)
            return [face] if face else []
        count = min(_u32(data, 8), _MAX_FACES)
        found = [_face(data, file, _u32(data, 12 + 4 * index)) for index in range(count)]
    except (struct.error, ValueError):
        return []
    return [face for face in found if face is not None]
