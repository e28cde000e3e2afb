"""Structure on real documents: pdf-airlock's ``pdf_markdown`` and ``pdf_tables`` beside their
peers, in one run, on the dev set of ``bench/corpora/devset_build.py``.

    python -m bench.quality.structure_score [--devset /work/corpus/devset] [--peers-python PY]
                                    [--systems pdf-airlock,pymupdf4llm,...] [--kinds paper,manual,...]
                                    [--split all|dev|held-out] [--only NAME ...]
                                    [--report docs/structure-devset.md] [--no-write]

Systems, each in a process of its own and timed after a warm-up document: pdf-airlock over MCP
stdio (the real server, sandboxed, cache off), and in the peers' venv (``--peers-python``, never
this project's dependencies) pymupdf4llm with its layout model, liteparse, edgeparse and
markitdown; PDFium's flat text is the floor. On the ICDAR 2013 tables (table pages given):
pdf-airlock ``pdf_tables``, camelot lattice and stream, pdfplumber.

Scores, per document and summed by kind, dev and held-out apart:

* headings: precision, recall, F1 against the truth (a found heading matches a truth heading
  when their words agree once the numbering ("3.2", "IV.", "A.", "Appendix B") is set aside;
  a title wrapped over two heading lines counts once); levels: the share of consecutive matched
  headings whose step (deeper, same, shallower) is the truth's;
* text similarity: difflib's ratio between the words of the truth's body (from the LaTeX
  source) and the words of the output (Markdown markup and bare numbers set aside), the same for
  PDFium's flat text (the floor every structure must beat);
* unit tests in the manner of olmOCR-bench (``present``, ``absent``, ``order``, ``table``, as its
  ``tests.py`` defines them with rapidfuzz and fuzzysearch; maths left out): the olmOCR-bench
  sample's own tests, and tests written from the truth of the other documents; run in the peers'
  interpreter, which has those two libraries;
* list recall (truth items found as list items), phantom tables (pipe or HTML tables beyond the
  truth's, on papers and public documents: manuals draw tables with macros the source reading
  cannot count), rotated-stamp leaks (Markdown lines that mix the arXiv margin stamp's words with
  body words), seconds per page;
* ICDAR 2013: cell adjacency relations (each non-empty cell with its nearest non-empty neighbour
  to the right and below, contents compared without whitespace), precision, recall and F1
  summed over the documents, the competition's measure with the table pages given.

The summary goes between the STRUCTURE-QUALITY markers of docs/performance.md; per-document
tables and each miss go to ``--report``; every system's output to ``DEVSET/out/SYSTEM/``.
Run with ``--peer NAME`` (stdlib-only imports at the top), this file is the helper the peers'
interpreter runs; with ``--check-tests`` it runs the unit tests there. The peers' venv:

    python3 -m venv /work/peers/venv && /work/peers/venv/bin/pip install pymupdf==2.0 \\
        pymupdf4llm==2.0 pymupdf-layout==2.0 'markitdown[pdf]' liteparse edgeparse camelot-py \\
        pdfplumber opencv-python-headless ghostscript rapidfuzz fuzzysearch
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import hashlib
import html
import itertools
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import unicodedata
import xml.etree.ElementTree as ET
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEVSET = Path("/work/corpus/devset")
TRUTH_DIR = ROOT / "bench" / "quality" / "devset" / "truth"
PEERS_PYTHON = Path("/work/peers/venv/bin/python")
REPORT = ROOT / "docs" / "structure-devset.md"
MARKER = "STRUCTURE-QUALITY"
MAX_CHARS = 2_000_000
SPLIT_SEED = "pdf-airlock-devset-236"  # the same seed as bench/corpora/devset_build.py
HELD_OUT_BUCKETS = 3
PEER_SECONDS = 3600
QUICK_RATIO_WORDS = 60_000
MIN_OTHER_WORDS = 3  # a line with a stamp token and this many other words has the stamp merged in
ITEM_WORDS = 8  # a truth list item is found when its first words are in a found item
AIRLOCK = "pdf-airlock"
MD_SYSTEMS = ("pdf-airlock", "pymupdf4llm", "liteparse", "edgeparse", "markitdown", "pdfium-text")
PEERS = ("pymupdf4llm", "liteparse", "edgeparse", "markitdown")
TABLE_SYSTEMS = ("pdf-airlock", "camelot-lattice", "camelot-stream", "pdfplumber")
TABLE_PEERS = ("camelot-lattice", "camelot-stream", "pdfplumber")
KINDS = ("paper", "manual", "public", "olmocr", "icdar")
UNIT_TYPES = ("present", "absent", "order", "table")
HEADING_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
ITEM_RE = re.compile(r"^(\s*)(?:[-*+\u2022]|\d{1,9}[.)])\s+(.*)$")
NUMBERING_RE = re.compile(  # a section number as printed, read before ``norm`` drops its dots
    r"^\s*(?:(?i:appendix|annex|chapter|part|section)\s+(?:[A-Z]|\d{1,3}|[IVXLC]{1,6})\b[.:]?"
    r"|\d{1,3}(?:\.\d{1,3})*\.?"  # 2, 2.7, 2.7.2, 2.7.2.
    r"|[A-Z](?:\.\d{1,3})+\.?"  # A.1, B.2.3: an appendix's sections
    r"|[IVXLC]{1,6}-[A-Z]\d{0,2}\.?"  # II-A, II-A1 (IEEEtran's references to subsections)
    r"|[IVXLC]{1,6}\.|[A-Z]\.|[A-Z](?=\s+[A-Z])"  # IV., B., and "A Proofs" (an appendix's letter)
    r"|\d{1,3}\)|\((?:\d{1,3}|[a-z]|[ivx]{1,5})\)|[a-z]\))"  # 1), (1), (a), (iv), a)
    r"\s+"
)
LEADIN_RE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*(.+?)\*\*|__(.+?)__)")
FUZZY_HEADING = 0.9  # difflib ratio at which a heading differs from the truth's by a symbol or two
NOISE_RE = re.compile(r"!\[[^\]]*\]\([^)]*\)|<[^>]{1,200}>|^\s*\|?[\s:|-]+\|[\s:|-]*$", re.M)


def norm(text: str) -> str:
    """Lower-case words only: markup, punctuation and spacing never decide a match."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower()))


