"""PDFium's system-font interface (``FPDF_SYSFONTINFO``) answered from memory the zygote holds.

The font files are in the zygote's memory (``store``): a job child inherits them and opens
nothing. PDFium asks for a face (``MapFont``, ``GetFont``: ``matching``), then for its bytes
(``GetFontData``), which it copies into a buffer of its own: a child copies only the faces its
document uses.

The callbacks run in the job child, under its seccomp filter: they read the index and copy
memory, and make no system call of their own. The names they are given come from the document:
they are only looked up, never echoed. A callback never raises (an exception would be printed
with its frame); a failure is PDFium's "no such font", and PDFium draws its built-in face.
"""

from __future__ import annotations

import ctypes
from typing import Any, Final

import pypdfium2.raw as pdfium_c

from pdf_airlock.worker.fonts.faces import TTCF, FontFace
from pdf_airlock.worker.fonts.matching import FaceIndex
from pdf_airlock.worker.fonts.store import MappedFile

__all__ = ["FontServer"]

_VERSION: Final = 1  # FPDF_SYSFONTINFO version 1: PDFium enumerates the faces (EnumFonts)
_WHOLE_FONT: Final = 0


class FontServer:
    """The faces and their files, behind PDFium's callbacks. ``interface`` is the structure to
    hand ``FPDF_SetSystemFontInfo``; ``callbacks`` the ctypes function pointers it holds."""

    def __init__(self, index: FaceIndex, files: list[MappedFile]) -> None:
        self.index = index
        self.files = files
        self.faces: list[FontFace] = list(index.by_name.values())
        self._handles = {face.name: number for number, face in enumerate(self.faces, start=1)}
        fields = dict(pdfium_c.FPDF_SYSFONTINFO._fields_)
        self.callbacks: dict[str, Any] = {
            "EnumFonts": fields["EnumFonts"](self._enum_fonts),
            "MapFont": fields["MapFont"](self._map_font),
            "GetFont": fields["GetFont"](self._get_font),
            "GetFontData": fields["GetFontData"](self._font_data),
            "GetFaceName": fields["GetFaceName"](self._face_name),
        }
        # Release, GetFontCharset and DeleteFont stay NULL: nothing to free, and no charset to
        # report, as PDFium's own Linux font list answers.
        self.interface = pdfium_c.FPDF_SYSFONTINFO(version=_VERSION, **self.callbacks)

    def _handle(self, face: FontFace | None) -> int | None:
        return self._handles[face.name] if face is not None else None

    def _face(self, handle: int | None) -> FontFace | None:
        if handle is None or not 1 <= handle <= len(self.faces):
            return None
        return self.faces[handle - 1]

    def _enum_fonts(self, _this: object, mapper: int | None) -> None:
        try:
            for name, charset in self.index.installed():
                pdfium_c.FPDF_AddInstalledFont(mapper, name, charset)
        except Exception:  # noqa: S110 - see the module docstring
            pass

    def _map_font(
        self, _this: object, weight: int, italic: int, charset: int, pitch: int, family: Any, _exact: object
    ) -> int | None:
        try:
            name = ctypes.cast(family, ctypes.c_char_p).value or b""
            return self._handle(self.index.map_font(weight, bool(italic), charset, pitch, name))
        except Exception:
            return None

    def _get_font(self, _this: object, family: Any) -> int | None:
        try:
            return self._handle(self.index.get(ctypes.cast(family, ctypes.c_char_p).value or b""))
        except Exception:
            return None

    def _font_data(self, _this: object, handle: int | None, table: int, buffer: Any, size: int) -> int:
        """A table of the face (``table`` 0: the face's font, from its start to the file's end;
        ``ttcf``: its whole collection), copied when ``buffer`` holds it. For a face in a
        collection PDFium computes the face's index from the two sizes."""
        try:
            face = self._face(handle)
            if face is None:
                return 0
            if table == _WHOLE_FONT:
                offset, length = face.offset, face.file_size - face.offset
            elif table == TTCF:
                if not face.in_collection:
                    return 0
                offset, length = 0, face.file_size
            else:
                found = face.table(table)
                if found is None or found[0] + found[1] > face.file_size:
                    return 0
                offset, length = found
            source = self.files[face.file].address + offset
            if buffer and size >= length:
                ctypes.memmove(buffer, source, length)
            elif buffer and table == TTCF:
                # PDFium sums the collection's first bytes to key its cache of collections
                # (``GetChecksumFromTT``) with a buffer too small for the whole: give it them.
                ctypes.memmove(buffer, source, size)
            return length
        except Exception:
            return 0

    def _face_name(self, _this: object, handle: int | None, buffer: Any, size: int) -> int:
        """The face's name, unterminated: PDFium keeps as many bytes as this returns, and a
        name ending in NUL would never equal the document's font name (PDFium then rescales
        glyphs it takes for a substitute's; its own font list gives the bare name)."""
        try:
            face = self._face(handle)
            if face is None:
                return 0
            if buffer and size >= len(face.name):
                ctypes.memmove(buffer, face.name, len(face.name))
            return len(face.name)
        except Exception:
            return 0
