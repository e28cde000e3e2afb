"""Scanned pages with known text, for ``bench/quality/ocr_score.py``.

    python -m bench.corpora.ocr_corpus OUT_DIR [--pages-per-variant 2] [--languages]

Each page is drawn with Pillow (several fonts and sizes; prose, a table, two columns), degraded
as a scanner or a fax would (noise, blur, JPEG, a small tilt) at 150, 200 or 300 dpi, and
wrapped as an image-only Letter PDF: no text layer, only the picture. ``truth.json`` holds each
file's text in reading order (the table row by row, the left column before the right) and its
variant. Deterministic for a given seed; nothing is downloaded.

With ``--languages``, the corpus is instead ``bench/corpora/ocr_texts.py``'s prose in every shipped
language, typeset with Debian's Noto fonts (Pillow lays out complex scripts with raqm: Arabic
joined and right to left, Devanagari conjuncts) in three scans per language (``LANGUAGE_VARIANTS``:
sans at 300 dpi, serif at 200 dpi, sans at 150 dpi, each noised and tilted), plus pages scanned
turned 90, 180 and 270 degrees and a blank scan (paper noise, no text). Its ``truth.json``
adds each page's language, script and how it is scored (words, or characters for scripts written
without spaces).
"""

from __future__ import annotations

import argparse
import io
import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fpdf import FPDF
from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

PAGE_IN = (8.5, 11.0)
MARGIN_IN = 0.9
LINE_SPACING = 1.45
FONT_DIR = Path("/usr/share/fonts/truetype/dejavu")
FONTS = {
    "sans": FONT_DIR / "DejaVuSans.ttf",
    "serif": FONT_DIR / "DejaVuSerif.ttf",
    "mono": FONT_DIR / "DejaVuSansMono.ttf",
    "pillow": None,  # Pillow's own font (Aileron)
}
_VOCABULARY = (
    "the invoice total payment account number customer order delivery date amount due "
    "within thirty days please contact our office for questions about this statement "
    "report quarter revenue growth market share product service support team meeting "
    "agenda minutes budget approval project schedule review board member policy insurance "
    "claim reference address street city postal code phone signature received shipped "
    "balance credit debit tax rate annual summary figures table column chapter section "
    "results method analysis sample data"
)
WORDS = _VOCABULARY.split()


@dataclass(frozen=True)
class Variant:
    """How one page is made and degraded."""

    name: str
    layout: str  # prose, table or columns
    font: str
    size_pt: int
    dpi: int
    noise: float = 0.0  # standard deviation of grey noise, 0-255
    blur: float = 0.0  # Gaussian blur radius in pixels
    jpeg: int = 0  # JPEG quality, 0: lossless
    tilt: float = 0.0  # degrees
    turn: int = 0  # the page scanned turned this many degrees counter-clockwise (0, 90, 180, 270)


VARIANTS = (
    Variant("clean-200", "prose", "sans", 11, 200),
    Variant("mild-200", "prose", "serif", 11, 200, noise=12, blur=0.6, jpeg=75, tilt=0.8),
    Variant("mild-200-mono", "prose", "mono", 10, 200, noise=12, blur=0.6, jpeg=75, tilt=-0.7),
    Variant("mild-200-pillow", "prose", "pillow", 12, 200, noise=12, blur=0.6, jpeg=75, tilt=0.5),
    Variant("table-200", "table", "sans", 10, 200, noise=10, blur=0.5, jpeg=80, tilt=0.4),
    Variant("columns-200", "columns", "serif", 10, 200, noise=10, blur=0.5, jpeg=80, tilt=-0.4),
    Variant("fax-150", "prose", "sans", 12, 150, noise=25, blur=0.8, jpeg=60, tilt=1.5),
    Variant("clean-300", "prose", "serif", 10, 300, noise=6, jpeg=85, tilt=0.3),
)


def _font(name: str, size_pt: int, dpi: int) -> Any:
    pixels = round(size_pt * dpi / 72)
    path = FONTS[name]
    if path is None or not path.exists():
        return ImageFont.load_default(size=pixels)
    return ImageFont.truetype(str(path), pixels)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 12))]
    words[0] = words[0].capitalize()
    if rng.random() < 0.4:
        words.insert(rng.randint(1, len(words) - 1), str(rng.randint(10, 99999)))
    return " ".join(words) + rng.choice([".", ".", ",", ";", ":"])


def _wrap(text: str, font: Any, width: int) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if font.getlength(trial) > width and line:
            lines.append(line)
            line = word
        else:
            line = trial
    if line:
        lines.append(line)
    return lines