def held_out(name: str) -> bool:
    digest = hashlib.sha256(f"{SPLIT_SEED}:{name}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % HELD_OUT_BUCKETS == 0


# -- the documents -----------------------------------------------------------------------------


@dataclass
class Doc:
    name: str
    path: Path
    kind: str
    truth: dict[str, Any]
    pages: int = 0
    table_pages: list[int] = field(default_factory=list)

    @property
    def split(self) -> str:
        return "held-out" if held_out(self.name) else "dev"


def page_count(path: Path) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(path.read_bytes())
    try:
        return len(document)
    finally:
        document.close()


def icdar_truth(xml_file: Path) -> list[dict[str, Any]]:
    """The ``-str.xml`` tables: [{page, cells: [(start_row, start_col, end_row, end_col, text)]}]."""
    tables = []
    for table in ET.parse(xml_file).getroot().iter("table"):
        for region in table.iter("region"):
            cells = []
            for cell in region.iter("cell"):
                span = [int(cell.get(key, "0")) for key in ("start-row", "start-col", "end-row", "end-col")]
                end_row = span[2] if cell.get("end-row") else span[0]
                end_col = span[3] if cell.get("end-col") else span[1]
                content = cell.find("content")
                text = content.text if content is not None and content.text else ""
                cells.append((span[0], span[1], end_row, end_col, text))
            tables.append({"page": int(region.get("page", "1")), "cells": cells})
    return tables


def load_docs(devset: Path, kinds: Iterable[str]) -> list[Doc]:
    docs: list[Doc] = []
    kinds = set(kinds)
    for truth_file in sorted(TRUTH_DIR.glob("*.json")):
        truth = json.loads(truth_file.read_text())
        path = devset / "docs" / truth["file"]
        if truth["kind"] in kinds and path.exists():
            docs.append(Doc(truth_file.stem, path, truth["kind"], truth))
    if "olmocr" in kinds and (devset / "olmocr" / "dataset.jsonl").exists():
        tests: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for line in (devset / "olmocr" / "dataset.jsonl").read_text().splitlines():
            if line.strip():
                test = json.loads(line)
                tests[test["pdf"]].append(test)
        for pdf_name, listed in sorted(tests.items()):
            name = "olmocr/" + pdf_name.removesuffix(".pdf")
            docs.append(Doc(name, devset / "olmocr" / "pdfs" / pdf_name, "olmocr", {"tests": listed}))
    if "icdar" in kinds:
        for xml_file in sorted((devset / "icdar").glob("*-str.xml")):
            pdf = xml_file.with_name(xml_file.name.removesuffix("-str.xml") + ".pdf")
            if pdf.exists():
                tables = icdar_truth(xml_file)
                doc = Doc("icdar/" + pdf.stem, pdf, "icdar", {"tables": tables})
                doc.table_pages = sorted({t["page"] for t in tables})
                docs.append(doc)
    for doc in docs:
        doc.pages = len(doc.table_pages) or page_count(doc.path)
    return docs


# -- Markdown as the scorer reads it -------------------------------------------------------------


@dataclass
class Parsed:
    headings: list[str] = field(default_factory=list)  # as printed (markup aside)
    levels: list[int] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    tables: int = 0
    lines: list[str] = field(default_factory=list)
    leadins: list[str] = field(default_factory=list)  # bold text opening a paragraph line, as printed


def parse(markdown: str) -> Parsed:
    """ATX headings (and HTML ``<h1>``..``<h6>``), list items with their continuation lines,
    pipe and HTML tables."""
    out, in_table, current = Parsed(), False, -1
    for match in re.finditer(r"<h([1-6])[^>]*>(.*?)</h\1>", markdown, re.S | re.I):
        out.headings.append(" ".join(html.unescape(re.sub(r"<[^>]+>", " ", match.group(2))).split()))
        out.levels.append(int(match.group(1)))
    out.tables += len(re.findall(r"<table\b", markdown, re.I))
    for raw in markdown.splitlines():
        line = raw.expandtabs(4)
        out.lines.append(line)
        is_row = line.strip().startswith("|") and line.strip().endswith("|")
        if is_row and not in_table:
            out.tables += 1
        in_table = is_row
        if heading := HEADING_RE.match(line):
            out.headings.append(unmarked(heading.group(2)))
            out.levels.append(len(heading.group(1)))
            current = -1
        elif item := ITEM_RE.match(line):
            out.items.append(norm(item.group(2)))
            current = len(out.items) - 1
        elif not line.strip() or is_row:
            current = -1
        if leadin := LEADIN_RE.match(line):
            out.leadins.append(unmarked(leadin.group(1) or leadin.group(2)))
        elif current >= 0:
            out.items[current] = f"{out.items[current]} {norm(line)}".strip()
    return out


def unmarked(text: str) -> str:
    """A heading's text as a reader sees it: emphasis and escapes aside, spacing collapsed."""
    return " ".join(re.sub(r"\\(?=[^\w\s])|\*\*|__|(?<!\w)[*_]|[*_](?!\w)", "", text).split())


def strip_numbering(text: str) -> str:
    """A heading as printed without its section number ("2.7.2 Results", "IV. RESULTS",
    "B. Data", "II-A1 Set-up", "(1) Cases", "Appendix A: Proofs")."""
    return NUMBERING_RE.sub("", text, count=1)


def heading_keys(text: str) -> list[str]:
    """The keys a heading as printed may match by: its words, then its words without its
    section number (a title may start with a capital letter of its own: "A Survey")."""
    keys = [norm(text)]
    if (bare := norm(strip_numbering(text))) and bare != keys[0]:
        keys.append(bare)
    return [key for key in keys if key]


def match_headings(truth: list[tuple[str, int]], parsed: Parsed, runin: Iterable[str] = ()) -> dict[int, int]:
    """Truth index -> found index of each matched heading. Found indexes count the Markdown's
    headings, then its bold lead-ins, which may match only the truth's run-in headings
    (``\\paragraph``): a run-in heading is found as a heading line or as a bold lead-in. An exact
    pass (numbering set aside on either side, a title wrapped over two heading lines joined), then
    a close one (``FUZZY_HEADING``) on the words without numbering."""
    runin_keys = {key for text in runin for key in heading_keys(text)}
    wanted: dict[str, list[int]] = defaultdict(list)
    for index, (text, _) in enumerate(truth):
        for key in heading_keys(text):
            wanted[key].append(index)
    count = len(parsed.headings)
    found = list(zip(parsed.headings, range(count), strict=True))
    joined = [(f"{a} {b}", i) for (a, i), (b, _) in itertools.pairwise(found)]
    leadins = [(text, count + i) for i, text in enumerate(parsed.leadins)]
    pairs: dict[int, int] = {}
    used: set[int] = set()
    for text, index in [*found, *joined, *leadins]:
        if index in used:
            continue
        for key in heading_keys(text):
            free = [t for t in wanted.get(key, []) if t not in pairs]
            if free and (index < count or key in runin_keys):
                pairs[free[0]] = index
                used.add(index)
                break
    for t, (want, _) in enumerate(truth):
        key = heading_keys(want)[-1] if heading_keys(want) else ""
        if t in pairs or not key:
            continue
        for text, index in [*found, *leadins]:
            if index in used or (index >= count and key not in runin_keys):
                continue
            got = heading_keys(text)
            if got and difflib.SequenceMatcher(None, key, got[-1]).ratio() >= FUZZY_HEADING:
                pairs[t] = index
                used.add(index)
                break
    return pairs


def level_steps(truth: list[tuple[str, int]], parsed: Parsed, pairs: dict[int, int]) -> tuple[int, int]:
    """(agreeing, all) steps between consecutive matched headings (deeper / same / shallower)."""
    ordered = [(truth[t][1], parsed.levels[f]) for t, f in sorted(pairs.items()) if f < len(parsed.levels)]
    steps = [
        ((b[0] > a[0]) - (b[0] < a[0]), (b[1] > a[1]) - (b[1] < a[1])) for a, b in itertools.pairwise(ordered)
    ]
    return sum(t == f for t, f in steps), len(steps)


def words_of(text: str) -> list[str]:
    """Words of a text for similarity: markup set aside, and bare numbers (page numbers, cited
    reference numbers, equation numbers) too, which TeX makes and the source never says."""
    return [w for w in norm(NOISE_RE.sub(" ", text)).split() if not w.isdigit()]


def similarity(truth_words: list[str], got_words: list[str]) -> float:
    matcher = difflib.SequenceMatcher(None, truth_words, got_words, autojunk=False)
    if len(truth_words) + len(got_words) > QUICK_RATIO_WORDS:
        return matcher.quick_ratio()
    return matcher.ratio()


def stamp_leaks(parsed: Parsed, stamp: str | None) -> int:
    """Lines holding the rotated stamp's own identifier (``03812v2`` of ``arXiv:1907.03812v2``)
    together with several words that are not the stamp's: its characters merged into body
    lines. A reference that cites another arXiv paper is no leak: only this stamp's identifier
    counts."""
    if not stamp:
        return 0
    stamp_words = set(norm(stamp).split())
    tokens = [
        t for t in norm(stamp).split() if len(t) >= 5 and any(c.isdigit() for c in t) and not t.isdigit()
    ]
    leaks = 0
    for line in parsed.lines:
        words = norm(line).split()
        if any(any(t in w for w in words) for t in tokens):
            leaks += sum(w not in stamp_words for w in words) >= MIN_OTHER_WORDS
    return leaks


# -- the unit tests (olmOCR-bench's definitions) ------------------------------------------------


OLM_REPLACEMENTS = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"', "\uff3f": "_",
    "\u2013": "-", "\u2014": "-", "\u2011": "-", "\u2012": "-", "\u2212": "-", "\u00b5": "\u03bc",
}  # fmt: skip


