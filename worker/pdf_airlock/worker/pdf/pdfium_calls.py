"""PDFium functions called with plain integer handles, for loops over every object or character
of a page.

pypdfium2's bindings declare each handle as a typed pointer and some results as enumerations:
a call then costs several microseconds of conversions, where the same C function called with
``void *`` arguments costs a few hundred nanoseconds. The visibility census
(``pdf_airlock.worker.pdf.visibility_census``) makes a few such calls per page object and the
pixel stage one or two per character, so they go through these prototypes, made once at import
(in the zygote). A handle is the integer address of a pypdfium2 handle (``address``); it is valid
only while the object it came from is alive, as with pypdfium2 itself.

Row it serves: "visibility check" in docs/performance.md (``bench/visibility.py``).
"""

from __future__ import annotations

import ctypes
from typing import Any, Final

import pypdfium2.raw as pdfium_c

__all__ = ["F", "Matrix", "address", "compose"]

_VOID: Final = ctypes.c_void_p
_INT: Final = ctypes.c_int
_ULONG: Final = ctypes.c_ulong
_DOUBLE: Final = ctypes.c_double
_FLOAT: Final = ctypes.c_float


def address(handle: Any) -> int:
    """The integer address behind a pypdfium2 handle (0 for a null one)."""
    return ctypes.cast(handle, _VOID).value or 0


def _prototype(name: str, restype: Any, *argtypes: Any) -> Any:
    pointer = ctypes.cast(getattr(pdfium_c, name), _VOID).value
    if not pointer:
        raise ImportError(f"PDFium has no {name}")
    return ctypes.CFUNCTYPE(restype, *argtypes)(pointer)


class _Functions:
    """The prototypes, by PDFium's names."""

    def __init__(self) -> None:
        p = _prototype
        self.FPDFPage_CountObjects = p("FPDFPage_CountObjects", _INT, _VOID)
        self.FPDFPage_GetObject = p("FPDFPage_GetObject", _VOID, _VOID, _INT)
        self.FPDFPageObj_GetType = p("FPDFPageObj_GetType", _INT, _VOID)
        self.FPDFPageObj_GetBounds = p("FPDFPageObj_GetBounds", _INT, _VOID, _VOID, _VOID, _VOID, _VOID)
        self.FPDFPageObj_GetRotatedBounds = p("FPDFPageObj_GetRotatedBounds", _INT, _VOID, _VOID)
        self.FPDFPageObj_GetMatrix = p("FPDFPageObj_GetMatrix", _INT, _VOID, _VOID)
        self.FPDFPageObj_GetFillColor = p("FPDFPageObj_GetFillColor", _INT, _VOID, _VOID, _VOID, _VOID, _VOID)
        self.FPDFPageObj_GetStrokeColor = p(
            "FPDFPageObj_GetStrokeColor", _INT, _VOID, _VOID, _VOID, _VOID, _VOID
        )
        self.FPDFPageObj_GetStrokeWidth = p("FPDFPageObj_GetStrokeWidth", _INT, _VOID, _VOID)
        self.FPDFPageObj_HasTransparency = p("FPDFPageObj_HasTransparency", _INT, _VOID)
        self.FPDFPageObj_GetClipPath = p("FPDFPageObj_GetClipPath", _VOID, _VOID)
        self.FPDFPageObj_CountMarks = p("FPDFPageObj_CountMarks", _INT, _VOID)
        self.FPDFPageObj_GetMark = p("FPDFPageObj_GetMark", _VOID, _VOID, _ULONG)
        self.FPDFPageObjMark_GetName = p("FPDFPageObjMark_GetName", _INT, _VOID, _VOID, _ULONG, _VOID)
        self.FPDFClipPath_CountPaths = p("FPDFClipPath_CountPaths", _INT, _VOID)
        self.FPDFClipPath_CountPathSegments = p("FPDFClipPath_CountPathSegments", _INT, _VOID, _INT)
        self.FPDFClipPath_GetPathSegment = p("FPDFClipPath_GetPathSegment", _VOID, _VOID, _INT, _INT)
        self.FPDFPathSegment_GetPoint = p("FPDFPathSegment_GetPoint", _INT, _VOID, _VOID, _VOID)
        self.FPDFPathSegment_GetType = p("FPDFPathSegment_GetType", _INT, _VOID)
        self.FPDFPath_GetDrawMode = p("FPDFPath_GetDrawMode", _INT, _VOID, _VOID, _VOID)
        self.FPDFPath_CountSegments = p("FPDFPath_CountSegments", _INT, _VOID)
        self.FPDFPath_GetPathSegment = p("FPDFPath_GetPathSegment", _VOID, _VOID, _INT)
        self.FPDFTextObj_GetTextRenderMode = p("FPDFTextObj_GetTextRenderMode", _INT, _VOID)
        self.FPDFTextObj_SetTextRenderMode = p("FPDFTextObj_SetTextRenderMode", _INT, _VOID, _INT)
        self.FPDFTextObj_GetFontSize = p("FPDFTextObj_GetFontSize", _INT, _VOID, _VOID)
        self.FPDFTextObj_GetFont = p("FPDFTextObj_GetFont", _VOID, _VOID)
        self.FPDFFont_GetIsEmbedded = p("FPDFFont_GetIsEmbedded", _INT, _VOID)
        self.FPDFFont_GetGlyphPath = p("FPDFFont_GetGlyphPath", _VOID, _VOID, ctypes.c_uint32, _FLOAT)
        self.FPDFGlyphPath_CountGlyphSegments = p("FPDFGlyphPath_CountGlyphSegments", _INT, _VOID)
        self.FPDFFormObj_CountObjects = p("FPDFFormObj_CountObjects", _INT, _VOID)
        self.FPDFFormObj_GetObject = p("FPDFFormObj_GetObject", _VOID, _VOID, _ULONG)
        self.FPDFText_CountChars = p("FPDFText_CountChars", _INT, _VOID)
        self.FPDFText_GetTextObject = p("FPDFText_GetTextObject", _VOID, _VOID, _INT)
        self.FPDFText_GetUnicode = p("FPDFText_GetUnicode", ctypes.c_uint, _VOID, _INT)
        self.FPDFText_GetCharBox = p("FPDFText_GetCharBox", _INT, _VOID, _INT, _VOID, _VOID, _VOID, _VOID)
        self.FPDFText_GetLooseCharBox = p("FPDFText_GetLooseCharBox", _INT, _VOID, _INT, _VOID)
        self.FPDFText_GetCharOrigin = p("FPDFText_GetCharOrigin", _INT, _VOID, _INT, _VOID, _VOID)
        self.FPDFText_GetCharIndexAtPos = p(
            "FPDFText_GetCharIndexAtPos", _INT, _VOID, _DOUBLE, _DOUBLE, _DOUBLE, _DOUBLE
        )


F: Final = _Functions()


Matrix = tuple[float, float, float, float, float, float]  # PDFium's FS_MATRIX: a b c d e f


def compose(inner: Matrix, outer: Matrix) -> Matrix:
    """``inner`` then ``outer``: an object's own matrix placed by its container's."""
    a, b, c, d, e, f = inner
    a2, b2, c2, d2, e2, f2 = outer
    return (
        a * a2 + b * c2,
        a * b2 + b * d2,
        c * a2 + d * c2,
        c * b2 + d * d2,
        e * a2 + f * c2 + e2,
        e * b2 + f * d2 + f2,
    )
