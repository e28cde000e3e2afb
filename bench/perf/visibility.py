"""What the visibility stage costs: ``pdf_read`` (fast) and ``pdf_markdown`` with and without it.

    python -m bench.perf.visibility [--corpus /work/corpus/pdfjs] [--rounds 7] [--max-pages 40]
        [--no-write]

The job children's own code (``pdf_airlock.worker.parsers``) runs in this process on real
documents: pdf.js's papers and books where ``--corpus`` holds them (never fetched, never
committed), plus the benchmark's generated text document and a scan without text. Each round
reads every document with the stage and without it (``page_visibility`` replaced by "nothing
hidden" in every module that calls it), the two alternating, so both see the same machine load;
times are CPU seconds of this process (``time.process_time``: another process's load does not
count), medians over the rounds, per page. Also reported per document: the pages the stage had
to render (the census proved the rest shown) and the characters it left out.

The budget (issue #40): at most 1.5x ``pdf_read`` fast's time per page and 1.1x
``pdf_markdown``'s on ordinary text pages; nothing on pages without text.
Writes the table into docs/performance.md between the VISIBILITY markers.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pypdfium2 as pdfium

from bench.report import PERFORMANCE, write_block
from pdf_airlock.worker.parsers import markdown, read
from pdf_airlock.worker.pdf import layoutlines, visibility, visibility_pixels

ROOT = Path(__file__).resolve().parents[2]
# Papers and books of pdf.js's test corpus (test/pdfs): ordinary text pages.
REAL = (
    "tracemonkey.pdf",
    "freeculture.pdf",
    "pdkids.pdf",
    "TAMReview.pdf",
    "issue1350.pdf",
    "file_pdfjs_test.pdf",
    "standard_fonts.pdf",
    "calrgb.pdf",
)
READ_ARGS = {"max_chars": 2_000_000, "ocr": "off"}
MARKDOWN_ARGS = {"max_chars": 2_000_000, "ocr": "off"}
_CALLERS: tuple[Any, ...] = (visibility, layoutlines)


def _nothing_hidden(*_args: Any, **_kwargs: Any) -> visibility.PageVisibility:
    return visibility.NOTHING_HIDDEN


@contextlib.contextmanager
def stage_off() -> Iterator[None]:
    """Every caller of ``page_visibility`` sees every page shown, as before the stage."""
    saved = [module.page_visibility for module in _CALLERS]
    for module in _CALLERS:
        module.page_visibility = _nothing_hidden
    try:
        yield
    finally:
        for module, original in zip(_CALLERS, saved, strict=True):
            module.page_visibility = original


def documents(corpus: Path | None, max_pages: int) -> dict[str, bytes]:
    """The documents: pdf.js's (first ``max_pages`` pages, a selection is read), the generated
    text document and a scan without a text layer."""
    from bench.corpora import corpus as generated

    found: dict[str, bytes] = {}
    for name in REAL:
        path = corpus / name if corpus is not None else None
        if path is not None and path.is_file():
            found[name] = path.read_bytes()
    found["generated text (bench corpus)"] = generated.text_document(20)
    found["generated paper (bench corpus)"] = generated.paper()
    found["generated scan, no text layer"] = generated.scan(3)
    return found


def page_count(data: bytes, max_pages: int) -> int:
    document = pdfium.PdfDocument(data)
    try:
        return min(len(document), max_pages)
    finally:
        document.close()


def cpu(fn: Callable[[], Any]) -> float:
    started = time.process_time()
    fn()
    return time.process_time() - started


def stage_facts(data: bytes, pages: int) -> tuple[int, int]:
    """Pages the stage rendered, characters it left out (with the stage on)."""
    renders = 0
    original = visibility_pixels._Canvas.render

    def counting(self: Any, *args: Any) -> Any:
        nonlocal renders
        renders += 1
        return original(self, *args)

    rendered_pages = 0
    removed = 0
    document = pdfium.PdfDocument(data)
    facts = visibility.document_facts(data)
    canvas: Any = visibility_pixels._Canvas
    canvas.render = counting
    try:
        for index in range(pages):
            page = document[index]
            textpage = page.get_textpage()
            before = renders
            raw = textpage.get_text_range()
            seen = visibility.page_visibility(page, textpage, facts, raw)
            removed += len(raw) - len(visibility.visible_text(raw, seen, textpage)[0])
            rendered_pages += renders > before
            textpage.close()
            page.close()
    finally:
        canvas.render = original
        document.close()
    return rendered_pages, removed


def _caller(
    run: Callable[[bytes, dict[str, Any]], Any], data: bytes, args: dict[str, Any]
) -> Callable[[], Any]:
    return lambda: run(data, args)


def measure(docs: dict[str, bytes], rounds: int, max_pages: int) -> list[dict[str, Any]]:
    rows = []
    for name, data in docs.items():
        pages = page_count(data, max_pages)
        selection = {"pages": f"1-{pages}"}
        tools: dict[str, Callable[[], Any]] = {
            "read": _caller(read.run, data, READ_ARGS | selection),
            "markdown": _caller(markdown.run, data, MARKDOWN_ARGS | selection),
        }
        times: dict[str, list[float]] = {f"{tool} {side}": [] for tool in tools for side in ("on", "off")}
        for fn in tools.values():  # once each way before timing: caches, first-use costs
            fn()
            with stage_off():
                fn()
        for round_number in range(rounds):
            for tool, fn in tools.items():
                order = ("on", "off") if round_number % 2 == 0 else ("off", "on")
                for side in order:
                    if side == "off":
                        with stage_off():
                            times[f"{tool} off"].append(cpu(fn))
                    else:
                        times[f"{tool} on"].append(cpu(fn))
        rendered, removed = stage_facts(data, pages)
        row = {"name": name, "pages": pages, "rendered": rendered, "removed": removed}
        for key, values in times.items():
            row[key] = statistics.median(values) * 1000 / pages
        rows.append(row)
        sys.stderr.write(f"{name}: {row}\n")
    return rows


def table(rows: list[dict[str, Any]], rounds: int) -> str:
    lines = [
        "## The visibility check (what the agent reads is what a person sees, issue #40)",
        "",
        f"`python -m bench.perf.visibility` ({rounds} rounds, interleaved, medians; CPU time of the "
        f"parsers in one process, per page; {platform.machine()}, {os.cpu_count()} CPUs, load "
        f"{os.getloadavg()[0]:.2f}). Budget: read x1.5, markdown x1.1 on ordinary text pages.",
        "",
        "| document | pages | rendered | chars left out | `pdf_read` fast ms/page: without, with (ratio) "
        "| `pdf_markdown` ms/page: without, with (ratio) |",
        "|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        read_ratio = row["read on"] / row["read off"] if row["read off"] else float("nan")
        markdown_ratio = row["markdown on"] / row["markdown off"] if row["markdown off"] else float("nan")
        lines.append(
            f"| {row['name']} | {row['pages']} | {row['rendered']} | {row['removed']:,} "
            f"| {row['read off']:.2f}, {row['read on']:.2f} (x{read_ratio:.2f}) "
            f"| {row['markdown off']:.2f}, {row['markdown on']:.2f} (x{markdown_ratio:.2f}) |"
        )
    total = {key: sum(row[key] * row["pages"] for row in rows) for key in ("read on", "read off")}
    total |= {key: sum(row[key] * row["pages"] for row in rows) for key in ("markdown on", "markdown off")}
    lines += [
        "",
        f"All documents together: `pdf_read` fast x{total['read on'] / total['read off']:.2f}, "
        f"`pdf_markdown` x{total['markdown on'] / total['markdown off']:.2f}. "
        '"rendered": pages where the census left text in doubt and the stage rendered regions.',
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--corpus", type=Path, default=Path("/work/corpus/pdfjs"))
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--max-pages", type=int, default=40)
    parser.add_argument("--no-write", action="store_true", help="print the table only")
    args = parser.parse_args()
    docs = documents(args.corpus if args.corpus.is_dir() else None, args.max_pages)
    text = table(measure(docs, args.rounds, args.max_pages), args.rounds)
    print(text)
    if not args.no_write:
        write_block(PERFORMANCE, "VISIBILITY", text)


if __name__ == "__main__":
    main()