def olm_normalize(text: str) -> str:
    """olmOCR-bench's ``normalize_text``."""
    text = re.sub(r"<br/?>", " ", text)
    text = re.sub(r"\*\*(.*?)\*\*", r"\1", text)
    text = re.sub(r"__(.*?)__", r"\1", text)
    text = re.sub(r"</?b>", "", text)
    text = re.sub(r"</?i>", "", text)
    text = re.sub(r"(\*\*|__)(.*?)\1", r"\2", text)
    text = re.sub(r"(\*|_)(.*?)\1", r"\2", text)
    text = re.sub(r"\s+", " ", text)
    text = unicodedata.normalize("NFC", text)
    for fancy, plain in OLM_REPLACEMENTS.items():
        text = text.replace(fancy, plain)
    return text


def grids(content: str) -> list[list[list[str]]]:
    """Pipe tables and HTML tables as grids of cell texts (spans repeated over the cells they cover)."""
    found: list[list[list[str]]] = []
    block: list[str] = []
    # as olmOCR-bench's parse_markdown_tables: consecutive lines holding a pipe, two at least
    for line in [*content.splitlines(), ""]:
        if "|" in line:
            block.append(line)
            continue
        rows = []
        for raw in block if len(block) >= 2 else []:
            if raw.strip() and all(c in "- :|" for c in raw):
                continue
            cells = [cell.strip() for cell in raw.split("|")]
            cells = cells[1:] if cells and not cells[0] else cells
            cells = cells[:-1] if cells and not cells[-1] else cells
            if cells:
                rows.append(cells)
        if rows:
            found.append(rows)
        block = []
    for table in re.findall(r"<table\b.*?</table>", content, re.S | re.I):
        grid: list[list[str]] = []
        pending: dict[tuple[int, int], str] = {}
        for r, row in enumerate(re.findall(r"<tr\b.*?</tr>", table, re.S | re.I)):
            row_cells: list[str] = []
            c = 0
            for attrs, inner in re.findall(r"<t[hd]\b([^>]*)>(.*?)</t[hd]>", row, re.S | re.I):
                while (r, c) in pending:
                    row_cells.append(pending.pop((r, c)))
                    c += 1
                text = html.unescape(re.sub(r"<[^>]+>", " ", inner)).strip()
                colspan = int(span[1]) if (span := re.search(r'colspan="?(\d+)', attrs)) else 1
                rowspan = int(span[1]) if (span := re.search(r'rowspan="?(\d+)', attrs)) else 1
                for dc in range(colspan):
                    row_cells.append(text)
                    for dr in range(1, rowspan):
                        pending[(r + dr, c + dc)] = text
                c += colspan
            grid.append(row_cells)
        if grid:
            found.append(grid)
    return found


