"""Which face answers PDFium's request for a font a document names but does not embed.

PDFium's font mapper (``CFX_FontMapper::FindSubstFont``) turns a font's name, flags and
character set into a request: a family (the Standard 14 names already folded: "Arial,Bold" asks
for "Helvetica-Bold"), a weight, italic or not, a pitch family (serif, fixed, script) and a
character set (ANSI for simple fonts and ``Identity`` CID fonts; Shift-JIS, GB2312, Big5 or
Hangul for CID fonts of those orderings). On Linux its own answer is ``CFX_LinuxFontInfo``
over the files of ``/usr/share/fonts``; this module answers the same way over the catalogue's
faces, so a page renders alike in the job child and in a process that reads the host's fonts,
with two changes, both toward what a viewer draws:

- A CJK character set gets its region's face (Shift-JIS: JP, GB2312: SC, Big5: TC, Hangul: KR),
  serif or sans-serif as asked; PDFium's own answer is the first such face in name order, and
  then the collection's first face whatever it named.
- A name no face matches, but that the catalogue knows as a font made for one script
  (``ALIASES``: "Traditional Arabic", "Mangal", "David", "Angsana New", "SimSun"...), gets the
  family that draws that script; PDFium would draw it with its built-in Latin faces, blank.

A Standard 14 name ("Helvetica", "Times-Roman", "Courier"...) gets no face, as on a host without
Arial, Times New Roman and Courier New: PDFium then draws PDFium's built-in Standard 14 faces,
exactly as before, whose Latin covers Windows' code page 1252 only.

Pure: no I/O, no ctypes; the names come from documents and are only compared.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from pdf_airlock.worker.fonts.catalogue import ALIASES, CJK_FAMILIES, normalized
from pdf_airlock.worker.fonts.faces import ANSI, BOLD, CHARSET_FLAGS, ITALIC, SERIF, FontFace

__all__ = ["DEFAULT", "FaceIndex"]

DEFAULT: Final = 1  # DEFAULT_CHARSET: any face will do
_NORMAL_WEIGHT: Final = 400
_PITCH_FIXED: Final = 1  # FXFONT_FF_FIXEDPITCH
_PITCH_ROMAN: Final = 16  # FXFONT_FF_ROMAN
_PITCH_SCRIPT: Final = 64  # FXFONT_FF_SCRIPT
_SCRIPT_STYLE: Final = 8
_FIXED_STYLE: Final = 1
_BASE14_SUBSTITUTES: Final = {
    b"Courier": b"Courier New",
    b"Courier-Bold": b"Courier New Bold",
    b"Courier-BoldOblique": b"Courier New Bold Italic",
    b"Courier-Oblique": b"Courier New Italic",
    b"Helvetica": b"Arial",
    b"Helvetica-Bold": b"Arial Bold",
    b"Helvetica-BoldOblique": b"Arial Bold Italic",
    b"Helvetica-Oblique": b"Arial Italic",
    b"Times-Roman": b"Times New Roman",
    b"Times-Bold": b"Times New Roman Bold",
    b"Times-BoldItalic": b"Times New Roman Bold Italic",
    b"Times-Italic": b"Times New Roman Italic",
}
_COURIER_NEW: Final = b"Courier New"
_EXACT_BONUS: Final = 4
_MAX_SCORE: Final = 16 + 16 + 16 + 8 + 8 + _EXACT_BONUS


def _score(face: FontFace, weight: int, italic: bool, pitch: int, exact: bool) -> int:
    """PDFium's ``FontFaceInfo::SimilarityScore``."""
    score = 16 if bool(face.styles & BOLD) == (weight > _NORMAL_WEIGHT) else 0
    score += 16 if bool(face.styles & ITALIC) == italic else 0
    score += 16 if bool(face.styles & SERIF) == bool(pitch & _PITCH_ROMAN) else 0
    score += 8 if bool(face.styles & _SCRIPT_STYLE) == bool(pitch & _PITCH_SCRIPT) else 0
    score += 8 if bool(face.styles & _FIXED_STYLE) == bool(pitch & _PITCH_FIXED) else 0
    return score + (_EXACT_BONUS if exact else 0)


