"""Small generated documents, one per class of real-world PDF that once read wrong in the sandbox.

Each is built object by object with pikepdf, so it is exactly the feature its name says: the
public corpus (pdf.js's test/pdfs, fetched by bench/robustness/differential.py, never committed) is where
these classes were found; these stand in for it in CI.
"""

from __future__ import annotations

import io

import pikepdf

HYPHENATED_WORD = "compile"
TO_UNICODE_TEXT = "Grüße ﬁnal €"  # the ligature is what the ToUnicode map says; both engines mend it
CJK_TEXT = "あいうえお日本語"
FORM_TEXT = "Text drawn inside a Form XObject"


def _save(pdf: pikepdf.Pdf) -> bytes:
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _helvetica(pdf: pikepdf.Pdf) -> pikepdf.Object:
    return pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica
        )
    )


def _page(pdf: pikepdf.Pdf, content: bytes, resources: pikepdf.Dictionary) -> None:
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page,
        MediaBox=[0, 0, 612, 792],
        Resources=resources,
        Contents=pdf.make_stream(content),
    )
    pdf.pages.append(pikepdf.Page(page))


def to_unicode_pdf() -> bytes:
    """A simple font whose codes 1..N map to text through a ToUnicode CMap (UTF-16BE targets)."""
    pdf = pikepdf.new()
    lines = [f"<{code:02x}> <{ord(char):04x}>" for code, char in enumerate(TO_UNICODE_TEXT, start=1)]
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Test-UCS def /CMapType 2 def\n"
        "1 begincodespacerange <00> <ff> endcodespacerange\n"
        f"{len(lines)} beginbfchar\n" + "\n".join(lines) + "\nendbfchar\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end\n"
    ).encode()
    font = _helvetica(pdf)
    font.ToUnicode = pdf.make_stream(cmap)
    codes = "".join(f"{code:02x}" for code in range(1, len(TO_UNICODE_TEXT) + 1))
    content = f"BT /F1 14 Tf 72 720 Td <{codes}> Tj ET".encode()
    _page(pdf, content, pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)))
    return _save(pdf)


def predefined_cjk_pdf() -> bytes:
    """A non-embedded Japanese font with a predefined CMap (UniJIS-UCS2-H): the text decodes only
    through pdfminer's CMap files (to CIDs, then to Unicode by Adobe-Japan1)."""
    pdf = pikepdf.new()
    descendant = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.CIDFontType0,
            BaseFont=pikepdf.Name("/KozMinPro-Regular"),
            CIDSystemInfo=pikepdf.Dictionary(Registry="Adobe", Ordering="Japan1", Supplement=4),
            FontDescriptor=pdf.make_indirect(
                pikepdf.Dictionary(
                    Type=pikepdf.Name.FontDescriptor,
                    FontName=pikepdf.Name("/KozMinPro-Regular"),
                    Flags=4,
                    FontBBox=[0, -200, 1000, 900],
                    ItalicAngle=0,
                    Ascent=880,
                    Descent=-120,
                    CapHeight=740,
                    StemV=80,
                )
            ),
            DW=1000,
        )
    )
    font = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.Type0,
            BaseFont=pikepdf.Name("/KozMinPro-Regular-UniJIS-UCS2-H"),
            Encoding=pikepdf.Name("/UniJIS-UCS2-H"),
            DescendantFonts=[descendant],
        )
    )
    codes = "".join(f"{ord(char):04x}" for char in CJK_TEXT)
    content = f"BT /F1 20 Tf 72 720 Td <{codes}> Tj ET".encode()
    _page(pdf, content, pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)))
    return _save(pdf)


def form_xobject_pdf() -> bytes:
    """The page's only text is inside a Form XObject it paints with ``Do``."""
    pdf = pikepdf.new()
    font = _helvetica(pdf)
    form = pdf.make_stream(f"BT /F1 12 Tf 0 0 Td ({FORM_TEXT}) Tj ET".encode())
    form.Type, form.Subtype = pikepdf.Name.XObject, pikepdf.Name.Form
    form.BBox = [0, 0, 500, 50]
    form.Resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    content = b"q 1 0 0 1 72 700 cm /Fm1 Do Q"
    _page(pdf, content, pikepdf.Dictionary(XObject=pikepdf.Dictionary(Fm1=form)))
    return _save(pdf)