def table_test(test: dict[str, Any], content: str, fuzz: Any) -> bool:
    max_diffs = int(test.get("max_diffs", 0))

    def close(want: str, got: str) -> bool:
        want = olm_normalize(want)
        threshold = max(0.5, 1.0 - max_diffs / (len(want) or 1))
        return bool(fuzz.ratio(want, olm_normalize(got)) / 100.0 >= threshold)

    relations: dict[str, Callable[[list[list[str]], int, int], list[str]]] = {
        "up": lambda g, r, c: [g[r - 1][c]] if r > 0 and c < len(g[r - 1]) else [],
        "down": lambda g, r, c: [g[r + 1][c]] if r + 1 < len(g) and c < len(g[r + 1]) else [],
        "left": lambda g, r, c: [g[r][c - 1]] if c > 0 else [],
        "right": lambda g, r, c: [g[r][c + 1]] if c + 1 < len(g[r]) else [],
        "top_heading": lambda g, r, c: [g[i][c] for i in range(r) if c < len(g[i]) and g[i][c].strip()][:1],
        "left_heading": lambda g, r, c: [g[r][i] for i in range(c) if g[r][i].strip()][:1],
    }
    for grid in grids(content):
        for r, row in enumerate(grid):
            for c, cell in enumerate(row):
                if not close(test["cell"], cell):
                    continue
                if all(
                    any(close(test[key], other) for other in relation(grid, r, c))
                    for key, relation in relations.items()
                    if test.get(key)
                ):
                    return True
    return False


def check_tests(batch: list[dict[str, Any]]) -> list[bool]:
    """Runs in the peers' interpreter: each {test, markdown} -> passed, as olmOCR-bench does."""
    from fuzzysearch import find_near_matches  # type: ignore[import-not-found]
    from rapidfuzz import fuzz  # type: ignore[import-not-found]

    results = []
    for item in batch:
        test, content = item["test"], olm_normalize(item["markdown"])
        kind, max_diffs = test["type"], int(test.get("max_diffs", 0))
        if kind in ("present", "absent"):
            query = olm_normalize(test["text"])
            if not test.get("case_sensitive", True):
                query, content = query.lower(), content.lower()
            if test.get("first_n") and test.get("last_n"):
                content = content[: test["first_n"]] + content[-test["last_n"] :]
            elif test.get("first_n"):
                content = content[: test["first_n"]]
            elif test.get("last_n"):
                content = content[-test["last_n"] :]
            threshold = 1.0 - max_diffs / (len(query) or 1)
            found = fuzz.partial_ratio(query, content) / 100.0 >= threshold
            results.append(found if kind == "present" else not found)
        elif kind == "order":
            before = find_near_matches(olm_normalize(test["before"]), content, max_l_dist=max_diffs)
            after = find_near_matches(olm_normalize(test["after"]), content, max_l_dist=max_diffs)
            results.append(any(b.start < a.start for b in before for a in after))
        elif kind == "table":
            results.append(table_test(test, item["markdown"], fuzz))
        else:
            results.append(False)
    return results


def run_unit_tests(python: Path, batch: list[dict[str, Any]]) -> list[bool] | None:
    if not python.exists() or not batch:
        return None if batch else []
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(batch, handle)
    try:
        done = subprocess.run(
            [str(python), __file__, "--check-tests", handle.name], capture_output=True, text=True, check=False
        )
    finally:
        os.unlink(handle.name)
    if done.returncode:
        sys.stderr.write(f"unit tests failed to run:\n{done.stderr[-2000:]}")
        return None
    return list(json.loads(done.stdout))


# -- the systems ---------------------------------------------------------------------------------


def peer_converter(name: str) -> Callable[[str], str]:
    """Runs in the peers' interpreter: the converter of one peer, imported before timing."""
    if name == "pymupdf4llm":
        import pymupdf  # type: ignore[import-not-found]

        # pymupdf 2.0: importing pymupdf.layout before pymupdf4llm turns the layout model on
        import pymupdf.layout  # type: ignore[import-not-found]
        import pymupdf4llm  # type: ignore[import-not-found]

        assert callable(pymupdf._get_layout), "pymupdf4llm runs without its layout model"
        return lambda path: str(pymupdf4llm.to_markdown(path))
    if name == "liteparse":
        from liteparse import LiteParse  # type: ignore[import-not-found]

        parser = LiteParse(output_format="markdown", ocr_enabled=False, quiet=True)
        return lambda path: str(parser.parse(path).text)
    if name == "edgeparse":
        import edgeparse  # type: ignore[import-not-found]

        # without its raster OCR (it stalled on a text PDF here): text-layer engines side by side
        return lambda path: str(edgeparse.convert(path, format="markdown", raster_table_ocr=False))
    from markitdown import MarkItDown  # type: ignore[import-not-found]

    converter = MarkItDown(enable_plugins=False)
    return lambda path: str(converter.convert(path).text_content)


def table_converter(name: str) -> Callable[[str, list[int]], list[dict[str, Any]]]:
    """Runs in the peers' interpreter: tables of the given pages, [{page, rows}]."""
    if name == "pdfplumber":
        import pdfplumber

        def plumber(path: str, pages: list[int]) -> list[dict[str, Any]]:
            found = []
            with pdfplumber.open(path) as pdf:
                for number in pages:
                    for table in pdf.pages[number - 1].extract_tables():
                        found.append({"page": number, "rows": [[c or "" for c in row] for row in table]})
            return found

        return plumber
    import camelot  # type: ignore[import-not-found]

    flavor = name.removeprefix("camelot-")

    def read(path: str, pages: list[int]) -> list[dict[str, Any]]:
        tables = camelot.read_pdf(path, pages=",".join(map(str, pages)), flavor=flavor)
        return [{"page": int(t.page), "rows": t.df.values.tolist()} for t in tables]

    return read


