"""Quality of ``pdf_markdown`` against documents with known structure, beside its peers, in one run.

    python -m bench.quality.markdown_score [--peers-python /tmp/peers/bin/python] [--corpus DIR]
                                   [--tracemonkey PATH] [--no-write]

Systems: pdf-airlock ``pdf_markdown`` over MCP stdio (the real server, sandboxed, cache off), and
beside it pymupdf4llm 2.0 with its layout model and markitdown, run by ``--peers-python`` (a venv
of their own, never this project's dependencies: pymupdf4llm is AGPL), and flat PDFium text as the
floor. Each converts a warm-up document first; timings exclude start-up and imports. The scores
(``score``) against the truth of ``bench/corpora/markdown_corpus.py`` (built when missing), and heading
recall on pdf.js's ``tracemonkey.pdf``, go between the MARKDOWN-QUALITY markers of
docs/performance.md; each system's Markdown goes to ``CORPUS/out/``. Run as ``--peer NAME
--warmup PDF FILE...`` (stdlib-only imports at the top), this file is the helper the peers'
interpreter runs: one JSON line {file, markdown, seconds} per file. The peers' venv:

    python3 -m venv /tmp/peers && /tmp/peers/bin/pip install pymupdf==2.0 pymupdf4llm==2.0 \
        pymupdf-layout==2.0 'markitdown[pdf]'
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import itertools
import json
import os
import platform
import re
import subprocess
import sys
import time
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "bench" / ".corpus" / "markdown"
TRACEMONKEY = Path("/work/corpus/pdfjs/tracemonkey.pdf")
TRACEMONKEY_PAGES = 14
PEERS_PYTHON = Path("/tmp/peers/bin/python")
MARKER = "MARKDOWN-QUALITY"
MAX_CHARS = 2_000_000
QUICK_RATIO_WORDS = 50_000  # beyond this many words, difflib's quick_ratio stands in for ratio()
PEERS = ("pymupdf4llm", "markitdown")
SYSTEMS = ("pdf-airlock", "pymupdf4llm", "markitdown", "pdfium-text")
TRACEMONKEY_HEADINGS = [
    ("Trace-based Just-in-Time Type Specialization for Dynamic Languages", 1),
    ("Abstract", 2), ("1. Introduction", 2), ("2. Overview: Example Tracing Run", 2),
    ("3. Trace Trees", 2), ("3.1 Traces", 3), ("3.2 Trace Trees", 3), ("3.3 Blacklisting", 3),
    ("4. Nested Trace Tree Formation", 2), ("4.1 Nesting Algorithm", 3),
    ("4.2 Blacklisting with Nesting", 3), ("5. Trace Tree Optimization", 2),
    ("5.1 Optimizations", 3), ("5.2 Register Allocation", 3), ("6. Implementation", 2),
    ("6.1 Calling Compiled Traces", 3), ("6.2 Trace Stitching", 3), ("6.3 Trace Recording", 3),
    ("6.4 Preemption", 3), ("6.5 Calling External Functions", 3), ("6.6 Correctness", 3),
    ("7. Evaluation", 2), ("8. Related Work", 2), ("9. Conclusions", 2), ("10. Future Work", 2),
    ("Acknowledgments", 2), ("References", 2),
]  # fmt: skip
HEADING_RE = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
ITEM_RE = re.compile(r"^(\s*)(?:[-*+]|\d{1,9}[.)])\s+(.*)$")
TITLE = "## Markdown quality (`pdf_markdown`)"
ABOUT = """Corpus: `bench/corpora/markdown_corpus.py` (three reports of 5-8 pages, three two-column papers of
4-6 pages, each page with a running header and a page-number footer). Headings P / R / F1 and levels
summed over the corpus; order: mean text-order similarity of the reports / the papers; seconds per
page after a warm-up document (pdf-airlock: one `tools/call` over MCP stdio, sandboxed, cache off;
the peers in-process with their defaults)."""
HEAD = [
    "| system | headings P / R / F1 | levels exact | levels relative | list recall | nesting | table cells "
    "| header / page-number leaks (pages) | order reports / papers | s per page | tracemonkey headings |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
]
NOISE_RE = re.compile(r"!\[[^\]]*\]\([^)]*\)|^.*intentionally omitted.*$|^\s*\|?[\s:|-]+\|[\s:|-]*$", re.M)


# -- Markdown as the scorer reads it ------------------------------------------------------------


def norm(text: str) -> str:
    """Lower-case words only: markup, punctuation and spacing never decide a match."""
    return " ".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).lower()))


@dataclass
class Parsed:
    headings: list[tuple[str, int]] = field(default_factory=list)
    items: list[tuple[str, int]] = field(default_factory=list)
    tables: list[list[list[str]]] = field(default_factory=list)


def table_cells(line: str) -> list[str] | None:
    """The cells of a pipe-table row, None for the delimiter row."""
    inner = line.strip().strip("|")
    if re.fullmatch(r"[\s:|-]+", inner):
        return None
    return [norm(cell) for cell in re.split(r"(?<!\\)\|", inner)]


def parse(markdown: str) -> Parsed:
    """Headings (ATX), list items with their lazy continuation lines and nesting depth (from the
    indentation stack), and pipe tables."""
    out, indents, current, table = Parsed(), list[int](), -1, list[list[str]]()
    for raw in markdown.splitlines():
        line = raw.expandtabs(4)
        if not line.strip().startswith("|") and table:
            out.tables.append(table)
            table = []
        if heading := HEADING_RE.match(line):
            out.headings.append((norm(heading.group(2)), len(heading.group(1))))
            indents, current = [], -1
        elif line.strip().startswith("|"):
            cells = table_cells(line)
            table += [cells] if cells is not None else []
            indents, current = [], -1
        elif item := ITEM_RE.match(line):
            indent = len(item.group(1))
            while indents and indents[-1] >= indent:
                indents.pop()
            out.items.append((norm(item.group(2)), len(indents)))
            indents.append(indent)
            current = len(out.items) - 1
        elif not line.strip():
            current = -1
        elif current >= 0:
            text, depth = out.items[current]
            out.items[current] = (f"{text} {norm(line)}".strip(), depth)
        elif not line.startswith(" "):
            indents = []
    if table:
        out.tables.append(table)
    return out


# -- scores -----------------------------------------------------------------------------------


def match_headings(truth: list[tuple[str, int]], found: list[tuple[str, int]]) -> dict[int, tuple[int, int]]:
    """Truth index -> (truth level, found level) of each matched heading; a found heading may be
    two consecutive heading lines (a title wrapped over two lines)."""
    wanted = {norm(text): index for index, (text, _) in reversed(list(enumerate(truth)))}
    pairs: dict[int, tuple[int, int]] = {}
    joined = [(f"{a} {b}", la) for (a, la), (b, _) in itertools.pairwise(found)]
    for text, level in [*found, *joined]:
        index = wanted.get(text)
        if index is not None and index not in pairs:
            pairs[index] = (truth[index][1], level)
    return pairs


def relative(pairs: list[tuple[int, int]]) -> float | None:
    """Share of consecutive matched headings whose step (deeper/same/shallower) is the truth's."""
    steps = [
        ((b[0] > a[0]) - (b[0] < a[0]), (b[1] > a[1]) - (b[1] < a[1])) for a, b in itertools.pairwise(pairs)
    ]
    agree = sum(truth == found for truth, found in steps)
    return agree / len(steps) if steps else None