def hyphenated_pdf() -> bytes:
    """A word hyphenated across a line break, in a paragraph of several lines."""
    pdf = pikepdf.new()
    font = _helvetica(pdf)
    first, second = HYPHENATED_WORD[:3], HYPHENATED_WORD[3:]
    lines = [
        "The tracing compiler must record and",
        f"then {first}-",
        f"{second} the hot loops of the program.",
    ]
    shown = " ".join(f"({line}) Tj T*" for line in lines)
    content = f"BT /F1 12 Tf 14 TL 72 720 Td {shown} ET".encode()
    _page(pdf, content, pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)))
    return _save(pdf)


def glyph_codes_pdf() -> bytes:
    """Page 1 reads; page 2's text is glyph codes with no Unicode meaning (a subset font without
    a ToUnicode map, as TAMReview.pdf has): control characters and a little punctuation."""
    pdf = pikepdf.new()
    font = _helvetica(pdf)
    resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font))
    _page(pdf, b"BT /F1 12 Tf 72 720 Td (A page with a proper text layer.) Tj ET", resources)
    codes = bytes(range(4, 31)) * 4 + b"!,."
    hex_codes = codes.hex()
    _page(pdf, f"BT /F1 12 Tf 72 720 Td <{hex_codes}> Tj ET".encode(), resources)
    return _save(pdf)


def image_only_pdf() -> bytes:
    """A page that is one image and no text: what a scanner or a fax makes."""
    pdf = pikepdf.new()
    image = pikepdf.Stream(pdf, bytes([200, 200, 200]) * 64)
    image.Type, image.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
    image.Width, image.Height, image.BitsPerComponent = 8, 8, 8
    image.ColorSpace = pikepdf.Name.DeviceRGB
    content = b"q 612 0 0 792 0 0 cm /Im1 Do Q"
    _page(pdf, content, pikepdf.Dictionary(XObject=pikepdf.Dictionary(Im1=image)))
    return _save(pdf)


XFA_DATASETS = (
    b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "AAAAAAAAAAAAAAAAAAAA"><!ENTITY b "&a;&a;&a;&a;&a;&a;">]>'
    b'<xfa:datasets xmlns:xfa="http://www.xfa.org/schema/xfa-data/1.0/"><xfa:data><form1>'
    b"<Applicant><Name>Ada Lovelace</Name><Bomb>&b;</Bomb></Applicant><Terms>R & D</Terms>"
    b"</form1></xfa:data></xfa:datasets>"
)


def forms_pdf() -> bytes:
    """An AcroForm with a labelled (/TU) text field and a check box whose on state is /Agree, and
    an XFA datasets packet (with a stray '&', as real forms have, and an entity bomb that must
    not expand)."""
    pdf = pikepdf.new()
    _page(pdf, b"", pikepdf.Dictionary())
    page = pdf.pages[0]
    on = pdf.make_stream(b"0 0 10 10 re f")
    off = pdf.make_stream(b"")
    box = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Annot,
            Subtype=pikepdf.Name.Widget,
            FT=pikepdf.Name.Btn,
            T=pikepdf.String("agree"),
            TU=pikepdf.String("I agree to the terms"),
            V=pikepdf.Name("/Agree"),
            AS=pikepdf.Name("/Agree"),
            Rect=[72, 600, 82, 610],
            AP=pikepdf.Dictionary(N=pikepdf.Dictionary(Agree=on, Off=off)),
            P=page.obj,
        )
    )
    name = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Annot,
            Subtype=pikepdf.Name.Widget,
            FT=pikepdf.Name.Tx,
            T=pikepdf.String("name"),
            TU=pikepdf.String("Full name"),
            V=pikepdf.String("Ada Lovelace"),
            Rect=[72, 700, 300, 720],
            P=page.obj,
        )
    )
    page.obj.Annots = pdf.make_indirect(pikepdf.Array([name, box]))
    xfa = pikepdf.Array([pikepdf.String("datasets"), pdf.make_stream(XFA_DATASETS)])
    pdf.Root.AcroForm = pdf.make_indirect(pikepdf.Dictionary(Fields=[name, box], XFA=xfa))
    return _save(pdf)


