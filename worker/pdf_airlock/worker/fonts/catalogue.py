"""The fallback fonts a job child is given: which files, from which Debian packages, and which
names of fonts a document may ask for are served by them. The one place the font set lives.

A document that names a font without embedding it is drawn with a font of the host. PDFium asks
for one by name, weight, pitch and character set (``pdf_airlock.worker.fonts.matching``); these
are the faces it can be given. Regular weights only: a bold request gets the regular face,
emboldened by PDFium. The files are mapped, never read whole (``pdf_airlock.worker.fonts``): an
unused face costs the zygote nothing but its headers, and a job child copies only the faces its
document asks for.

``python -m pdf_airlock.worker.fonts.catalogue packages|paths`` prints the Debian packages and
the files, one a line: ``scripts/container.sh`` builds the image's base from them, so the image
carries exactly this set.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Final

__all__ = [
    "ALIASES",
    "CJK_FAMILIES",
    "FONT_DIR",
    "FONT_FILES",
    "FontFile",
    "normalized",
    "packages",
    "paths",
]

FONT_DIR: Final = "/usr/share/fonts"


@dataclass(frozen=True, slots=True)
class FontFile:
    path: str  # under FONT_DIR
    package: str  # the Debian package that installs it
    scripts: str  # what it is here for


FONT_FILES: Final = (
    FontFile("truetype/noto/NotoSans-Regular.ttf", "fonts-noto-core", "Latin, Greek, Cyrillic"),
    FontFile("truetype/noto/NotoSerif-Regular.ttf", "fonts-noto-core", "Latin, Greek, Cyrillic"),
    FontFile("truetype/noto/NotoSansArabic-Regular.ttf", "fonts-noto-core", "Arabic"),
    FontFile("truetype/noto/NotoNaskhArabic-Regular.ttf", "fonts-noto-core", "Arabic"),
    FontFile("truetype/noto/NotoSansHebrew-Regular.ttf", "fonts-noto-core", "Hebrew"),
    FontFile("truetype/noto/NotoSerifHebrew-Regular.ttf", "fonts-noto-core", "Hebrew"),
    FontFile("truetype/noto/NotoSansDevanagari-Regular.ttf", "fonts-noto-core", "Devanagari"),
    FontFile("truetype/noto/NotoSerifDevanagari-Regular.ttf", "fonts-noto-core", "Devanagari"),
    FontFile("truetype/noto/NotoSansBengali-Regular.ttf", "fonts-noto-core", "Bengali"),
    FontFile("truetype/noto/NotoSerifBengali-Regular.ttf", "fonts-noto-core", "Bengali"),
    FontFile("truetype/noto/NotoSansThai-Regular.ttf", "fonts-noto-core", "Thai"),
    FontFile("truetype/noto/NotoSerifThai-Regular.ttf", "fonts-noto-core", "Thai"),
    FontFile("opentype/noto/NotoSansCJK-Regular.ttc", "fonts-noto-cjk", "Chinese, Japanese, Korean"),
    FontFile("opentype/noto/NotoSerifCJK-Regular.ttc", "fonts-noto-cjk", "Chinese, Japanese, Korean"),
)

# The face for text in a CJK character set (PDFium's charset numbers, as Windows has them),
# sans-serif and serif: each region's own glyph forms.
CJK_FAMILIES: Final[dict[int, tuple[str, str]]] = {
    128: ("Noto Sans CJK JP", "Noto Serif CJK JP"),  # Shift-JIS
    129: ("Noto Sans CJK KR", "Noto Serif CJK KR"),  # Hangul
    134: ("Noto Sans CJK SC", "Noto Serif CJK SC"),  # GB2312
    136: ("Noto Sans CJK TC", "Noto Serif CJK TC"),  # Big5
}

# Fonts documents commonly name without embedding them, made for one script (Windows' and
# macOS's), keyed by ``normalized`` name: the family that draws the same script here. PDFium
# draws a name it cannot find with its built-in Latin faces, so text in these would be blank.
# PDFium asks by family, a style suffix ("-Bold", ",Italic") already cut off: list families.
_ARABIC_NASKH: Final = "Noto Naskh Arabic"
_ARABIC_SANS: Final = "Noto Sans Arabic"
_HEBREW_SANS, _HEBREW_SERIF = "Noto Sans Hebrew", "Noto Serif Hebrew"
_DEVANAGARI_SANS, _DEVANAGARI_SERIF = "Noto Sans Devanagari", "Noto Serif Devanagari"
_BENGALI_SANS, _BENGALI_SERIF = "Noto Sans Bengali", "Noto Serif Bengali"
_THAI_SANS, _THAI_SERIF = "Noto Sans Thai", "Noto Serif Thai"
_SC_SANS, _SC_SERIF = CJK_FAMILIES[134]
_TC_SANS, _TC_SERIF = CJK_FAMILIES[136]
_JP_SANS, _JP_SERIF = CJK_FAMILIES[128]
_KR_SANS, _KR_SERIF = CJK_FAMILIES[129]
_ALIAS_NAMES: Final[dict[str, tuple[str, ...]]] = {
    _ARABIC_NASKH: (
        "Traditional Arabic", "Simplified Arabic", "Simplified Arabic Fixed", "Arabic Typesetting",
        "Sakkal Majalla", "Arabic Transparent", "Urdu Typesetting", "Aldhabi", "Andalus",
    ),
    _ARABIC_SANS: ("Geeza Pro", "Al Bayan", "Baghdad", "Damascus", "Arial Arabic"),
    _HEBREW_SANS: ("Miriam", "Miriam Fixed", "Gisha", "Aharoni", "Levenim MT", "Rod", "Arial Hebrew"),
    _HEBREW_SERIF: ("David", "David Transparent", "Frank Ruehl", "FrankRuehl", "Narkisim", "New Peninim MT"),
    _DEVANAGARI_SANS: ("Mangal", "Utsaah", "Devanagari MT", "Devanagari Sangam MN", "Kohinoor Devanagari"),
    _DEVANAGARI_SERIF: ("Aparajita", "Kokila"),
    _BENGALI_SANS: ("Vrinda", "Bangla MN", "Bangla Sangam MN"),
    _BENGALI_SERIF: ("Shonar Bangla",),
    _THAI_SANS: (
        "Cordia New", "CordiaUPC", "Browallia New", "BrowalliaUPC", "Leelawadee", "Leelawadee UI",
        "Thonburi",
    ),
    _THAI_SERIF: (
        "Angsana New", "AngsanaUPC", "DilleniaUPC", "EucrosiaUPC", "FreesiaUPC", "IrisUPC",
        "JasmineUPC", "KodchiangUPC", "LilyUPC",
    ),
    _SC_SANS: ("SimHei", "Microsoft YaHei", "DengXian", "STHeiti", "PingFang SC", "Adobe Heiti Std"),
    _SC_SERIF: (
        "SimSun", "NSimSun", "SimSun-ExtB", "STSong", "STSong-Light", "FangSong", "STFangsong",
        "KaiTi", "STKaiti", "Adobe Song Std",
    ),
    _TC_SANS: ("Microsoft JhengHei", "PingFang TC"),
    _TC_SERIF: ("MingLiU", "PMingLiU", "MingLiU_HKSCS", "MSung-Light", "Adobe Ming Std"),
    _JP_SANS: (
        "MS Gothic", "MS PGothic", "MS UI Gothic", "Meiryo", "Meiryo UI", "Yu Gothic",
        "Hiragino Kaku Gothic Pro", "Kozuka Gothic Pro", "Kozuka Gothic Pr6N",
    ),
    _JP_SERIF: (
        "MS Mincho", "MS PMincho", "Yu Mincho", "Hiragino Mincho Pro", "Kozuka Mincho Pro",
        "Kozuka Mincho Pr6N", "KozMinPro", "KozMinPr6N", "Ryumin-Light", "HeiseiMin-W3",
    ),
    _KR_SANS: ("Gulim", "GulimChe", "Dotum", "DotumChe", "Malgun Gothic", "AppleGothic", "HYGoThic-Medium"),
    _KR_SERIF: ("Batang", "BatangChe", "Gungsuh", "GungsuhChe", "HYSMyeongJo-Medium"),
}  # fmt: skip


def normalized(name: str) -> str:
    """A font name as PDFium compares them (``TT_NormalizeName``): no spaces, hyphens or commas,
    lower case."""
    return name.replace(" ", "").replace("-", "").replace(",", "").lower()


ALIASES: Final[dict[str, str]] = {
    normalized(name): family for family, names in _ALIAS_NAMES.items() for name in names
}


def packages() -> list[str]:
    """The Debian packages the set comes from, in order of first use."""
    return list(dict.fromkeys(entry.package for entry in FONT_FILES))


def paths() -> list[str]:
    return [f"{FONT_DIR}/{entry.path}" for entry in FONT_FILES]


if __name__ == "__main__":
    _WHAT: Final = {"packages": packages, "paths": paths}
    if len(sys.argv) != 2 or sys.argv[1] not in _WHAT:
        sys.exit(f"usage: python -m pdf_airlock.worker.fonts.catalogue {'|'.join(_WHAT)}")
    sys.stdout.write("".join(f"{line}\n" for line in _WHAT[sys.argv[1]]()))