def match_items(truth: list[tuple[str, int]], found: list[tuple[str, int]]) -> list[tuple[int, int]]:
    """(truth depth, found depth) of each truth item contained in a found list item."""
    used: set[int] = set()
    pairs = []
    for text, depth in truth:
        wanted = norm(text)
        hit = next((i for i, (f, _) in enumerate(found) if i not in used and wanted in f), None)
        if hit is not None:
            used.add(hit)
            pairs.append((depth, found[hit][1]))
    return pairs


def table_hits(truth: list[list[str]], tables: list[list[list[str]]]) -> int:
    """Cells of ``truth`` found at their row and column in the best-matching pipe table."""
    want = [[norm(cell) for cell in row] for row in truth]

    def hits(table: list[list[str]]) -> int:
        return sum(
            r < len(table) and c < len(table[r]) and table[r][c] == cell
            for r, row in enumerate(want)
            for c, cell in enumerate(row)
        )

    return max((hits(table) for table in tables), default=0)


def page_number_leaks(markdown: str, footers: list[str]) -> int:
    """Pages whose footer ("Page 3 of 7" anywhere, a bare "3" as a line of its own) is kept."""
    text = norm(markdown)
    lines = {norm(line) for line in markdown.splitlines()}
    return sum((norm(f) in lines) if f.isdigit() else (f" {norm(f)} " in f" {text} ") for f in footers)