def operator_in_array_pdf() -> bytes:
    """A TJ array holding an operator (as bug1953099.pdf has): qpdf's content parser refuses it
    with a TypeError, which must be a warning, not a failed call."""
    pdf = pikepdf.new()
    font = _helvetica(pdf)
    content = b"BT /F1 12 Tf 72 720 Td [(Hello) Tj (world)] TJ ET"
    _page(pdf, content, pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=font)))
    return _save(pdf)


SHORT_RANGE_LINES = ("Label: 日本語のテキスト", "Label: Grüße aus Köln")  # one a page
_SHORT_RANGE_ALPHABET = "".join(dict.fromkeys("".join(line[len("Label: ") :] for line in SHORT_RANGE_LINES)))


def _short_range_font(pdf: pikepdf.Pdf) -> pikepdf.Object:
    """A Type0 font (Identity-H: CID N draws ``_SHORT_RANGE_ALPHABET[N - 1]``) whose ToUnicode
    map writes each range's start code in two bytes and its end in one: PDFium reads the map,
    pdfminer ignores those ranges ("the start and end byte have different lengths") and writes
    ``(cid:N)``."""
    ranges = [
        f"<{code:04x}> <{code:02x}> <{ord(char):04x}>" for code, char in enumerate(_SHORT_RANGE_ALPHABET, 1)
    ]
    cmap = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Test-UCS def /CMapType 2 def\n"
        "1 begincodespacerange <0000> <ffff> endcodespacerange\n"
        f"{len(ranges)} beginbfrange\n" + "\n".join(ranges) + "\nendbfrange\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end\n"
    ).encode()
    descriptor = pikepdf.Dictionary(
        Type=pikepdf.Name.FontDescriptor,
        FontName=pikepdf.Name("/MSGothic"),
        Flags=4,
        FontBBox=[0, -200, 1000, 900],
        ItalicAngle=0,
        Ascent=880,
        Descent=-120,
        CapHeight=740,
        StemV=80,
    )
    descendant = pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.CIDFontType2,
        BaseFont=pikepdf.Name("/MSGothic"),
        CIDSystemInfo=pikepdf.Dictionary(Registry="Adobe", Ordering="Identity", Supplement=0),
        FontDescriptor=pdf.make_indirect(descriptor),
        DW=1000,
        CIDToGIDMap=pikepdf.Name.Identity,
    )
    return pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.Font,
            Subtype=pikepdf.Name.Type0,
            BaseFont=pikepdf.Name("/MSGothic"),
            Encoding=pikepdf.Name("/Identity-H"),
            DescendantFonts=[pdf.make_indirect(descendant)],
            ToUnicode=pdf.make_stream(cmap),
        )
    )


def short_range_to_unicode_pdf() -> bytes:
    """``SHORT_RANGE_LINES``, one a page: "Label: " in Helvetica, the rest in the Type0 font of
    ``_short_range_font``. Page 2's MediaBox origin is not (0, 0) and the page is turned by
    /Rotate 90 (its text drawn turned the other way, so it reads upright): there the engines'
    coordinates differ by both. (PDFium drops CJK text drawn at 90 degrees, hence Latin there.)"""
    pdf = pikepdf.new()
    resources = pikepdf.Dictionary(Font=pikepdf.Dictionary(F1=_helvetica(pdf), F2=_short_range_font(pdf)))
    placements = ("1 0 0 1 72 720", "0 1 -1 0 300 100")
    for line, placement in zip(SHORT_RANGE_LINES, placements, strict=True):
        label, rest = line.split(" ", 1)
        codes = "".join(f"{_SHORT_RANGE_ALPHABET.index(char) + 1:04x}" for char in rest)
        shown = f"BT /F1 12 Tf 0 0 Td ({label} ) Tj /F2 12 Tf <{codes}> Tj ET"
        _page(pdf, f"q {placement} cm {shown} Q".encode(), resources)
    turned = pdf.pages[1]
    turned.MediaBox = [-40, -30, 572, 762]
    turned.Rotate = 90
    return _save(pdf)


