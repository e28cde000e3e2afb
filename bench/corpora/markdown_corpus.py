"""Documents with known structure for the ``pdf_markdown`` quality benchmark, and their truth.

    python -m bench.corpora.markdown_corpus [DIR]      (default: bench/.corpus/markdown/)

Writes six PDFs (three single-column reports of 5-8 pages, three two-column papers of 4-6
pages: title and abstract full width, then two columns), each with ``NAME.json`` beside it, and
``warmup.pdf`` (one page, no truth: what the runner warms each system on). Every page carries a
running header (the document's short title) and a page-number footer ("Page 3 of 7" or "3").
Headings are bold in a second font family at four sizes (levels 1-4, some numbered "2.1"),
body paragraphs wrap over several lines (some words hyphenated across a line break), lists use
"•", "-" and "1." with one nested level, tables are a ruled grid or whitespace-aligned, some
documents embed an image with an italic caption. Deterministic: a fixed seed per document.

The truth JSON holds ``headings`` [[text, level]], ``list_items`` [[text, depth]], ``tables``
[[[cell]]], ``header``, ``footers`` (one per page), ``pages`` and ``body``: the text of every
block (headings, paragraphs, list items, table rows) in reading order.
"""

from __future__ import annotations

import json
import random
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

from fpdf import FPDF
from PIL import Image

DEFAULT_DIR = Path(__file__).resolve().parents[1] / ".corpus" / "markdown"
PT = 0.3528  # mm per point
MARGIN = 20.0
HEADER_Y = 10.0
TOP = 24.0
FOOTER_GAP = 12.0  # footer baseline above the bottom edge
BOTTOM_GAP = 22.0  # body stops this far above the bottom edge
COLUMN_GAP = 8.0
LIST_INDENT = 6.0
LIST_HANG = 5.0
LEADING = 1.25
HYPHEN_MIN = 9  # only words this long are split across a line break
HEADING_SIZES = {1: 20.0, 2: 16.0, 3: 13.0, 4: 11.5}
PAPER_SIZES = {1: 20.0, 2: 13.0, 3: 11.5}
WORDS = (
    "the", "system", "reads", "each", "page", "and", "keeps", "its", "structure", "for", "later", "steps",
    "while", "agents", "ask", "for", "short", "answers", "about", "the", "report", "data", "model",
    "review", "team", "budget", "growth", "quarter", "region", "cost", "value", "network", "storage",
    "service", "client", "server", "request", "response", "latency", "throughput", "memory", "process",
    "policy", "sandbox", "parser", "layout", "column", "heading", "table", "figure", "result", "method",
    "sample", "measure", "error", "signal", "window", "batch", "queue", "cache", "index", "record",
    "field", "stream", "object", "summary", "infrastructure", "configuration", "performance",
    "measurement", "documentation", "implementation", "characteristics", "responsibility",
    "administration", "transformation", "organisation", "distribution", "verification", "reliability",
    "availability", "compatibility", "recommendation", "interpretation",
)  # fmt: skip
TOPICS = (
    "Scope", "Background", "Method", "Results", "Discussion", "Limits", "Costs", "Security", "Storage",
    "Network", "Planning", "Outlook", "Design", "Evaluation", "Deployment", "Operations", "Training",
    "Findings", "Risks", "Metrics",
)  # fmt: skip
NESTED_MARK = "\u2013"  # en dash
CELLS = ("North", "South", "East", "West", "Central", "Harbour", "Valley", "Ridge")


# -- the blocks of a document, in reading order ------------------------------------------------


class Heading(NamedTuple):
    text: str
    level: int


class Para(NamedTuple):
    text: str
    italic: bool = False


class Item(NamedTuple):
    text: str
    depth: int
    marker: str


class Table(NamedTuple):
    rows: list[list[str]]
    ruled: bool


class Figure(NamedTuple):
    seed: int


class Columns(NamedTuple):
    """From here on the flow runs in two columns."""


Block = Heading | Para | Item | Table | Figure | Columns


@dataclass
class Style:
    name: str
    paper: bool
    head_font: str
    body_font: str
    body_size: float
    page_format: str
    footer: str  # "of": "Page 3 of 7"; "bare": "3"
    numbered: bool
    sections: int
    figure: bool = True
    seed: int = 0
    bullets: tuple[str, str] = ("•", "-")
    sizes: dict[int, float] = field(default_factory=lambda: dict(HEADING_SIZES))