def _prose(draw: Any, font: Any, box: tuple[int, int, int, int], rng: random.Random, step: int) -> list[str]:
    left, top, right, bottom = box
    text = " ".join(_sentence(rng) for _ in range(40))
    lines = []
    y = top
    for line in _wrap(text, font, right - left):
        if y + step > bottom:
            break
        draw.text((left, y), line, font=font, fill=0)
        lines.append(line)
        y += step
    return lines


def _table(draw: Any, font: Any, box: tuple[int, int, int, int], rng: random.Random, step: int) -> list[str]:
    left, top, right, _ = box
    columns = 4
    width = (right - left) // columns
    rows = [["Item", "Quantity", "Price", "Total"]]
    for _ in range(14):
        quantity, price = rng.randint(1, 40), rng.randint(100, 9999) / 100
        rows.append(
            [rng.choice(WORDS).capitalize(), str(quantity), f"{price:.2f}", f"{quantity * price:.2f}"]
        )
    lines = []
    y = top
    for row in rows:
        for column, cell in enumerate(row):
            draw.text((left + column * width + 8, y + step // 6), cell, font=font, fill=0)
        draw.line((left, y, left + columns * width, y), fill=0, width=2)
        lines.append(" ".join(row))
        y += round(step * 1.3)
    draw.line((left, y, left + columns * width, y), fill=0, width=2)
    for column in range(columns + 1):
        draw.line((left + column * width, top, left + column * width, y), fill=0, width=2)
    return lines


def _columns(
    draw: Any, font: Any, box: tuple[int, int, int, int], rng: random.Random, step: int
) -> list[str]:
    left, top, right, bottom = box
    gap = (right - left) // 16
    half = (right - left - gap) // 2
    return _prose(draw, font, (left, top, left + half, bottom), rng, step) + _prose(
        draw, font, (left + half + gap, top, right, bottom), rng, step
    )


LAYOUTS = {"prose": _prose, "table": _table, "columns": _columns}


def page(variant: Variant, seed: int) -> tuple[bytes, str]:
    """One image-only PDF page and its text in reading order."""
    rng = random.Random(seed)
    width, height = round(PAGE_IN[0] * variant.dpi), round(PAGE_IN[1] * variant.dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    font = _font(variant.font, variant.size_pt, variant.dpi)
    margin = round(MARGIN_IN * variant.dpi)
    step = round(variant.size_pt * LINE_SPACING * variant.dpi / 72)
    box = (margin, margin, width - margin, height - margin)
    lines = LAYOUTS[variant.layout](draw, font, box, rng, step)
    image = _degrade(image, variant)
    return _pdf(image, variant), "\n".join(lines)


def _pdf(image: Image.Image, variant: Variant) -> bytes:
    """An image-only page of the scan's own size in inches (turned with it)."""
    turned = variant.turn in (90, 270)
    width_in, height_in = (PAGE_IN[1], PAGE_IN[0]) if turned else PAGE_IN
    pdf = FPDF(unit="pt", format=(width_in * 72, height_in * 72))
    pdf.add_page()
    pdf.image(image, x=0, y=0, w=width_in * 72, h=height_in * 72)
    return bytes(pdf.output())


# -- the languages corpus --------------------------------------------------------------------

LANGUAGE_VARIANTS = (
    Variant("sans-300", "prose", "0", 11, 300, noise=8, jpeg=85, tilt=0.4),
    Variant("serif-200", "prose", "1", 11, 200, noise=12, blur=0.5, jpeg=75, tilt=-0.7),
    Variant("sans-150", "prose", "0", 12, 150, noise=12, blur=0.4, jpeg=80, tilt=0.6),
)
TURNED = (("eng", 90), ("deu", 180), ("rus", 270), ("chi_sim", 90), ("ara", 180), ("fra", 270))
BLANK = Variant("blank", "prose", "0", 11, 200, noise=14, blur=0.5, jpeg=75)
_MARKS = ("Mn", "Mc", "Me")  # combining marks: a line never starts with one


def _units(text: str, spaced: bool) -> list[str]:
    """What a line may break between: words (with their space) or, for scripts written without
    spaces, characters with the marks that follow them."""
    import unicodedata

    if spaced:
        return [word + " " for word in text.split()]
    units: list[str] = []
    for char in text:
        if units and unicodedata.category(char) in _MARKS:
            units[-1] += char
        else:
            units.append(char)
    return units


def _wrap_units(units: list[str], font: Any, width: int) -> list[str]:
    lines: list[str] = []
    line = ""
    for unit in units:
        if line and font.getlength((line + unit).strip()) > width:
            lines.append(line.strip())
            line = unit.lstrip()
        else:
            line += unit
    if line.strip():
        lines.append(line.strip())
    return lines


def language_page(lang: str, variant: Variant, seed: int) -> tuple[bytes, str]:
    """One image-only page of ``lang``'s prose (its sentences in an order drawn from ``seed``)."""
    from bench.corpora.ocr_texts import FONTS, SPACED, TEXTS

    rng = random.Random(seed)
    width, height = round(PAGE_IN[0] * variant.dpi), round(PAGE_IN[1] * variant.dpi)
    image = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(image)
    path, index = FONTS[lang][int(variant.font) % len(FONTS[lang])]
    font = ImageFont.truetype(path, round(variant.size_pt * variant.dpi / 72), index=index)
    margin = round(MARGIN_IN * variant.dpi)
    step = round(variant.size_pt * LINE_SPACING * variant.dpi / 72)
    rtl = lang in ("ara", "fas", "heb")
    text = TEXTS[lang]
    if lang in SPACED:  # the sentences in another order, so that no two pages are alike
        sentences = [s for s in text.replace("! ", "!\n").replace(". ", ".\n").split("\n") if s]
        rng.shuffle(sentences)
        text = " ".join(sentences)
    lines = _wrap_units(_units(text, lang in SPACED), font, width - 2 * margin)
    y = margin
    kept = []
    for line in lines:
        if y + step > height - margin:
            break
        x = width - margin - font.getlength(line) if rtl else margin
        draw.text((x, y), line, font=font, fill=0)
        kept.append(line)
        y += step
    return _pdf(_degrade(image, variant), variant), "\n".join(kept)


def languages_corpus(out: Path, seed: int) -> dict[str, dict[str, Any]]:
    from bench.corpora.ocr_texts import SCRIPTS, SPACED, TEXTS

    truth: dict[str, dict[str, Any]] = {}

    def add(name: str, lang: str, variant: Variant, data: bytes, text: str) -> None:
        (out / name).write_bytes(data)
        truth[name] = {
            "text": text,
            "variant": variant.name,
            "dpi": variant.dpi,
            "lang": lang,
            "script": SCRIPTS.get(lang, ""),
            "scoring": "words" if lang in SPACED else "characters",
            "turn": variant.turn,
        }

    for number, lang in enumerate(TEXTS):
        for copy, variant in enumerate(LANGUAGE_VARIANTS):
            data, text = language_page(lang, variant, seed * 1000 + number * 10 + copy)
            add(f"{lang}-{variant.name}.pdf", lang, variant, data, text)
    for number, (lang, turn) in enumerate(TURNED):
        variant = Variant(f"turned-{turn}", "prose", "0", 11, 200, noise=10, jpeg=80, tilt=0.3, turn=turn)
        data, text = language_page(lang, variant, seed * 7000 + number)
        add(f"{lang}-turned-{turn}.pdf", lang, variant, data, text)
    blank = _degrade(Image.new("L", (round(PAGE_IN[0] * 200), round(PAGE_IN[1] * 200)), 250), BLANK)
    add("blank-200.pdf", "", BLANK, _pdf(blank, BLANK), "")
    return truth


def _degrade(image: Image.Image, variant: Variant) -> Image.Image:
    if variant.turn:
        image = image.rotate(variant.turn, expand=True)
    if variant.tilt:
        image = image.rotate(variant.tilt, resample=Image.Resampling.BICUBIC, fillcolor=255)
    if variant.blur:
        image = image.filter(ImageFilter.GaussianBlur(variant.blur))
    if variant.noise:  # Gaussian grey noise: a scanner's sensor and the paper's grain
        noise = Image.effect_noise(image.size, variant.noise)  # centred on 128
        image = ImageChops.add(image, noise, scale=1.0, offset=-128)
    if variant.jpeg:
        out = io.BytesIO()
        image.save(out, format="JPEG", quality=variant.jpeg)
        image = Image.open(io.BytesIO(out.getvalue()))
        image.load()
    return image


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--pages-per-variant", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--languages", action="store_true", help="every shipped language's scans instead")
    ns = parser.parse_args()
    ns.out.mkdir(parents=True, exist_ok=True)
    if ns.languages:
        (ns.out / "truth.json").write_text(json.dumps(languages_corpus(ns.out, ns.seed), indent=1) + "\n")
        return
    truth: dict[str, dict[str, Any]] = {}
    for number, variant in enumerate(VARIANTS):
        for copy in range(ns.pages_per_variant):
            data, text = page(variant, ns.seed * 1000 + number * 10 + copy)
            name = f"{variant.name}-{copy + 1}.pdf"
            (ns.out / name).write_bytes(data)
            truth[name] = {
                "text": text,
                "variant": variant.name,
                "dpi": variant.dpi,
                "layout": variant.layout,
            }
    (ns.out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


if __name__ == "__main__":
    main()