def order_similarity(truth_body: list[str], markdown: str) -> float:
    want = norm(" ".join(truth_body)).split()
    got = norm(NOISE_RE.sub(" ", markdown)).split()
    matcher = difflib.SequenceMatcher(None, want, got, autojunk=False)
    return matcher.quick_ratio() if len(want) + len(got) > QUICK_RATIO_WORDS else matcher.ratio()


@dataclass
class Score:
    counts: dict[str, float] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)


def score(truth: dict[str, Any], markdown: str, seconds: float) -> Score:
    """Heading P/R, exact and relative levels; list recall and nesting; table cells at their row
    and column (pipe tables only); running header and page-number leaks; body word order."""
    found = parse(markdown)
    want = [(t, int(level)) for t, level in truth["headings"]]
    matched = match_headings(want, found.headings)
    pairs = [matched[index] for index in sorted(matched)]
    items = match_items([(t, int(d)) for t, d in truth["list_items"]], found.items)
    rel = relative(pairs)
    result = Score(
        {
            "h_truth": len(want), "h_found": len(found.headings), "h_match": len(pairs),
            "h_level": sum(a == b for a, b in pairs), "rel_n": 0 if rel is None else len(pairs) - 1,
            "rel_ok": 0 if rel is None else rel * (len(pairs) - 1),
            "l_truth": len(truth["list_items"]), "l_match": len(items),
            "l_depth": sum(a == b for a, b in items),
            "t_truth": sum(len(row) for table in truth["tables"] for row in table),
            "t_match": sum(table_hits(table, found.tables) for table in truth["tables"]),
            "pages": truth["pages"], "seconds": seconds,
            "hdr_leak": min(f" {norm(markdown)} ".count(f" {norm(truth['header'])} "), truth["pages"]),
            "num_leak": page_number_leaks(markdown, truth["footers"]),
            "order": order_similarity(truth["body"], markdown),
        }
    )  # fmt: skip
    result.misses = [f"heading {t!r} (level {lv})" for i, (t, lv) in enumerate(want) if i not in matched]
    result.misses += [f"level {b} for a level-{a} heading" for a, b in pairs if a != b]
    return result


# -- the systems --------------------------------------------------------------------------------


def peer_converter(name: str) -> Callable[[str], str]:
    """Runs in the peers' interpreter: the converter of one peer, imported before timing."""
    if name == "pymupdf4llm":
        import pymupdf  # type: ignore[import-not-found]

        # pymupdf 2.0: importing pymupdf.layout before pymupdf4llm turns the layout model on
        import pymupdf.layout  # type: ignore[import-not-found]
        import pymupdf4llm  # type: ignore[import-not-found]

        assert callable(pymupdf._get_layout), "pymupdf4llm runs without its layout model"
        return lambda path: str(pymupdf4llm.to_markdown(path))
    from markitdown import MarkItDown  # type: ignore[import-not-found]

    converter = MarkItDown(enable_plugins=False)
    return lambda path: str(converter.convert(path).text_content)