def peer_main(name: str, warmup: str, files: list[str]) -> None:
    """One JSON line per file on stdout; whatever the peer prints goes to stderr. A file given
    as ``PATH::1,3`` is a table job for those pages."""
    stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        convert: Callable[[str], Any]
        if name in TABLE_PEERS:
            tables = table_converter(name)

            def convert_tables(spec: str) -> Any:
                path, _, pages = spec.partition("::")
                return tables(path, [int(p) for p in pages.split(",")])

            convert = convert_tables
        else:
            convert = peer_converter(name)
        with contextlib.suppress(Exception):
            convert(warmup)
        for spec in files:
            started = time.perf_counter()
            try:
                answer, error = convert(spec), None
            except Exception as exc:  # a peer failing on one document fails that document only
                answer, error = None, f"{type(exc).__name__}: {str(exc)[:200]}"
            seconds = time.perf_counter() - started
            stdout.write(
                json.dumps({"file": spec, "answer": answer, "seconds": seconds, "error": error}) + "\n"
            )
            stdout.flush()


Outputs = dict[str, tuple[Any, float] | None]


def run_peer(python: Path, name: str, warmup: str, specs: list[str]) -> Outputs:
    if not python.exists() or not specs:
        return dict.fromkeys(specs)
    argv = [str(python), __file__, "--peer", name, "--warmup", warmup, *specs]
    try:
        done = subprocess.run(
            argv, capture_output=True, text=True, check=False, cwd="/tmp", timeout=PEER_SECONDS
        )
        stdout = done.stdout
        if done.returncode:
            sys.stderr.write(f"{name} exited {done.returncode}:\n{done.stderr[-1500:]}\n")
    except subprocess.TimeoutExpired as exc:
        stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        sys.stderr.write(f"{name}: timed out after {PEER_SECONDS} s\n")
    got: Outputs = {}
    for line in stdout.splitlines():
        if line.startswith("{"):
            answer = json.loads(line)
            if answer["error"]:
                sys.stderr.write(f"{name} {answer['file']}: {answer['error']}\n")
            value = answer["answer"]
            if isinstance(value, str):  # a peer's text may hold lone surrogates: no file takes them
                value = value.encode("utf-8", "replace").decode("utf-8")
            got[answer["file"]] = None if value is None else (value, answer["seconds"])
    return {spec: got.get(spec) for spec in specs}


def run_floor(warmup: str, specs: list[str]) -> Outputs:
    import pypdfium2 as pdfium

    def text(path: str) -> str:
        document = pdfium.PdfDocument(Path(path).read_bytes())
        pages = [document[i].get_textpage().get_text_range() for i in range(len(document))]
        document.close()
        return "\n\n".join(page.replace("\r\n", "\n") for page in pages)

    text(warmup)
    got: Outputs = {}
    for spec in specs:
        started = time.perf_counter()
        answer = text(spec)
        got[spec] = (answer, time.perf_counter() - started)
    return got


