"""Fonts a document names but does not embed (``pdf_airlock.worker.fonts``), in the real
sandbox: the job child draws them from the zygote's memory as a process reading the host's
fonts does.

``realworld.not_embedded_fonts_pdf`` (Latin Standard 14 names, CJK through predefined CMaps,
Arabic, Hebrew, Devanagari, Bengali, Thai, Greek and Cyrillic by name) is rendered by
``pdf_render`` over real stdio in a sandboxed child (strict loads on: the child opens no font
file) and compared with two renders in fresh processes: the same code after ``fonts.install``
(must be identical), and PDFium with its own Linux font list over the host's
``/usr/share/fonts`` (identical where it draws the same face; blank on the script fonts' usual
names, which the fallback fonts draw). Needs Debian's fonts-noto-core and fonts-noto-cjk
(``scripts/test.sh`` installs them when it runs as root); skipped without.
"""

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
from conftest import connect
from PIL import Image, ImageChops

from pdf_airlock.worker.fonts import catalogue

INSTALLED = all(os.path.isfile(path) for path in catalogue.paths())
needs_fonts = pytest.mark.skipif(
    not INSTALLED,
    reason=f"the fallback fonts are not installed here (Debian: {' '.join(catalogue.packages())}; "
    "scripts/test.sh installs them when run as root)",
)
RENDER_ARGS = {"page": "1", "dpi": 72, "max_pixels": 4_000_000}
DARK = 128
MIN_INK = 150  # dark pixels of a drawn line at 72 dpi (the smallest measured here draws ~260)
DIFFERENT = 32  # a grey-level difference a person would see
pytestmark = [needs_fonts, pytest.mark.slow]


def _subprocess_render(pdf: Path, install: bool) -> Image.Image:
    """``pdf_render``'s parser in a fresh process: after ``fonts.install`` (the job child's code
    without its sandbox), or with PDFium's own system fonts."""
    code = textwrap.dedent(
        f"""
        import base64, sys
        if {install!r}:
            from pdf_airlock.worker import fonts
            fonts.install()
        from pdf_airlock.worker.parsers import get_parser
        result = get_parser("pdf_render")(open(sys.argv[1], "rb").read(), {RENDER_ARGS!r})
        sys.stdout.write(result["png_base64"])
        """
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", code, str(pdf)], capture_output=True, text=True, check=True, timeout=120
    )
    return Image.open(io.BytesIO(base64.b64decode(done.stdout))).convert("L")


def _band(image: Image.Image, line: int) -> Image.Image:
    return image.crop(realworld.not_embedded_box(line, image.width))


def _ink(image: Image.Image) -> int:
    return sum(image.histogram()[:DARK])


def _differing(a: Image.Image, b: Image.Image) -> int:
    return sum(ImageChops.difference(a, b).histogram()[DIFFERENT:])


@pytest.fixture(scope="module")
def not_embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fonts")
    (folder / "not-embedded.pdf").write_bytes(realworld.not_embedded_fonts_pdf())
    return folder


@pytest.mark.anyio
async def test_fonts_not_embedded_draw_in_the_sandbox_as_in_process(not_embedded: Path) -> None:
    async with connect(not_embedded) as client:
        rendered = await client.call_tool("pdf_render", {"path": "not-embedded.pdf", "dpi": 72})
    assert rendered.is_error is False, rendered.content[0].text
    sandboxed = Image.open(io.BytesIO(base64.b64decode(rendered.content[1].data))).convert("L")
    in_process = _subprocess_render(not_embedded / "not-embedded.pdf", install=True)
    pdfium_own = _subprocess_render(not_embedded / "not-embedded.pdf", install=False)
    assert sandboxed.size == in_process.size == (612, realworld.not_embedded_height())
    assert _differing(sandboxed, in_process) == 0
    blank = set()
    for line, (label, _font, _encoding, _text, same_as_pdfium) in enumerate(realworld.NOT_EMBEDDED_LINES):
        ours, own = _band(sandboxed, line), _band(pdfium_own, line)
        assert _ink(ours) >= MIN_INK, label
        if same_as_pdfium:
            assert _differing(ours, own) == 0, label
        if not _ink(own):
            blank.add(label)
    # PDFium alone draws nothing for a font made for one script under its usual name.
    assert blank == {"Arabic", "Hebrew", "Devanagari", "Bengali", "Thai"}


def test_the_self_test_draws_every_script_in_the_sandbox() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pdf_airlock.server", "self-test", "--json"],
        capture_output=True, text=True, timeout=120, check=False, cwd="/",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    status = json.loads(done.stdout)["layers"]["fonts"]
    scripts = "Chinese, Japanese, Korean, Arabic, Hebrew, Devanagari, Bengali, Thai, Cyrillic"
    assert status.startswith("active: ") and status.endswith(f"fonts not embedded drew {scripts}"), status
