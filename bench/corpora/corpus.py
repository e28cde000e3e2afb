"""Benchmark corpus, generated (nothing downloaded): ``python -m bench.corpora.corpus [DIR]``.

text-1/10/100/1000.pdf: pages of prose-like text (about 3,000 characters a page);
paper-14.pdf: a 14-page two-column paper with a table on every page;
form-4.pdf: a 4-page application form, printed labels plus filled AcroForm fields (text, check
boxes, a choice per page);
scan-10.pdf: 10 pages, each a full-page photo-like JPEG with a short caption as its only text.
"""

from __future__ import annotations

import io
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pikepdf
from fpdf import FPDF
from PIL import Image

DEFAULT_DIR = Path(__file__).resolve().parents[1] / ".corpus"
WORDS = [
    "sandbox", "parser", "document", "supervisor", "page", "token", "stream", "object", "font",
    "glyph", "layout", "column", "table", "process", "memory", "budget", "cursor", "result",
    "agent", "protocol", "untrusted", "reader", "secure", "fast", "text",
]  # fmt: skip


def _paragraph(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "."


def text_document(pages: int, seed: int = 1) -> bytes:
    rng = random.Random(seed)
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_font("helvetica", size=10)
    pdf.set_auto_page_break(False)
    for _ in range(pages):
        pdf.add_page()
        pdf.set_xy(50, 50)
        pdf.multi_cell(495, 13, "\n\n".join(_paragraph(rng, 90) for _ in range(5)))
    return bytes(pdf.output())


def paper(pages: int = 14, seed: int = 2) -> bytes:
    rng = random.Random(seed)
    pdf = FPDF(unit="pt", format="letter")
    pdf.set_auto_page_break(False)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("helvetica", "B", 14)
        pdf.set_xy(50, 40)
        pdf.cell(text=f"Section {number}: results")
        pdf.set_font("helvetica", size=9)
        for x in (50, 320):
            pdf.set_xy(x, 70)
            pdf.multi_cell(240, 11, "\n\n".join(_paragraph(rng, 60) for _ in range(4)))
        pdf.set_xy(50, 560)
        with pdf.table(width=500, col_widths=(2, 1, 1, 1)) as table:
            for row in range(8):
                cells = table.row()
                cells.cell(f"case {row}")
                for _ in range(3):
                    cells.cell(f"{rng.uniform(0, 100):.2f}")
    return bytes(pdf.output())


def form(pages: int = 4, seed: int = 3) -> bytes:
    """Labels and boxes drawn by fpdf2; the fields themselves added with pikepdf (fpdf2 writes
    no AcroForm): per page six filled text fields, two check boxes and a choice."""
    rng = random.Random(seed)
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    layout: list[list[tuple[str, str, list[float]]]] = []
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.set_font("helvetica", "B", 13)
        pdf.set_xy(50, 40)
        pdf.cell(text=f"Application, part {number} of {pages}")
        pdf.set_font("helvetica", size=9)
        pdf.set_xy(50, 62)
        pdf.multi_cell(495, 11, _paragraph(rng, 70))
        fields = []
        for row in range(9):
            top = 160 + row * 60
            kind = "text" if row < 6 else "check" if row < 8 else "choice"
            label = f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS)} ({number}.{row + 1})"
            pdf.set_xy(50, top)
            pdf.cell(text=label)
            width = 14 if kind == "check" else 300
            pdf.rect(220, top - 4, width, 18)
            fields.append(
                (
                    kind,
                    f"part{number}.field{row + 1}",
                    [220.0, 842.0 - top - 14, 220.0 + width, 842.0 - top + 4],
                )
            )
        layout.append(fields)
    document = pikepdf.open(io.BytesIO(bytes(pdf.output())))
    all_fields = []
    for page, fields in zip(document.pages, layout, strict=True):
        widgets = []
        for kind, name, rect in fields:
            entries: dict[str, Any] = {"T": pikepdf.String(name), "Rect": rect, "P": page.obj}
            if kind == "text":
                entries |= {
                    "FT": pikepdf.Name.Tx,
                    "V": pikepdf.String(_paragraph(rng, 4)),
                    "DA": pikepdf.String("/Helv 9 Tf 0 g"),
                }
            elif kind == "check":
                on = rng.random() < 0.5
                entries |= {"FT": pikepdf.Name.Btn, "V": pikepdf.Name.Yes if on else pikepdf.Name.Off}
            else:
                options = [pikepdf.String(word) for word in WORDS[:6]]
                entries |= {"FT": pikepdf.Name.Ch, "Ff": 131072, "Opt": options, "V": options[2]}
            widget = document.make_indirect(
                pikepdf.Dictionary(Type=pikepdf.Name.Annot, Subtype=pikepdf.Name.Widget, **entries)
            )
            widgets.append(widget)
        page.obj.Annots = document.make_indirect(pikepdf.Array(widgets))
        all_fields += widgets
    document.Root.AcroForm = pikepdf.Dictionary(Fields=all_fields, NeedAppearances=True)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def scan(pages: int = 10, seed: int = 4) -> bytes:
    """Photo-like pages: a gradient with noise as a 1240 x 1754 JPEG (150 dpi A4), captioned."""
    rng = random.Random(seed)
    pdf = FPDF(unit="pt", format="A4")
    pdf.set_auto_page_break(False)
    for number in range(1, pages + 1):
        size = (1240, 1754)
        noise = Image.effect_noise((310, 438), 40 + 5 * number).resize(size).convert("RGB")
        gradient = Image.linear_gradient("L").resize(size).convert("RGB")
        picture = Image.blend(noise, gradient, 0.5)
        jpeg = io.BytesIO()
        picture.save(jpeg, format="JPEG", quality=70)
        pdf.add_page()
        pdf.image(jpeg, x=0, y=0, w=595, h=780)
        pdf.set_font("helvetica", size=9)
        pdf.set_xy(50, 795)
        pdf.cell(text=f"Scan {number}: {_paragraph(rng, 12)}")
    return bytes(pdf.output())


def build(folder: Path = DEFAULT_DIR) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    makers: dict[str, Callable[[], bytes]] = {
        "text-1.pdf": lambda: text_document(1),
        "text-10.pdf": lambda: text_document(10),
        "text-100.pdf": lambda: text_document(100),
        "text-1000.pdf": lambda: text_document(1000),
        "paper-14.pdf": paper,
        "form-4.pdf": form,
        "scan-10.pdf": scan,
    }
    for name, make in makers.items():
        path = folder / name
        if not path.exists():
            path.write_bytes(make())
        made[name] = path
    return made


if __name__ == "__main__":
    for path in build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR).values():
        sys.stdout.write(f"{path} {path.stat().st_size} bytes\n")