async def run_airlock_async(pythons: dict[str, str], warmup: str, specs: list[str]) -> dict[str, Outputs]:
    """Each pdf-airlock server (system -> its interpreter) answers every spec; the servers take
    turns document by document (the order rotating), so a shared machine's load falls on all
    alike."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    paths = [spec.split("::")[0] for spec in [warmup, *specs]]
    roots = sorted({str(Path(path).parent) for path in paths})
    args = ["-m", "pdf_airlock.server", "serve", "--cache-mb", "0", "--log-level", "warning"]
    args += [a for root in roots for a in ("--root", root)]
    got: dict[str, Outputs] = {system: dict.fromkeys(specs) for system in pythons}
    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for system, interpreter in pythons.items():
            params = StdioServerParameters(command=interpreter, args=args, cwd=str(ROOT))
            clients[system] = await stack.enter_async_context(Client(params, mode="legacy"))
            await clients[system].call_tool("pdf_markdown", {"path": warmup, "max_chars": MAX_CHARS})
        order = list(clients)
        for turn, spec in enumerate(specs):
            path, _, pages = spec.partition("::")
            if pages:
                tool, arguments = "pdf_tables", {"path": path, "pages": pages, "max_tables": 1000}
            else:
                tool, arguments = "pdf_markdown", {"path": path, "max_chars": MAX_CHARS}
            for system in order[turn % len(order) :] + order[: turn % len(order)]:
                started = time.perf_counter()
                result = await clients[system].call_tool(tool, arguments)
                seconds = time.perf_counter() - started
                if result.is_error:
                    sys.stderr.write(f"{system} {spec}: {str(result.structured_content)[:300]}\n")
                    continue
                content = result.structured_content
                if pages:
                    tables = [{"page": t["page"], "rows": t["rows"]} for t in content["tables"]]
                    got[system][spec] = (tables, seconds)
                else:
                    got[system][spec] = (str(content["markdown"]), seconds)
    return got


def run_airlock(pythons: dict[str, str], warmup: str, specs: list[str]) -> dict[str, Outputs]:
    import anyio

    return anyio.run(run_airlock_async, pythons, warmup, specs)


# -- per-document scores -------------------------------------------------------------------------


@dataclass
class Score:
    counts: dict[str, float] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)
    units: list[tuple[str, str, bool]] = field(default_factory=list)  # (id, type, passed)


def unit_tests(doc: Doc) -> list[dict[str, Any]]:
    return [t for t in doc.truth.get("tests", []) if t["type"] in UNIT_TYPES]


def score_markdown(doc: Doc, markdown: str, seconds: float) -> Score:
    parsed = parse(markdown)
    truth = doc.truth
    score = Score({"pages": doc.pages, "seconds": seconds, "docs": 1})
    if "headings" in truth:
        want = [(text, int(level)) for text, level in truth["headings"]]
        pairs = match_headings(want, parsed, truth.get("runin", []))
        agree, steps = level_steps(want, parsed, pairs)
        leadins = sum(f >= len(parsed.headings) for f in pairs.values())
        score.counts |= {
            "h_truth": len(want), "h_found": len(parsed.headings) + leadins, "h_match": len(pairs),
            "lv_ok": agree, "lv_n": steps,
        }  # fmt: skip
        score.misses += [
            f"missed heading {t!r} (level {lv})" for i, (t, lv) in enumerate(want) if i not in pairs
        ]
        matched = set(pairs.values())
        score.misses += [f"extra heading {h!r}" for i, h in enumerate(parsed.headings) if i not in matched][
            :25
        ]
    if truth.get("source") == "latex" and doc.kind == "paper":
        score.counts["sim"] = similarity(words_of(" ".join(truth["body"])), words_of(markdown))
        score.counts["sim_n"] = 1
    if truth.get("list_items"):
        found = 0
        for text, _ in truth["list_items"]:
            head = " ".join(norm(text).split()[:ITEM_WORDS])
            found += any(head in item for item in parsed.items)
        score.counts |= {"l_truth": len(truth["list_items"]), "l_match": found}
    if "tables" in truth and doc.kind in ("paper", "public"):  # manuals draw tables with macros too
        score.counts["phantom"] = max(0, parsed.tables - len(truth["tables"]))
    if truth.get("stamp"):
        score.counts |= {"stamp_docs": 1, "stamp_leak_lines": stamp_leaks(parsed, truth["stamp"])}
        score.counts["stamp_leak_docs"] = float(score.counts["stamp_leak_lines"] > 0)
    return score


def relations(grid_cells: list[tuple[int, int, int, int, str]]) -> set[tuple[str, str, str]]:
    """Adjacency relations of a table: each non-empty cell with its nearest non-empty neighbour to
    the right and below (the ICDAR 2013 competition's measure), contents without whitespace."""
    at: dict[tuple[int, int], int] = {}
    for index, (r0, c0, r1, c1, _) in enumerate(grid_cells):
        for r in range(r0, r1 + 1):
            for c in range(c0, c1 + 1):
                at[(r, c)] = index
    text = ["".join(unicodedata.normalize("NFKC", cell[4]).split()).lower() for cell in grid_cells]
    found: set[tuple[str, str, str]] = set()
    max_row = max((cell[2] for cell in grid_cells), default=0)
    max_col = max((cell[3] for cell in grid_cells), default=0)
    for index, (r0, c0, r1, c1, _) in enumerate(grid_cells):
        if not text[index]:
            continue
        for r in range(r0, r1 + 1):
            for c in range(c1 + 1, max_col + 1):
                other = at.get((r, c))
                if other is not None and other != index and text[other]:
                    found.add((text[index], text[other], "h"))
                    break
        for c in range(c0, c1 + 1):
            for r in range(r1 + 1, max_row + 1):
                other = at.get((r, c))
                if other is not None and other != index and text[other]:
                    found.add((text[index], text[other], "v"))
                    break
    return found


def grid_to_cells(rows: list[list[Any]]) -> list[tuple[int, int, int, int, str]]:
    return [(r, c, r, c, str(cell or "")) for r, row in enumerate(rows) for c, cell in enumerate(row)]


def score_tables(doc: Doc, tables: list[dict[str, Any]], seconds: float) -> Score:
    truth: set[tuple[int, str, str, str]] = set()
    for table in doc.truth["tables"]:
        truth |= {(table["page"], *rel) for rel in relations(table["cells"])}
    got: set[tuple[int, str, str, str]] = set()
    for table in tables:
        got |= {(int(table["page"]), *rel) for rel in relations(grid_to_cells(table["rows"]))}
    return Score({"pages": doc.pages, "seconds": seconds, "docs": 1, "rel_truth": len(truth),
                  "rel_found": len(got), "rel_match": len(truth & got)})  # fmt: skip


# -- the run ---------------------------------------------------------------------------------


def saved_outputs(out: Path, system: str, docs: list[Doc], specs: list[str]) -> Outputs:
    """A system's answers as a previous run saved them (``--rescore``)."""
    times = (
        json.loads((out / system / "seconds.json").read_text())
        if (out / system / "seconds.json").exists()
        else {}
    )
    got: Outputs = {}
    for doc, spec in zip(docs, specs, strict=True):
        safe = doc.name.replace("/", "_")
        answer = out / system / (f"{safe}.json" if doc.kind == "icdar" else f"{safe}.md")
        if doc.name in times:
            text = answer.read_text() if answer.exists() else None
            value = json.loads(text) if text is not None and doc.kind == "icdar" else text
            got[spec] = None if times[doc.name] is None or value is None else (value, times[doc.name])
    return got


def run_systems(
    docs: list[Doc],
    systems: list[str],
    python: Path,
    out: Path,
    rescore: bool = False,
    baselines: dict[str, str] | None = None,
) -> dict[str, dict[str, Score | None]]:
    md_docs = [d for d in docs if d.kind != "icdar"]
    table_docs = [d for d in docs if d.kind == "icdar"]
    md_specs = [str(d.path) for d in md_docs]
    table_specs = [f"{d.path}::{','.join(map(str, d.table_pages))}" for d in table_docs]
    warmup = str((md_docs or table_docs)[0].path)
    results: dict[str, dict[str, Score | None]] = {}
    pythons = {s: sys.executable for s in systems if s == AIRLOCK}
    pythons |= {f"{AIRLOCK}@{name}": interpreter for name, interpreter in (baselines or {}).items()}
    systems = [s for s in systems if s != AIRLOCK] if pythons else systems
    systems = [*pythons, *systems]
    airlocks = run_airlock(pythons, warmup, md_specs + table_specs) if pythons and not rescore else {}
    for system in systems:
        outputs: Outputs = {}
        if rescore:
            outputs = saved_outputs(out, system, [*md_docs, *table_docs], md_specs + table_specs)
        elif system in airlocks:
            outputs = airlocks[system]
        elif system in PEERS:
            outputs = run_peer(python, system, warmup, md_specs)
        elif system in TABLE_PEERS:
            outputs = run_peer(
                python, system, f"{table_docs[0].path}::1" if table_docs else warmup, table_specs
            )
        elif system == "pdfium-text":
            outputs = run_floor(warmup, md_specs)
        scores: dict[str, Score | None] = {}
        (out / system).mkdir(parents=True, exist_ok=True)
        seconds: dict[str, float | None] = {}
        for doc, spec in [*zip(md_docs, md_specs, strict=True), *zip(table_docs, table_specs, strict=True)]:
            if spec not in outputs:
                continue
            answer = outputs[spec]
            safe = doc.name.replace("/", "_")
            seconds[doc.name] = None if answer is None else answer[1]
            if answer is None:
                scores[doc.name] = None
                continue
            if doc.kind == "icdar":
                (out / system / f"{safe}.json").write_text(json.dumps(answer[0]))
                scores[doc.name] = score_tables(doc, answer[0], answer[1])
            else:
                # a peer may answer with a lone surrogate: written replaced, scored as answered
                (out / system / f"{safe}.md").write_text(answer[0], errors="replace")
                scores[doc.name] = score_markdown(doc, answer[0], answer[1])
        if not rescore:
            saved = out / system / "seconds.json"
            previous = json.loads(saved.read_text()) if saved.exists() else {}
            saved.write_text(json.dumps(previous | seconds, indent=0))
        units = [
            (doc.name, test)
            for doc, spec in zip(md_docs, md_specs, strict=True)
            if scores.get(doc.name) is not None
            for test in unit_tests(doc)
        ]
        batch = [
            {"test": test, "markdown": outputs[str(doc.path)][0]}  # type: ignore[index]
            for doc in md_docs
            if scores.get(doc.name) is not None
            for test in unit_tests(doc)
        ]
        passed = run_unit_tests(python, batch)
        if passed is not None:
            for (name, test), ok in zip(units, passed, strict=True):
                doc_score = scores[name]
                assert doc_score is not None
                doc_score.units.append((test["id"], test["type"], ok))
        results[system] = scores
        print(
            f"{system}: {sum(s is not None for s in scores.values())} of {len(scores)} documents",
            file=sys.stderr,
        )
    return results


# -- the report ------------------------------------------------------------------------------


def is_md(system: str) -> bool:
    return system in MD_SYSTEMS or system.startswith(f"{AIRLOCK}@")


def is_table(system: str) -> bool:
    return system in TABLE_SYSTEMS or system.startswith(f"{AIRLOCK}@")


def total(scores: Iterable[Score], key: str) -> float:
    return sum(s.counts.get(key, 0.0) for s in scores)


def fmt_ratio(a: float, b: float, digits: int = 2) -> str:
    return f"{a / b:.{digits}f}" if b else "-"


def prf(match: float, found: float, truth: float) -> str:
    if not truth and not found:
        return "-"
    p = match / found if found else 0.0
    r = match / truth if truth else 0.0
    return f"{p:.2f} / {r:.2f} / {2 * p * r / (p + r) if p + r else 0.0:.2f}"


def unit_rate(scores: Iterable[Score], kinds: tuple[str, ...] = UNIT_TYPES) -> str:
    units = [ok for s in scores for _, kind, ok in s.units if kind in kinds]
    return f"{sum(units) / len(units):.0%} of {len(units)}" if units else "-"


def summary_row(system: str, scores: dict[str, Score | None], docs: list[Doc]) -> str:
    by_kind: dict[str, list[Score]] = defaultdict(list)
    failed = 0
    for doc in docs:
        if doc.kind == "icdar" or doc.name not in scores:
            continue
        score = scores[doc.name]
        failed += score is None
        if score is not None:
            by_kind[doc.kind].append(score)
    if not any(by_kind.values()):
        return f"| {system} | not run |" + " |" * 10
    papers_public = by_kind["paper"] + by_kind["public"]
    headings = prf(
        total(papers_public, "h_match"), total(papers_public, "h_found"), total(papers_public, "h_truth")
    )
    manuals = by_kind["manual"]
    everything = [s for kind in by_kind.values() for s in kind]
    system += f" ({failed} failed)" if failed else ""
    return (
        f"| {system} | {headings} "
        f"| {fmt_ratio(total(papers_public, 'lv_ok'), total(papers_public, 'lv_n'))} "
        f"| {fmt_ratio(total(manuals, 'h_match'), total(manuals, 'h_truth'))} "
        f"| {fmt_ratio(total(by_kind['paper'], 'sim'), total(by_kind['paper'], 'sim_n'), 3)} "
        f"| {unit_rate(by_kind['olmocr'])} | {unit_rate(by_kind['paper'] + by_kind['public'] + manuals)} "
        f"| {unit_rate(everything, ('order',))} "
        f"| {fmt_ratio(total(everything, 'l_match'), total(everything, 'l_truth'))} "
        f"| {total(everything, 'phantom'):.0f} "
        f"| {total(everything, 'stamp_leak_docs'):.0f} of {total(everything, 'stamp_docs'):.0f} "
        f"| {1000 * total(everything, 'seconds') / max(total(everything, 'pages'), 1):.1f} |"
    )


def table_row(system: str, scores: dict[str, Score | None], docs: list[Doc]) -> str:
    got = [scores[d.name] for d in docs if d.kind == "icdar" and d.name in scores]
    done = [s for s in got if s is not None]
    if not done:
        return f"| {system} | not run | |"
    failed = len(got) - len(done)
    name = system + (f" ({failed} failed)" if failed else "")
    return (
        f"| {name} | {prf(total(done, 'rel_match'), total(done, 'rel_found'), total(done, 'rel_truth'))} "
        f"| {1000 * total(done, 'seconds') / max(total(done, 'pages'), 1):.1f} |"
    )


SUMMARY_HEAD = [
    "| system | headings P / R / F1 (papers, public) | levels | manual headings R | text similarity "
    "(papers) | olmOCR sample unit tests | dev-set unit tests | order tests | list recall "
    "| phantom tables | stamp merged (docs) | ms per page |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
]
TABLE_HEAD = ["| system | adjacency P / R / F1 | ms per table page |", "|---|---|---|"]


def summary(
    results: dict[str, dict[str, Score | None]], docs: list[Doc], argv: list[str], report: Path, python: Path
) -> str:
    command = " ".join(["python -m bench.quality.structure_score", *argv])
    machine = (
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f} at the end"
    )
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for doc in docs:
        counts[doc.kind][doc.split == "held-out"] += 1
    kinds = ", ".join(f"{kind} {dev} + {held}" for kind, (dev, held) in sorted(counts.items()))
    shown = report.relative_to(ROOT) if report.is_relative_to(ROOT) else report
    lines = [
        "## Structure on real documents (`pdf_markdown`, `pdf_tables`)", "",
        f"Generated by `{command}` on {machine}; peers: {peer_versions(python)}.",
        "Dev set (`bench/corpora/devset_build.py`, truth in `bench/quality/devset/truth/`): "
        f"documents dev + held-out: {kinds}. Per document: `{shown}`. The measures are described "
        "in `bench/quality/structure_score.py`; pdf-airlock over MCP stdio, sandboxed, cache off; "
        "the peers in their own processes, each after a warm-up document; time per page includes each "
        "system's own start of a document, not its start-up.",
    ]  # fmt: skip
    for split in ("dev", "held-out"):
        part = [d for d in docs if d.split == split]
        lines += ["", f"**{split}**", "", *SUMMARY_HEAD]
        lines += [summary_row(system, results[system], part) for system in results if is_md(system)]
        if any(d.kind == "icdar" for d in part):
            lines += ["", f"ICDAR 2013 tables, {split} (table pages given):", "", *TABLE_HEAD]
            lines += [table_row(system, results[system], part) for system in results if is_table(system)]
    return "\n".join(lines)


