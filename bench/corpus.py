"""Benchmark corpus, generated (nothing downloaded): ``python bench/corpus.py [DIR]``.

text-1/10/100/1000.pdf: pages of prose-like text (about 3,000 characters a page);
paper-14.pdf: a 14-page two-column paper with a table on every page.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

from fpdf import FPDF

DEFAULT_DIR = Path(__file__).resolve().parent / ".corpus"
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


def build(folder: Path = DEFAULT_DIR) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    made = {}
    for name, make in (
        ("text-1.pdf", lambda: text_document(1)),
        ("text-10.pdf", lambda: text_document(10)),
        ("text-100.pdf", lambda: text_document(100)),
        ("text-1000.pdf", lambda: text_document(1000)),
        ("paper-14.pdf", paper),
    ):
        path = folder / name
        if not path.exists():
            path.write_bytes(make())
        made[name] = path
    return made


if __name__ == "__main__":
    for path in build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR).values():
        sys.stdout.write(f"{path} {path.stat().st_size} bytes\n")