def _family_match(family: bytes, name: bytes) -> bool:
    """PDFium's ``FindFamilyNameMatch``: ``family`` in ``name``, not followed by a lower-case
    letter ("Univers" is in "Univers Bold", not in "Universal")."""
    at = name.find(family)
    if at < 0:
        return False
    after = at + len(family)
    return after >= len(name) or not (0x61 <= name[after] <= 0x7A)


class FaceIndex:
    """The loaded faces, by name, and PDFium's questions about them."""

    def __init__(self, faces: Iterable[FontFace]) -> None:
        self.by_name: dict[bytes, FontFace] = {}
        for face in faces:  # the first face of a name wins, as in PDFium's list
            self.by_name.setdefault(face.name, face)
        self._sorted = sorted(self.by_name.items())  # PDFium's std::map order

    def __len__(self) -> int:
        return len(self.by_name)

    def installed(self) -> list[tuple[bytes, int]]:
        """(face name, character set) pairs, as PDFium's enumeration registers them."""
        pairs = []
        for face in self.by_name.values():
            pairs += [(face.name, charset) for charset in _registration_order(face.charsets)]
        return pairs

    def get(self, name: bytes) -> FontFace | None:
        return self.by_name.get(name)

    def map_font(self, weight: int, italic: bool, charset: int, pitch: int, family: bytes) -> FontFace | None:
        """The face for PDFium's ``MapFont`` request, or None (PDFium then uses its built-in
        faces)."""
        substitute = _BASE14_SUBSTITUTES.get(family)
        if substitute is not None and substitute in self.by_name:
            return self.by_name[substitute]
        if charset in CJK_FAMILIES:
            return self._cjk(weight, italic, charset, pitch, family)
        found = self.find(weight, italic, charset, pitch, family, match_name=True)
        if found is None and substitute is None:
            found = self._alias(weight, family)
        return found

    def find(
        self, weight: int, italic: bool, charset: int, pitch: int, family: bytes, *, match_name: bool
    ) -> FontFace | None:
        """PDFium's ``CFX_FolderFontInfo::FindFont``: the most similar face of the character set
        (whose name contains ``family``, with ``match_name``); the first in name order on a tie."""
        best, found = 0, None
        if match_name:
            direct = self.by_name.get(family)
            if direct is not None and _eligible(direct, charset):
                best, found = _score(direct, weight, italic, pitch, True), direct
                if best == _MAX_SCORE:
                    return direct
        for name, face in self._sorted:
            if not _eligible(face, charset):
                continue
            score = _score(face, weight, italic, pitch, match_name and len(family) == len(name))
            if score > best and (not match_name or _family_match(family, name)):
                best, found = score, face
        if found is None and charset == ANSI and pitch & _PITCH_FIXED:
            return self.by_name.get(_COURIER_NEW)
        return found

    def _cjk(self, weight: int, italic: bool, charset: int, pitch: int, family: bytes) -> FontFace | None:
        sans, serif = CJK_FAMILIES[charset]
        alias = ALIASES.get(normalized(family.decode("latin-1")))
        if alias is not None and alias in CJK_FAMILIES[charset]:
            wanted = alias
        elif b"Gothic" in family:
            wanted = sans
        elif b"Mincho" in family:
            wanted = serif
        else:
            wanted = serif if pitch & _PITCH_ROMAN else sans
        face = self._styled(wanted.encode(), weight)
        return face or self.find(weight, italic, charset, pitch, family, match_name=False)

    def _alias(self, weight: int, family: bytes) -> FontFace | None:
        alias = ALIASES.get(normalized(family.decode("latin-1")))
        return self._styled(alias.encode(), weight) if alias is not None else None

    def _styled(self, family: bytes, weight: int) -> FontFace | None:
        if weight > _NORMAL_WEIGHT and family + b" Bold" in self.by_name:
            return self.by_name[family + b" Bold"]
        return self.by_name.get(family)


def _eligible(face: FontFace, charset: int) -> bool:
    return charset in face.charsets or charset == DEFAULT


def _registration_order(charsets: frozenset[int]) -> list[int]:
    """PDFium registers a face's CJK and symbol character sets first, ANSI last."""
    return [charset for charset, _bits in CHARSET_FLAGS if charset in charsets] + [ANSI]