def per_document(results: dict[str, dict[str, Score | None]], docs: list[Doc]) -> str:
    """Per-document figures and misses of the dev documents only: the held-out ones are seen in
    the summary's sums alone, so that work on the engine never aims at them."""
    docs = [doc for doc in docs if doc.split == "dev"]
    lines = [
        "# Structure dev set: per document",
        "",
        "Written by `bench/quality/structure_score.py` (figures of its last run; the sums, held-out ones "
        "included, are in docs/performance.md). Dev documents only: the held-out documents are "
        "never shown one by one.",
        "",
    ]
    systems = [s for s in results if is_md(s)]
    lines += [
        "| document | kind | split | pages | " + " | ".join(systems) + " |",
        "|---|---|---|---|" + "---|" * len(systems),
    ]
    for doc in docs:
        if doc.kind == "icdar":
            continue
        cells = []
        for system in systems:
            score = results[system].get(doc.name)
            if score is None:
                cells.append("failed" if doc.name in results[system] else "-")
                continue
            c = score.counts
            part = []
            if "h_truth" in c:
                part.append(f"H {prf(c['h_match'], c['h_found'], c['h_truth']).split(' / ')[-1]}")
            if "sim" in c:
                part.append(f"T {c['sim']:.2f}")
            if score.units:
                part.append(f"U {sum(ok for *_, ok in score.units)}/{len(score.units)}")
            if c.get("phantom"):
                part.append(f"ph {c['phantom']:.0f}")
            if c.get("stamp_leak_lines"):
                part.append(f"stamp {c['stamp_leak_lines']:.0f}")
            cells.append(", ".join(part))
        lines.append(f"| {doc.name} | {doc.kind} | {doc.split} | {doc.pages} | " + " | ".join(cells) + " |")
    lines += ["", "H: heading F1; T: text similarity; U: unit tests passed; ph: phantom tables; "
              "stamp: lines with the margin stamp merged in.", ""]  # fmt: skip
    table_systems = [s for s in results if is_table(s)]
    if any(d.kind == "icdar" for d in docs) and table_systems:
        lines += ["## ICDAR 2013 (adjacency F1 per document)", ""]
        lines += [
            "| document | split | " + " | ".join(table_systems) + " |",
            "|---|---|" + "---|" * len(table_systems),
        ]
        for doc in docs:
            if doc.kind != "icdar":
                continue
            cells = []
            for system in table_systems:
                score = results[system].get(doc.name)
                cells.append(
                    "-"
                    if score is None
                    else prf(
                        score.counts["rel_match"], score.counts["rel_found"], score.counts["rel_truth"]
                    ).split(" / ")[-1]
                )
            lines.append(f"| {doc.name} | {doc.split} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Misses of pdf-airlock", ""]
    for doc in docs:
        score = results.get("pdf-airlock", {}).get(doc.name)
        if score is None:
            continue
        failed_units = [f"{kind} {test_id}" for test_id, kind, ok in score.units if not ok]
        if score.misses or failed_units:
            lines.append(
                f"- **{doc.name}** ({doc.split}): " + "; ".join(score.misses[:30] + failed_units[:20])
            )
    return "\n".join(lines) + "\n"