def peer_main(name: str, warmup: str, files: list[str]) -> None:
    """One JSON line per file on stdout; whatever the peer prints goes to stderr."""
    stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        convert = peer_converter(name)
        convert(warmup)
        for path in files:
            started = time.perf_counter()
            markdown = convert(path)
            seconds = time.perf_counter() - started
            stdout.write(json.dumps({"file": path, "markdown": markdown, "seconds": seconds}) + "\n")
            stdout.flush()


Outputs = dict[str, tuple[str, float] | None]


def run_peer(python: Path, name: str, warmup: Path, files: list[Path]) -> Outputs:
    if not python.exists():
        return dict.fromkeys(map(str, files))
    argv = [str(python), __file__, "--peer", name, "--warmup", str(warmup), *map(str, files)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, cwd="/tmp")
    if done.returncode:
        sys.stderr.write(f"{name} failed:\n{done.stderr[-2000:]}")
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    got: Outputs = {a["file"]: (a["markdown"], a["seconds"]) for a in answers}
    return {str(path): got.get(str(path)) for path in files}


def run_floor(warmup: Path, files: list[Path]) -> Outputs:
    import pypdfium2 as pdfium

    def text(path: Path) -> str:
        document = pdfium.PdfDocument(path.read_bytes())
        pages = [document[i].get_textpage().get_text_range() for i in range(len(document))]
        document.close()
        return "\n\n".join(page.replace("\r\n", "\n") for page in pages)

    text(warmup)
    got: Outputs = {}
    for path in files:
        started = time.perf_counter()
        markdown = text(path)
        got[str(path)] = (markdown, time.perf_counter() - started)
    return got


async def run_airlock_async(warmup: Path, files: list[Path]) -> Outputs:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    roots = sorted({str(path.parent) for path in [warmup, *files]})
    args = ["-m", "pdf_airlock.server", "serve", "--cache-mb", "0", "--log-level", "warning"]
    args += [a for root in roots for a in ("--root", root)]
    got: Outputs = dict.fromkeys(map(str, files))
    async with Client(
        StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT)), mode="legacy"
    ) as client:
        if "pdf_markdown" not in {tool.name for tool in (await client.list_tools()).tools}:
            return got
        await client.call_tool("pdf_markdown", {"path": str(warmup), "max_chars": MAX_CHARS})
        for path in files:
            started = time.perf_counter()
            result = await client.call_tool("pdf_markdown", {"path": str(path), "max_chars": MAX_CHARS})
            seconds = time.perf_counter() - started
            if not result.is_error:
                got[str(path)] = (str(result.structured_content["markdown"]), seconds)
    return got


def run_airlock(warmup: Path, files: list[Path]) -> Outputs:
    import anyio

    return anyio.run(run_airlock_async, warmup, files)


# -- the run and its report ---------------------------------------------------------------------


def ratio(a: float, b: float) -> str:
    return f"{a / b:.3f}" if b else "n/a"


def f1(c: dict[str, float]) -> str:
    p, r = c["h_match"] / c["h_found"] if c["h_found"] else 0.0, c["h_match"] / c["h_truth"]
    return f"{p:.2f} / {r:.2f} / {2 * p * r / (p + r) if p + r else 0.0:.2f}"


def mean_order(scores: list[tuple[str, Score]], kind: str) -> float:
    values = [s.counts["order"] for name, s in scores if name.startswith(kind)]
    return sum(values) / len(values) if values else 0.0


