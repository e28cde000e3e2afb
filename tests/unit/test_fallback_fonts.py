"""The fallback fonts' parts on their own (``pdf_airlock.worker.fonts``): which face PDFium
gets for a request (on faces made up here), the catalogue's files and their faces, a host
and without the files. The callbacks' code sealed read-and-execute is tests/unit/test_closures.py;
the sandboxed renders are tests/sandbox/test_fonts.py."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import realworld
from PIL import Image

from pdf_airlock.worker.fonts import catalogue
from pdf_airlock.worker.fonts.faces import ANSI, BOLD, SERIF, FontFace
from pdf_airlock.worker.fonts.matching import FaceIndex

INSTALLED = all(os.path.isfile(path) for path in catalogue.paths())
needs_fonts = pytest.mark.skipif(
    not INSTALLED,
    reason=f"the fallback fonts are not installed here (Debian: {' '.join(catalogue.packages())}; "
    "scripts/test.sh installs them when run as root)",
)
RENDER_ARGS = {"page": "1", "dpi": 72, "max_pixels": 4_000_000}
DARK = 128


def _face(name: str, charsets: tuple[int, ...] = (), styles: int = 0) -> FontFace:
    styles |= SERIF if "Serif" in name else 0
    return FontFace(name.encode(), 0, 0, 100, b"", frozenset({ANSI, *charsets}), styles)


CJK = (128, 129, 134)  # Shift-JIS, Hangul, GB2312 (Noto CJK's JP, KR and SC faces declare these)
INDEX = FaceIndex(
    [
        _face("Noto Sans"),
        _face("Noto Serif"),
        _face("Noto Sans Arabic"),
        _face("Noto Naskh Arabic"),
        _face("Noto Sans Devanagari"),
        _face("Noto Serif Hebrew"),
        *(
            _face(f"Noto {kind} CJK {region}", CJK)
            for kind in ("Sans", "Serif")
            for region in ("JP", "KR", "SC")
        ),
        *(_face(f"Noto {kind} CJK TC", (128, 129, 136)) for kind in ("Sans", "Serif")),
    ]
)
ROMAN, FIXED = 16, 1  # pitch families
NORMAL, BOLD_WEIGHT = 400, 700


def _mapped(family: str, charset: int = ANSI, pitch: int = 0, weight: int = NORMAL) -> str | None:
    face = INDEX.map_font(weight, False, charset, pitch, family.encode())
    return face.name.decode() if face else None


@pytest.mark.parametrize(
    "family", ["Helvetica", "Helvetica-Bold", "Times-Roman", "Courier", "Calibri", "Symbol"]
)
def test_standard_14_and_unknown_latin_names_keep_pdfiums_built_in_faces(family: str) -> None:
    """No face: PDFium then draws its built-in Standard 14 or generic faces, as before."""
    assert _mapped(family) is None
    assert _mapped(family, pitch=FIXED) is None


def test_a_name_picks_its_face_as_pdfium_does() -> None:
    assert _mapped("Noto Sans Arabic") == "Noto Sans Arabic"
    assert (
        _mapped("Noto Sans Arabic", weight=BOLD_WEIGHT) == "Noto Sans Arabic"
    )  # no bold face: the regular one
    assert _mapped("Noto Serif") == "Noto Serif"
    # PDFium's family match: "Noto Sans" is in "Noto Sans Arabic" (a space follows), the most
    # similar face wins, the first in name order on a tie.
    assert _mapped("Noto Sans", pitch=ROMAN) == "Noto Sans"
    assert _mapped("Noto") == "Noto Naskh Arabic"
    assert _mapped("Noto Sans Arabi") is None  # a word cut short is not a family


@pytest.mark.parametrize(
    ("family", "charset", "pitch", "face"),
    [
        ("Anything", 128, 0, "Noto Sans CJK JP"),
        ("Anything", 128, ROMAN, "Noto Serif CJK JP"),
        ("MS-Mincho", 128, 0, "Noto Serif CJK JP"),
        ("MS-PGothic", 128, ROMAN, "Noto Sans CJK JP"),
        ("Anything", 134, 0, "Noto Sans CJK SC"),
        ("SimSun", 134, 0, "Noto Serif CJK SC"),
        ("Anything", 136, ROMAN, "Noto Serif CJK TC"),
        ("Batang", 129, 0, "Noto Serif CJK KR"),
        ("Gulim", 129, ROMAN, "Noto Sans CJK KR"),
    ],
)
def test_a_cjk_character_set_gets_its_regions_face(family: str, charset: int, pitch: int, face: str) -> None:
    assert _mapped(family, charset, pitch) == face


def test_a_cjk_region_without_its_face_gets_another_of_the_character_set() -> None:
    index = FaceIndex([_face("Noto Sans CJK JP", CJK), _face("Noto Serif CJK JP", CJK)])
    found = index.map_font(NORMAL, False, 134, ROMAN, b"SimSun")
    assert found is not None and found.name == b"Noto Serif CJK JP"
    assert index.map_font(NORMAL, False, 136, 0, b"MingLiU") is None  # no face declares Big5


@pytest.mark.parametrize(
    ("family", "face"),
    [
        ("TraditionalArabic", "Noto Naskh Arabic"),
        ("Traditional Arabic", "Noto Naskh Arabic"),
        ("GeezaPro", "Noto Sans Arabic"),
        ("Mangal", "Noto Sans Devanagari"),
        ("David", "Noto Serif Hebrew"),
        ("SimSun", "Noto Serif CJK SC"),
        ("MS-Gothic", "Noto Sans CJK JP"),
        ("Vrinda", None),  # its family is not loaded
    ],
)
def test_a_script_fonts_usual_name_gets_a_face_for_its_script(family: str, face: str | None) -> None:
    assert _mapped(family) == face


def test_pdfium_is_told_each_faces_character_sets() -> None:
    index = FaceIndex([_face("Noto Sans CJK JP", CJK), _face("Noto Sans"), _face("Noto Sans")])
    assert index.installed() == [
        (b"Noto Sans CJK JP", 128),
        (b"Noto Sans CJK JP", 134),
        (b"Noto Sans CJK JP", 129),
        (b"Noto Sans CJK JP", ANSI),
        (b"Noto Sans", ANSI),
    ]
    assert index.get(b"Noto Sans CJK JP") is not None and index.get(b"Noto") is None


def test_bold_is_told_from_the_style() -> None:
    index = FaceIndex([_face("Noto Sans Hebrew"), _face("Noto Sans Hebrew Bold", styles=BOLD)])
    bold = index.map_font(BOLD_WEIGHT, False, ANSI, 0, b"David Transparent")
    assert bold is None  # David is a serif family: no serif Hebrew face here
    bold = index.map_font(BOLD_WEIGHT, False, ANSI, 0, b"Miriam")
    assert bold is not None and bold.name == b"Noto Sans Hebrew Bold"
    regular = index.map_font(NORMAL, False, ANSI, 0, b"Noto Sans Hebrew")
    assert regular is not None and regular.name == b"Noto Sans Hebrew"


@needs_fonts
def test_the_catalogue_files_hold_the_faces_it_names() -> None:
    """Every face the matcher may name (a CJK region's, an alias's target) is in the files."""
    from pdf_airlock.worker.fonts.faces import faces_of
    from pdf_airlock.worker.fonts.store import load

    faces = []
    for number, (path, mapped) in enumerate(zip(catalogue.paths(), load(catalogue.paths()), strict=True)):
        assert mapped is not None, path
        found = faces_of(mapped.view(), number)
        assert found, path
        faces += found
    by_name = {face.name.decode(): face for face in faces}
    named = {family for pair in catalogue.CJK_FAMILIES.values() for family in pair} | set(
        catalogue.ALIASES.values()
    )
    assert named <= by_name.keys()
    assert 134 in by_name["Noto Sans CJK SC"].charsets and 136 in by_name["Noto Serif CJK TC"].charsets
    assert by_name["Noto Sans CJK JP"].in_collection and not by_name["Noto Sans"].in_collection
    assert by_name["Noto Serif Hebrew"].styles & SERIF and not by_name["Noto Sans Thai"].styles & SERIF


def _python(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-I", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def test_without_the_font_files_latin_still_draws_and_the_status_says_why(tmp_path: Path) -> None:
    """A host without fonts-noto-*: every font file missing. PDFium's built-in Latin draws, text
    in other scripts does not, and the self-test's line names the packages."""
    pdf = tmp_path / "not-embedded.pdf"
    pdf.write_bytes(realworld.not_embedded_fonts_pdf())
    out = _python(
        f"""
        import json, sys
        from pdf_airlock.worker.fonts import catalogue
        catalogue.FONT_DIR = {str(tmp_path / "no-fonts")!r}
        from pdf_airlock.worker import fonts
        done = fonts.install()
        from pdf_airlock.worker.parsers import get_parser
        result = get_parser("pdf_render")(open({str(pdf)!r}, "rb").read(), {RENDER_ARGS!r})
        print(json.dumps([done.faces, fonts.status(), fonts.self_check(), result["png_base64"]]))
        """
    )
    faces, status, checked, png = json.loads(out)
    assert faces == 0
    assert status.startswith("unavailable: ") and "fonts-noto-core fonts-noto-cjk" in status
    assert checked == status
    image = Image.open(io.BytesIO(base64.b64decode(png))).convert("L")
    lines = range(len(realworld.NOT_EMBEDDED_LINES))
    boxes = [realworld.not_embedded_box(line, image.width) for line in lines]
    inked = {
        label
        for (label, *_rest), box in zip(realworld.NOT_EMBEDDED_LINES, boxes, strict=True)
        if sum(image.crop(box).histogram()[:DARK])
    }
    # The Greek line's μ is in PDFium's built-in faces (as "mu"); no other letter of it is.
    assert inked == {"Helvetica", "Arial bold", "Times italic", "Courier New", "Greek and Cyrillic, Noto"}