STYLES = (
    Style("report-a", False, "Helvetica", "Times", 11, "A4", "of", True, 6, seed=11),
    Style("report-b", False, "Times", "Helvetica", 10.5, "Letter", "bare", False, 6, False, 12, ("-", "•")),
    Style("report-c", False, "Helvetica", "Times", 11.5, "A4", "bare", True, 6, seed=13),
    Style("paper-a", True, "Helvetica", "Times", 10, "A4", "bare", True, 6, seed=21, sizes=PAPER_SIZES),
    Style("paper-b", True, "Times", "Helvetica", 9.5, "Letter", "of", True, 7, False, 22, sizes=PAPER_SIZES),
    Style("paper-c", True, "Helvetica", "Times", 10, "Letter", "of", False, 6, seed=23, sizes=PAPER_SIZES),
)


# -- content --------------------------------------------------------------------------------


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 17))]
    return " ".join(words).capitalize() + "."


def paragraph(rng: random.Random, low: int = 3, high: int = 6) -> str:
    return " ".join(sentence(rng) for _ in range(rng.randint(low, high)))


def clause(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 16))).capitalize()


def list_blocks(rng: random.Random, style: Style, numbered: bool) -> list[Block]:
    blocks: list[Block] = []
    bullet = style.bullets[rng.randint(0, 1)]
    for index in range(1, rng.randint(3, 5) + 1):
        blocks.append(Item(clause(rng), 0, f"{index}." if numbered else bullet))
        if index == 2:
            blocks += [Item(clause(rng), 1, NESTED_MARK), Item(clause(rng), 1, NESTED_MARK)]
    return blocks


def table_rows(rng: random.Random, rows: int) -> list[list[str]]:
    def cells(r: int) -> list[str]:
        place, units, revenue = rng.choice(CELLS), rng.randint(100, 999), rng.randint(10, 99)
        return [f"{place} {r + 1}0", str(units), f"{revenue}.{r}", f"{rng.randint(-9, 19)}.5%"]

    return [["Region", "Units", "Revenue", "Change"], *(cells(r) for r in range(rows))]


def title_of(style: Style, rng: random.Random) -> str:
    return f"{rng.choice(TOPICS)} and {rng.choice(TOPICS)} of the {style.name.title()} Programme"


def section_title(style: Style, rng: random.Random, number: str, used: set[str]) -> str:
    title = rng.choice(TOPICS) + " " + rng.choice(("Overview", "Notes", "Review", "Details", "Summary"))
    while title in used:
        title += " " + rng.choice(TOPICS)
    used.add(title)
    return f"{number} {title}" if style.numbered else title


def section_blocks(style: Style, rng: random.Random, index: int, used: set[str]) -> list[Block]:
    sep = "." if style.name.endswith("a") else ""
    heading = Heading(section_title(style, rng, f"{index}{sep}", used), 2)
    blocks: list[Block] = [heading, Para(paragraph(rng))]
    for sub in range(1, rng.randint(2, 3) + 1):
        blocks += [Heading(section_title(style, rng, f"{index}.{sub}", used), 3), Para(paragraph(rng))]
        if (index + sub) % 3 == 0:
            blocks += list_blocks(rng, style, numbered=(index % 2 == 0))
        if (index + sub) % 4 == 1 and not style.paper:
            heading = Heading(section_title(style, rng, f"{index}.{sub}.1", used), 4)
            blocks += [heading, Para(paragraph(rng))]
        if (index * sub) % 5 == 3:
            blocks.append(Table(table_rows(rng, rng.randint(3, 4)), ruled=(index % 2 == 1)))
        blocks.append(Para(paragraph(rng, 2, 5)))
    if style.figure and index == 2:
        blocks += [Figure(style.seed), Para(f"Figure {index}. {clause(rng)}.", True)]
    return blocks


def plan(style: Style) -> tuple[str, list[Block]]:
    rng = random.Random(style.seed)
    title = title_of(style, rng)
    blocks: list[Block] = [Heading(title, 1)]
    if style.paper:
        blocks += [Para("A. Author, B. Writer and C. Reviewer, Example Institute"), Heading("Abstract", 2)]
        blocks += [Para(paragraph(rng, 5, 6)), Columns()]
    used: set[str] = set()
    for index in range(1, style.sections + 1):
        blocks += section_blocks(style, rng, index, used)
    if not any(isinstance(b, Table) for b in blocks):
        blocks.append(Table(table_rows(rng, 3), ruled=False))
    return title, blocks