def row(system: str, results: list[tuple[str, Score | None]], trace: tuple[str, float] | None) -> str:
    scores = [(name, s) for name, s in results if s is not None]
    if not scores:
        return f"| {system} | not available |" + " |" * 9
    failed = [name for name, s in results if s is None]
    system += f" (failed: {', '.join(failed)})" if failed else ""
    c = {key: sum(s.counts[key] for _, s in scores) for key in scores[0][1].counts}
    order = {kind: mean_order(scores, kind) for kind in ("report", "paper")}
    tm = "n/a"
    if trace is not None:
        found = parse(trace[0]).headings
        tm = ratio(len(match_headings(TRACEMONKEY_HEADINGS, found)), len(TRACEMONKEY_HEADINGS))
        tm += f" ({trace[1] / TRACEMONKEY_PAGES:.3f} s per page)"
    return (
        f"| {system} | {f1(c)} | {ratio(c['h_level'], c['h_match'])} | {ratio(c['rel_ok'], c['rel_n'])} "
        f"| {ratio(c['l_match'], c['l_truth'])} | {ratio(c['l_depth'], c['l_match'])} "
        f"| {ratio(c['t_match'], c['t_truth'])} "
        f"| {c['hdr_leak']:.0f} / {c['num_leak']:.0f} of {c['pages']:.0f} "
        f"| {order['report']:.3f} / {order['paper']:.3f} | {c['seconds'] / c['pages']:.3f} | {tm} |"
    )


def report(argv: list[str], table: list[str], versions: str) -> str:
    command = " ".join(["python -m bench.quality.markdown_score", *argv])
    machine = (
        f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.2f} at the end; peers: {versions}"
    )
    lines = [TITLE, "", f"Generated by `{command}` on {machine}.", ABOUT, "", *HEAD, *table]
    return "\n".join(lines)


def peer_versions(python: Path) -> str:
    if not python.exists():
        return "not installed"
    code = (
        "import importlib.metadata as m; print(*(f'{n} {m.version(n)}' for n in ('pymupdf', 'markitdown')))"
    )
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=False
    ).stdout.strip()


def run_all(args: argparse.Namespace) -> dict[str, Outputs]:
    files = sorted(p.with_suffix(".pdf") for p in args.corpus.glob("*.json"))
    files += [args.tracemonkey] if args.tracemonkey.exists() else []
    warmup = args.corpus / "warmup.pdf"
    outputs = {"pdf-airlock": run_airlock(warmup, files)}
    outputs |= {name: run_peer(args.peers_python, name, warmup, files) for name in PEERS}
    outputs["pdfium-text"] = run_floor(warmup, files)
    out = args.corpus / "out"
    out.mkdir(exist_ok=True)
    for system, got in outputs.items():
        for path, answer in got.items():
            (out / f"{Path(path).stem}.{system}.md").write_text(answer[0] if answer else "")
    return outputs


def write(doc: Path, text: str) -> None:
    """Our block in ``doc`` (``bench.report``); imported here: the peers' interpreter runs this file
    by path and has no ``bench`` package."""
    from bench.report import write_block

    write_block(doc, MARKER, text)


def score_system(system: str, outputs: Outputs) -> list[tuple[str, Score | None]]:
    """Scores of the documents with a truth file; prints each one's counts and misses."""
    scores: list[tuple[str, Score | None]] = []
    for path, answer in outputs.items():
        truth_file = Path(path).with_suffix(".json")
        if truth_file.exists():
            result = score(json.loads(truth_file.read_text()), *answer) if answer else None
            print(f"{system} {Path(path).stem}: {json.dumps(result.counts) if result else 'failed'}")
            print("".join(f"  miss: {miss}\n" for miss in result.misses[:20]) if result else "", end="")
            scores.append((Path(path).stem, result))
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers-python", type=Path, default=PEERS_PYTHON)
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--tracemonkey", type=Path, default=TRACEMONKEY)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md")
    parser.add_argument("--peer", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("--warmup", help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        peer_main(args.peer, args.warmup, args.files)
        return
    if not (args.corpus / "warmup.pdf").exists():
        from bench.corpora.markdown_corpus import build

        build(args.corpus)
    outputs = run_all(args)
    table = [
        row(system, score_system(system, outputs[system]), outputs[system].get(str(args.tracemonkey)))
        for system in SYSTEMS
    ]
    text = report(sys.argv[1:], table, peer_versions(args.peers_python))
    print(text)
    if not args.no_write:
        write(ROOT / "docs" / "performance.md", text)


if __name__ == "__main__":
    main()
