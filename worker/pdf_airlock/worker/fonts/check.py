"""A trusted page naming fonts it does not embed, one line per script, and what a render of it
shows: the fallback fonts' warm-up and their self-test.

Each line is a Type0 font: CJK through the predefined Unicode CMap of its ordering (PDFium asks
for a face by character set), the other scripts through ``Identity-H`` with a ``ToUnicode`` map
under the name of a font made for the script (PDFium asks by name). ``warm_up`` renders one line
in the zygote, so PDFium has listed the faces (``EnumFonts``) before any fork; ``self_check``
renders every line in a sandboxed child (``pdf-airlock self-test``) and says which drew ink.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["SAMPLES", "Sample", "sample_pdf", "self_check", "warm_up"]


@dataclass(frozen=True, slots=True)
class Sample:
    script: str
    font: str  # the name the page gives, never embedded
    text: str
    cmap: str | None = None  # a predefined CMap (CJK), else Identity-H with a ToUnicode map
    ordering: str = "Identity"


SAMPLES: Final = (
    Sample("Chinese", "STSong-Light", "\u4e2d\u6587\u5b57\u4f53", "UniGB-UCS2-H", "GB1"),
    Sample("Japanese", "HeiseiKakuGo-W5", "\u65e5\u672c\u8a9e\u306e\u6587\u5b57", "UniJIS-UCS2-H", "Japan1"),
    Sample("Korean", "HYGoThic-Medium", "\ud55c\uad6d\uc5b4 \uae00\uc790", "UniKS-UCS2-H", "Korea1"),
    Sample("Arabic", "TraditionalArabic", "\u0645\u0631\u062d\u0628\u0627"),
    Sample("Hebrew", "David", "\u05e9\u05dc\u05d5\u05dd"),
    Sample("Devanagari", "Mangal", "\u0928\u092e\u0938\u094d\u0924\u0947"),
    Sample("Bengali", "Vrinda", "\u09a8\u09ae\u09b8\u09cd\u0995\u09be\u09b0"),
    Sample("Thai", "AngsanaNew", "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35"),
    Sample("Cyrillic", "NotoSans", "\u041f\u0440\u0438\u0432\u0435\u0442"),
)
_WARM_SCRIPT: Final = "Hebrew"  # the smallest face: the warm-up copies little
_SIZE: Final = 24
_LINE: Final = 40
_TOP: Final = 40
_WIDTH: Final = 300
_DW: Final = 1000
_SCALE: Final = 0.5
_INK_BELOW: Final = 128  # a grey level darker than this is ink
_MIN_INK: Final = 20  # dark pixels a drawn line has at least


def _to_unicode(chars: list[str]) -> bytes:
    pairs = "\n".join(f"<{code:04x}> <{ord(char):04x}>" for code, char in enumerate(chars, start=1))
    return (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
        "1 begincodespacerange <0000> <FFFF> endcodespacerange\n"
        f"{len(chars)} beginbfchar\n{pairs}\nendbfchar\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end"
    ).encode()


def _font(pdf: Any, sample: Sample) -> tuple[Any, str]:
    """The font dictionary and the string that shows ``sample.text`` in it."""
    import pikepdf

    name = pikepdf.Name("/" + sample.font)
    descriptor = pikepdf.Dictionary(
        Type=pikepdf.Name.FontDescriptor, FontName=name, Flags=4, FontBBox=[0, -300, 1000, 1000],
        ItalicAngle=0, Ascent=1000, Descent=-300, CapHeight=700, StemV=80,
    )  # fmt: skip
    subtype = pikepdf.Name.CIDFontType0 if sample.cmap else pikepdf.Name.CIDFontType2
    descendant = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=subtype, BaseFont=name, DW=_DW,
        CIDSystemInfo=pikepdf.Dictionary(Registry="Adobe", Ordering=sample.ordering, Supplement=2),
        FontDescriptor=pdf.make_indirect(descriptor),
    )  # fmt: skip
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type0, BaseFont=name,
        Encoding=pikepdf.Name("/" + (sample.cmap or "Identity-H")),
        DescendantFonts=[pdf.make_indirect(descendant)],
    )  # fmt: skip
    if sample.cmap:
        return pdf.make_indirect(font), "".join(f"{ord(char):04x}" for char in sample.text)
    chars = sorted(set(sample.text))
    font.ToUnicode = pdf.make_stream(_to_unicode(chars))
    return pdf.make_indirect(font), "".join(f"{chars.index(char) + 1:04x}" for char in sample.text)


def sample_pdf(samples: tuple[Sample, ...] = SAMPLES) -> bytes:
    """One page, one line per sample, top down from ``_TOP`` points, ``_LINE`` apart."""
    import pikepdf

    pdf = pikepdf.new()
    height = _TOP + _LINE * len(samples)
    fonts, shown = {}, []
    for number, sample in enumerate(samples):
        font, codes = _font(pdf, sample)
        fonts[f"/F{number}"] = font
        shown.append(f"BT /F{number} {_SIZE} Tf 10 {height - _TOP - _LINE * number} Td <{codes}> Tj ET")
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page, MediaBox=[0, 0, _WIDTH, height],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(fonts)),
        Contents=pdf.make_stream("\n".join(shown).encode()),
    )  # fmt: skip
    pdf.pages.append(pikepdf.Page(page))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _ink_by_line(data: bytes, lines: int) -> list[int]:
    """Dark pixels in each line's band of the rendered page."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        page = document[0]
        try:
            bitmap = page.render(scale=_SCALE, grayscale=True, may_draw_forms=False)
            pixels, stride, width, height = bytes(bitmap.buffer), bitmap.stride, bitmap.width, bitmap.height
        finally:
            page.close()
    finally:
        document.close()
    light = bytes(range(_INK_BELOW)).ljust(256, b"\xff")  # every level from _INK_BELOW up -> 255
    band = height // lines
    counts = []
    for line in range(lines):
        rows = [pixels[row * stride : row * stride + width] for row in range(line * band, (line + 1) * band)]
        counts.append(sum(width - row.translate(light).count(255) for row in rows))
    return counts


def warm_up() -> None:
    """Render one line in this process: PDFium lists the faces and asks for one."""
    _ink_by_line(sample_pdf(tuple(s for s in SAMPLES if s.script == _WARM_SCRIPT)), 1)


def self_check(faces: int) -> str:
    """Render every sample here (a sandboxed child) and say which scripts drew, as a layer
    status: ``active: ...`` when all did, else ``partial: ...`` or ``failed: ...``."""
    try:
        ink = _ink_by_line(sample_pdf(), len(SAMPLES))
    except Exception as exc:  # a self-test reports, never raises
        return f"failed: {type(exc).__name__}"
    drawn = [sample.script for sample, count in zip(SAMPLES, ink, strict=True) if count >= _MIN_INK]
    blank = [sample.script for sample in SAMPLES if sample.script not in drawn]
    if not blank:
        return f"active: {faces} faces; fonts not embedded drew {', '.join(drawn)}"
    if not drawn:
        return f"failed: {faces} faces; fonts not embedded drew nothing"
    return f"partial: {faces} faces; drew {', '.join(drawn)}; blank: {', '.join(blank)}"