# -- layout -----------------------------------------------------------------------------------


class Flow:
    """Places lines top to bottom in one or two columns, page after page, drawing the running
    header and the footer on each new page."""

    def __init__(self, pdf: FPDF, style: Style, header: str, total: int) -> None:
        self.pdf, self.style, self.header, self.total = pdf, style, header, total
        self.page, self.columns, self.column, self.y, self.column_top = 0, 1, 0, TOP, TOP
        self.hyphen_turn = 0

    @property
    def bottom(self) -> float:
        return float(self.pdf.h) - BOTTOM_GAP

    @property
    def width(self) -> float:
        full = float(self.pdf.w) - 2 * MARGIN
        return full if self.columns == 1 else (full - COLUMN_GAP) / 2

    @property
    def x(self) -> float:
        return MARGIN + self.column * (self.width + COLUMN_GAP)

    def new_page(self) -> None:
        self.pdf.add_page()
        self.page += 1
        self.column, self.y, self.column_top = 0, TOP, TOP
        self.pdf.set_font("Helvetica", "", 9)
        self.pdf.text(MARGIN, HEADER_Y + 3, self.header)
        self.pdf.line(MARGIN, HEADER_Y + 5, self.pdf.w - MARGIN, HEADER_Y + 5)
        footer = f"Page {self.page} of {self.total}" if self.style.footer == "of" else str(self.page)
        self.pdf.text((self.pdf.w - self.pdf.get_string_width(footer)) / 2, self.pdf.h - FOOTER_GAP, footer)

    def two_columns(self) -> None:
        self.columns, self.column, self.column_top = 2, 0, self.y

    def need(self, height: float) -> None:
        if self.y + height <= self.bottom:
            return
        if self.column + 1 < self.columns:
            self.column, self.y = self.column + 1, self.column_top
        else:
            self.new_page()

    def split(self, word: str, room: float) -> tuple[str, str] | None:
        """A hyphenated break of ``word`` whose first part fits in ``room``, every other time."""
        if len(word) < HYPHEN_MIN or not word.isalpha():
            return None
        self.hyphen_turn += 1
        if self.hyphen_turn % 2:
            return None
        for cut in range(len(word) - 3, 3, -1):
            if self.pdf.get_string_width(word[:cut] + "-") <= room:
                return word[:cut] + "-", word[cut:]
        return None

    def wrap(self, text: str, width: float) -> list[str]:
        lines, line, words = [], "", text.split()
        while words:
            word = words.pop(0)
            candidate = f"{line} {word}" if line else word
            if self.pdf.get_string_width(candidate) <= width:
                line = candidate
                continue
            parts = self.split(word, width - self.pdf.get_string_width(line + " "))
            if parts and line:
                lines.append(f"{line} {parts[0]}")
                line = parts[1]
            else:
                lines += [line] if line else []
                line = word
        return [*lines, line]

    def text(
        self, text: str, font: str, style: str, size: float, indent: float = 0, marker: str = ""
    ) -> None:
        self.pdf.set_font(font, style, size)
        height = size * PT * LEADING
        hang = LIST_HANG if marker else 0
        for number, line in enumerate(self.wrap(text, self.width - indent - hang)):
            self.need(height)
            self.pdf.set_font(font, style, size)  # a new page drew its header in another font
            if marker and number == 0:
                self.pdf.text(self.x + indent, self.y + size * PT, marker)
            self.pdf.text(self.x + indent + hang, self.y + size * PT, line)
            self.y += height

    def gap(self, millimetres: float) -> None:
        self.y = min(self.y + millimetres, self.bottom) if self.y > self.column_top else self.y


def draw_heading(flow: Flow, block: Heading) -> None:
    size = flow.style.sizes[block.level]
    flow.gap(size * PT * 0.8)
    flow.need(size * PT * LEADING + 3 * flow.style.body_size * PT * LEADING)
    flow.text(block.text, flow.style.head_font, "B", size)
    flow.gap(1.5)