# -- fonts a document names but does not embed ----------------------------------------------
# One line each: (label, BaseFont, how it is encoded, text, whether PDFium with its own Linux font
# list draws it the same on a host with the fallback fonts' Debian packages: it draws Song and
# Ming faces with the collection's first, Japanese, sans-serif face, and nothing for the script
# fonts' usual names). "simple": a WinAnsi
# simple font (Type1 for the Standard 14 names, TrueType otherwise); a CMap name: a CID font of
# that predefined Unicode CMap (PDFium asks for a face by the ordering's character set);
# "identity": Identity-H with a ToUnicode map (PDFium asks by name).
NOT_EMBEDDED_LINES: tuple[tuple[str, str, str, str, bool], ...] = (
    ("Helvetica", "Helvetica", "simple", "Helvetica, not embedded", True),
    ("Arial bold", "Arial,Bold", "simple", "Arial,Bold, not embedded", True),
    ("Times italic", "TimesNewRomanPS-ItalicMT", "simple", "Times New Roman Italic", True),
    ("Courier New", "CourierNewPSMT", "simple", "Courier New, not embedded", True),
    ("Japanese", "HeiseiKakuGo-W5", "UniJIS-UCS2-H", "日本語のテキスト", True),
    ("Chinese", "STSong-Light", "UniGB-UCS2-H", "中文字体测试", False),
    ("Traditional Chinese", "MSung-Light", "UniCNS-UCS2-H", "繁體中文測試", False),
    ("Korean", "HYGoThic-Medium", "UniKS-UCS2-H", "한국어 텍스트", True),
    ("Arabic, Noto", "NotoSansArabic", "identity", "مرحبا بالعالم", True),
    ("Hebrew, Noto", "NotoSansHebrew", "identity", "שלום עולם", True),
    ("Devanagari, Noto", "NotoSansDevanagari", "identity", "नमस्ते दुनिया", True),
    ("Bengali, Noto", "NotoSansBengali", "identity", "নমস্কার বিশ্ব", True),
    ("Thai, Noto", "NotoSansThai", "identity", "สวัสดีชาวโลก", True),
    ("Greek and Cyrillic, Noto", "NotoSerif", "identity", "Καλημέρα Привет", True),
    ("Arabic", "TraditionalArabic", "identity", "مرحبا بالعالم", False),
    ("Hebrew", "David", "identity", "שלום עולם", False),
    ("Devanagari", "Mangal", "identity", "नमस्ते दुनिया", False),
    ("Bengali", "Vrinda", "identity", "নমস্কার বিশ্ব", False),
    ("Thai", "AngsanaNew", "identity", "สวัสดีชาวโลก", False),
)
NOT_EMBEDDED_SIZE = 18  # points
NOT_EMBEDDED_PITCH = 36  # points from one line's baseline to the next
NOT_EMBEDDED_MARGIN = 36


def _cmap_to_unicode(chars: list[str]) -> bytes:
    pairs = "\n".join(f"<{code:04x}> <{ord(char):04x}>" for code, char in enumerate(chars, start=1))
    return (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
        "/CMapName /Adobe-Identity-UCS def /CMapType 2 def\n"
        "1 begincodespacerange <0000> <ffff> endcodespacerange\n"
        f"{len(chars)} beginbfchar\n{pairs}\nendbfchar\n"
        "endcmap CMapName currentdict /CMap defineresource pop end end\n"
    ).encode()


_ORDERINGS = {
    "UniJIS-UCS2-H": "Japan1",
    "UniGB-UCS2-H": "GB1",
    "UniCNS-UCS2-H": "CNS1",
    "UniKS-UCS2-H": "Korea1",
}