def peer_versions(python: Path) -> str:
    if not python.exists():
        return "not installed"
    names = ("pymupdf", "pymupdf4llm", "liteparse", "edgeparse", "markitdown", "camelot-py", "pdfplumber")
    code = (
        "import importlib.metadata as m, sys\n"
        "for n in sys.argv[1:]:\n    try: print(n, m.version(n))\n    except Exception: pass"
    )
    done = subprocess.run([str(python), "-c", code, *names], capture_output=True, text=True, check=False)
    return ", ".join(done.stdout.split("\n")[:-1])


def write_block(doc: Path, text: str) -> None:
    """Our block in ``doc`` by ``bench.report.write_block`` (a first run appends its markers)."""
    from bench.report import write_block as write

    write(doc, MARKER, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devset", type=Path, default=DEVSET)
    parser.add_argument("--peers-python", type=Path, default=PEERS_PYTHON)
    parser.add_argument("--systems", default=",".join(MD_SYSTEMS + TABLE_PEERS))
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--split", choices=("all", "dev", "held-out"), default="all")
    parser.add_argument("--only", nargs="*", help="documents by name (prefix match)")
    parser.add_argument("--report", type=Path, default=REPORT)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/ alone")
    parser.add_argument("--rescore", action="store_true", help="score the answers a previous run saved")
    parser.add_argument(
        "--baseline",
        action="append",
        default=[],
        metavar="NAME=PYTHON",
        help="another pdf-airlock (an interpreter that imports another checkout), run as "
        "pdf-airlock@NAME, taking turns with this one document by document",
    )
    parser.add_argument("--peer", help=argparse.SUPPRESS)
    parser.add_argument("--warmup", help=argparse.SUPPRESS)
    parser.add_argument("--check-tests", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        peer_main(args.peer, args.warmup, args.files)
        return
    if args.check_tests:
        print(json.dumps(check_tests(json.loads(args.check_tests.read_text()))))
        return
    docs = load_docs(args.devset, args.kinds.split(","))
    if args.split != "all":
        docs = [d for d in docs if d.split == args.split]
    if args.only:
        docs = [d for d in docs if any(d.name.startswith(prefix) for prefix in args.only)]
    if not docs:
        raise SystemExit(f"no documents under {args.devset}: run python -m bench.corpora.devset_build first")
    systems = [s for s in args.systems.split(",") if s]
    baselines = dict(item.split("=", 1) for item in args.baseline)
    results = run_systems(docs, systems, args.peers_python, args.devset / "out", args.rescore, baselines)
    text = summary(results, docs, sys.argv[1:], args.report, args.peers_python)
    print(text)
    if not args.no_write:
        args.report.write_text(per_document(results, docs))
        write_block(ROOT / "docs" / "performance.md", text)
    else:
        print(per_document(results, docs))


if __name__ == "__main__":
    main()