def draw_table(flow: Flow, block: Table) -> None:
    size = flow.style.body_size - 1
    height = size * PT * 1.8
    width = flow.width / len(block.rows[0])
    flow.gap(2)
    flow.need(height * len(block.rows))
    for number, row in enumerate(block.rows):
        flow.pdf.set_font(flow.style.body_font, "B" if number == 0 else "", size)
        for column, cell in enumerate(row):
            flow.pdf.text(flow.x + column * width + 1.5, flow.y + height * 0.68, cell)
        if block.ruled:
            for column in range(len(row) + 1):
                flow.pdf.line(flow.x + column * width, flow.y, flow.x + column * width, flow.y + height)
            flow.pdf.line(flow.x, flow.y, flow.x + flow.width, flow.y)
        flow.y += height
    if block.ruled:
        flow.pdf.line(flow.x, flow.y, flow.x + flow.width, flow.y)
    flow.gap(3)


def draw_figure(flow: Flow, block: Figure) -> None:
    rng = random.Random(block.seed)
    image = Image.new("RGB", (64, 32))
    image.putdata([(x * 4, rng.randint(60, 200), y * 8) for y in range(32) for x in range(64)])
    width = min(60.0, flow.width)
    flow.gap(2)
    flow.need(width / 2 + 2)
    flow.pdf.image(image, x=flow.x, y=flow.y, w=width, h=width / 2)
    flow.y += width / 2 + 2


def draw(flow: Flow, block: Block) -> None:
    body, size = flow.style.body_font, flow.style.body_size
    if isinstance(block, Heading):
        draw_heading(flow, block)
    elif isinstance(block, Para):
        flow.text(block.text, body, "I" if block.italic else "", size)
        flow.gap(size * PT * 0.7)
    elif isinstance(block, Item):
        flow.text(block.text, body, "", size, indent=block.depth * LIST_INDENT, marker=block.marker)
        flow.gap(0.8)
    elif isinstance(block, Table):
        draw_table(flow, block)
    elif isinstance(block, Figure):
        draw_figure(flow, block)
    else:
        flow.two_columns()


def render(style: Style, header: str, blocks: list[Block], total: int) -> tuple[FPDF, int]:
    pdf = FPDF(unit="mm", format=style.page_format)
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_auto_page_break(False)
    pdf.set_line_width(0.2)
    flow = Flow(pdf, style, header, total)
    flow.new_page()
    for before, block in zip([None, *blocks], blocks, strict=False):
        if isinstance(before, Item) and not isinstance(block, Item):
            flow.gap(style.body_size * PT * 0.7)
        draw(flow, block)
    return pdf, flow.page


# -- truth and output -------------------------------------------------------------------------


def body_text(block: Block) -> str | None:
    if isinstance(block, Heading | Para | Item):
        return block.text
    return " ".join(" ".join(row) for row in block.rows) if isinstance(block, Table) else None


def truth(style: Style, header: str, blocks: list[Block], pages: int) -> dict[str, object]:
    footers = [f"Page {n} of {pages}" if style.footer == "of" else str(n) for n in range(1, pages + 1)]
    return {
        "name": style.name,
        "kind": "paper" if style.paper else "report",
        "pages": pages,
        "header": header,
        "footers": footers,
        "headings": [[b.text, b.level] for b in blocks if isinstance(b, Heading)],
        "list_items": [[b.text, b.depth] for b in blocks if isinstance(b, Item)],
        "tables": [b.rows for b in blocks if isinstance(b, Table)],
        "body": [text for b in blocks if (text := body_text(b)) is not None],
        "style": {k: v for k, v in asdict(style).items() if k != "sizes"},
    }


def build_one(style: Style, folder: Path) -> Path:
    title, blocks = plan(style)
    header = f"{title.split(' of the ')[0]} · {style.name.upper()}"
    _, pages = render(style, header, blocks, total=0)
    pdf, check = render(style, header, blocks, total=pages)
    assert check == pages
    path = folder / f"{style.name}.pdf"
    pdf.output(str(path))
    (folder / f"{style.name}.json").write_text(json.dumps(truth(style, header, blocks, pages), indent=1))
    return path


def build_warmup(folder: Path) -> None:
    style = Style("warmup", False, "Helvetica", "Times", 11, "A4", "bare", True, 1, False, 99)
    pdf, _ = render(style, "Warm-up", [Heading("Warm-up", 1), Para(paragraph(random.Random(99)))], total=1)
    pdf.output(str(folder / "warmup.pdf"))


def build(folder: Path = DEFAULT_DIR) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    build_warmup(folder)
    return [build_one(style, folder) for style in STYLES]


if __name__ == "__main__":
    for built in build(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DIR):
        meta = json.loads(built.with_suffix(".json").read_text())
        print(f"{built}: {meta['pages']} pages, {len(meta['headings'])} headings")