def _not_embedded_font(pdf: pikepdf.Pdf, name: str, encoding: str, text: str) -> tuple[pikepdf.Object, str]:
    """A font dictionary naming ``name`` with no font file, and the string showing ``text``."""
    base = pikepdf.Name("/" + name)
    descriptor = pdf.make_indirect(
        pikepdf.Dictionary(
            Type=pikepdf.Name.FontDescriptor, FontName=base, Flags=32, FontBBox=[-200, -300, 1200, 1000],
            ItalicAngle=0, Ascent=900, Descent=-250, CapHeight=700, StemV=80,
        )
    )  # fmt: skip
    if encoding == "simple":
        if name == "Helvetica":
            return _helvetica(pdf), "(" + text + ")"
        widths = [600] * 95
        font = pikepdf.Dictionary(
            Type=pikepdf.Name.Font, Subtype=pikepdf.Name.TrueType, BaseFont=base,
            Encoding=pikepdf.Name.WinAnsiEncoding, FirstChar=32, LastChar=126, Widths=widths,
            FontDescriptor=descriptor,
        )  # fmt: skip
        return pdf.make_indirect(font), "(" + text + ")"
    cmap = encoding != "identity"
    descendant = pikepdf.Dictionary(
        Type=pikepdf.Name.Font,
        Subtype=pikepdf.Name.CIDFontType0 if cmap else pikepdf.Name.CIDFontType2,
        BaseFont=base,
        CIDSystemInfo=pikepdf.Dictionary(
            Registry="Adobe", Ordering=_ORDERINGS.get(encoding, "Identity"), Supplement=2
        ),
        FontDescriptor=descriptor,
        DW=1000 if cmap else 600,
    )
    font = pikepdf.Dictionary(
        Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type0, BaseFont=base,
        Encoding=pikepdf.Name("/" + (encoding if cmap else "Identity-H")),
        DescendantFonts=[pdf.make_indirect(descendant)],
    )  # fmt: skip
    if cmap:
        return pdf.make_indirect(font), "<" + "".join(f"{ord(char):04x}" for char in text) + ">"
    chars = sorted(set(text))
    font.ToUnicode = pdf.make_stream(_cmap_to_unicode(chars))
    return pdf.make_indirect(font), "<" + "".join(f"{chars.index(char) + 1:04x}" for char in text) + ">"


def not_embedded_height() -> int:
    return 2 * NOT_EMBEDDED_MARGIN + NOT_EMBEDDED_PITCH * len(NOT_EMBEDDED_LINES)


def not_embedded_baseline(line: int) -> int:
    """The baseline of line ``line`` (from 0), in points from the top of the page."""
    return NOT_EMBEDDED_MARGIN + NOT_EMBEDDED_PITCH * line + NOT_EMBEDDED_SIZE


def not_embedded_box(line: int, width: int) -> tuple[int, int, int, int]:
    """The pixels of line ``line`` in a render at 72 dpi ``width`` pixels wide (a crop box)."""
    baseline = not_embedded_baseline(line)
    return (0, baseline - NOT_EMBEDDED_PITCH + 8, width, baseline + 10)


def not_embedded_fonts_pdf() -> bytes:
    """One page of ``NOT_EMBEDDED_LINES``, each in a font the document names but does not embed."""
    pdf = pikepdf.new()
    height = not_embedded_height()
    fonts, shown = {}, []
    for number, (_label, name, encoding, text, _found) in enumerate(NOT_EMBEDDED_LINES):
        font, string = _not_embedded_font(pdf, name, encoding, text)
        fonts[f"/F{number}"] = font
        y = height - not_embedded_baseline(number)
        shown.append(f"BT /F{number} {NOT_EMBEDDED_SIZE} Tf {NOT_EMBEDDED_MARGIN} {y} Td {string} Tj ET")
    page = pikepdf.Dictionary(
        Type=pikepdf.Name.Page, MediaBox=[0, 0, 612, height],
        Resources=pikepdf.Dictionary(Font=pikepdf.Dictionary(fonts)),
        Contents=pdf.make_stream("\n".join(shown).encode()),
    )  # fmt: skip
    pdf.pages.append(pikepdf.Page(page))
    return _save(pdf)
