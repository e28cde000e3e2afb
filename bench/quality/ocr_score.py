"""OCR quality and speed: pdf-airlock over MCP against Tesseract in-process, on the same scans.

    python -m bench.quality.ocr_score [--corpus DIR] [--real DIR] [--runs 3] [--no-write]

The corpus is ``bench/corpora/ocr_corpus.py``'s (made in ``--corpus`` when it is not there): scanned
pages with known text. With ``--real DIR``, also the real scans of ``bench/quality/ocr_real_truth.json``
found in ``DIR`` (public test files, not in this repository; their text checked by hand against
the rendered page), reported in a table of their own. For every page, in one run and interleaved
(the order of the two systems alternates page by page, because the machine is shared and noisy):

- **pdf-airlock**: one ``pdf_read`` ``tools/call`` (``ocr`` auto) over MCP stdio through the
  Python SDK client, to a server with the cache off: the sandboxed job child renders the page
  and runs Tesseract (the sandbox, the rendering and the protocol included);
- **tesserocr in-process**: the same page rendered by pypdfium2 at the same resolution
  (``pdf_airlock.worker.pdf.ocr.OcrLimits().dpi``, in grey) and read by a ``PyTessBaseAPI`` that was
  created before timing, in this process: what a program would do without a sandbox.

Scores per page: word F1 (the multiset of words, order-free; words compared with their
punctuation stripped) and the character error rate in reading order (edit distance over the
length of the truth, whitespace runs as one space). Reported: per variant the medians, and over
all pages the median wall time per page of each system and their ratio (the median of the
per-page ratios). Writes its block into docs/performance.md unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[2]
MARKER = "OCR-QUALITY"
DEFAULT_CORPUS = Path("/tmp/pdf-airlock-ocr-corpus")
REAL_TRUTH = ROOT / "bench" / "quality" / "ocr_real_truth.json"
_PUNCTUATION = re.compile(r"^\W+|\W+$")


def words(text: str) -> Counter[str]:
    found = (_PUNCTUATION.sub("", word) for word in text.split())
    return Counter(word for word in found if word)


def word_f1(truth: str, found: str) -> float:
    expected, got = words(truth), words(found)
    common = sum((expected & got).values())
    if not common:
        return 0.0
    precision, recall = common / sum(got.values()), common / sum(expected.values())
    return 2 * precision * recall / (precision + recall)


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance, one row at a time."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, 1):
        current = [i]
        for j, other in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other)))
        previous = current
    return previous[-1]


def cer(truth: str, found: str) -> float:
    expected, got = " ".join(truth.split()), " ".join(found.split())
    return edit_distance(expected, got) / max(len(expected), 1)


class InProcess:
    """Tesseract in this process, created before timing, on pages rendered by pypdfium2."""

    def __init__(self) -> None:
        import tesserocr

        from pdf_airlock.worker.pdf import ocr

        self.dpi = ocr.OcrLimits().dpi
        directory = next(d for d in ocr.TESSDATA_DIRS if Path(d, "eng.traineddata").exists())
        self.api = tesserocr.PyTessBaseAPI(path=directory, lang="eng", psm=tesserocr.PSM.AUTO)

    def read(self, path: Path, number: int = 1) -> str:
        import pypdfium2 as pdfium

        document = pdfium.PdfDocument(path.read_bytes())
        page = document[number - 1]
        bitmap = page.render(scale=self.dpi / 72, grayscale=True)
        self.api.SetImageBytes(bytes(bitmap.buffer), bitmap.width, bitmap.height, 1, bitmap.stride)
        self.api.SetSourceResolution(round(self.dpi))
        text: str = self.api.GetUTF8Text()
        page.close()
        document.close()
        return text


def synthetic_pages(corpus: Path) -> list[dict[str, Any]]:
    """``bench/corpora/ocr_corpus.py``'s pages: one-page PDFs, by file name."""
    truth = json.loads((corpus / "truth.json").read_text())
    return [
        {"name": name, "file": name, "page": 1, "variant": known["variant"], "text": known["text"]}
        for name, known in truth.items()
    ]


def real_pages(directory: Path) -> list[dict[str, Any]]:
    """The pages of ``REAL_TRUTH`` whose file is in ``directory`` (the others are named on stderr)."""
    pages = []
    for known in json.loads(REAL_TRUTH.read_text())["pages"]:
        if not (directory / known["file"]).is_file():
            print(f"not in {directory}: {known['file']} ({known['source']})", file=sys.stderr)
            continue
        name = f"{known['file']} p. {known['page']}"
        pages.append(
            {
                "name": name,
                "file": known["file"],
                "page": known["page"],
                "variant": name,
                "text": known["text"],
            }
        )
    return pages


async def run(corpus: Path, pages: list[dict[str, Any]], runs: int) -> list[dict[str, Any]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, get_default_environment

    local = InProcess()
    command = [sys.executable, "-m", "pdf_airlock.server", "--root", str(corpus), "--cache-mb", "0"]
    params = StdioServerParameters(command=command[0], args=command[1:], env=get_default_environment())
    rows: list[dict[str, Any]] = []
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        first = pages[0]  # warm: a spare, a first page
        await client.call_tool("pdf_read", {"path": first["file"], "pages": str(first["page"])})
        local.read(corpus / first["file"], first["page"])
        for number, known in enumerate(pages):
            name = known["name"]
            times: dict[str, list[float]] = {"airlock": [], "local": []}
            texts: dict[str, str] = {}
            for attempt in range(runs):
                order = ("airlock", "local") if (number + attempt) % 2 == 0 else ("local", "airlock")
                for system in order:
                    started = time.perf_counter()
                    if system == "airlock":
                        arguments = {"path": known["file"], "pages": str(known["page"])}
                        result = await client.call_tool("pdf_read", arguments)
                        assert result.is_error is False, result.content
                        page = result.structured_content["pages"][0]
                        assert page["text_source"] == "ocr", name
                        texts[system] = page["text"]
                    else:
                        texts[system] = local.read(corpus / known["file"], known["page"])
                    times[system].append(time.perf_counter() - started)
            rows.append(
                {
                    "name": name,
                    "variant": known["variant"],
                    **{
                        f"{system}_{what}": value
                        for system in ("airlock", "local")
                        for what, value in (
                            ("f1", word_f1(known["text"], texts[system])),
                            ("cer", cer(known["text"], texts[system])),
                            ("s", statistics.median(times[system])),
                        )
                    },
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr)
    return rows


def table(rows: list[dict[str, Any]], first: str) -> list[str]:
    """One row per variant (``first`` names the column), then one over all ``rows``."""
    variants = list(dict.fromkeys(row["variant"] for row in rows))
    lines = [
        f"| {first} | pages | word F1 pdf-airlock / tesserocr | CER pdf-airlock / tesserocr "
        "| s per page pdf-airlock / tesserocr | ratio |",
        "|---|---|---|---|---|---|",
    ]
    for variant in [*variants, None]:
        chosen = [row for row in rows if variant is None or row["variant"] == variant]

        def med(key: str, chosen: list[dict[str, Any]] = chosen) -> float:
            return float(statistics.median(row[key] for row in chosen))

        ratio = statistics.median(row["airlock_s"] / row["local_s"] for row in chosen)
        lines.append(
            f"| {variant or '**all**'} | {len(chosen)} | {med('airlock_f1'):.3f} / {med('local_f1'):.3f} "
            f"| {med('airlock_cer'):.3f} / {med('local_cer'):.3f} "
            f"| {med('airlock_s'):.2f} / {med('local_s'):.2f} | {ratio:.2f}x |"
        )
    return lines


def report(rows: list[dict[str, Any]], real: list[dict[str, Any]], argv: list[str]) -> str:
    lines = [
        "## OCR quality and speed (`ocr`)",
        "",
        f"Generated by `python -m bench.quality.ocr_score {' '.join(argv)}`".rstrip()
        + f" on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.2f} at the end. The machine is shared with other work: times are "
        "medians, the two systems interleaved page by page.",
        "Corpus: `bench/corpora/ocr_corpus.py` (image-only Letter pages with known text; fonts DejaVu "
        "Sans, Serif, Mono and Pillow's own; prose, a ruled table, two columns; mild = Gaussian noise "
        "sigma 12, blur 0.6 px, JPEG 75, tilt 0.5-0.8 degrees). pdf-airlock: `pdf_read` (`ocr` "
        "auto) over MCP stdio, sandboxed, cache off; tesserocr: the same page rendered by "
        "pypdfium2 at the same 300 dpi and read in-process by a warm `PyTessBaseAPI`.",
        "",
        *table(rows, "variant"),
    ]
    if real:
        lines += [
            "",
            "Real scans (`--real`): public test files with their text checked by hand against the "
            "rendered page (`bench/quality/ocr_real_truth.json`, from OCRmyPDF's test resources: a book page "
            "with an illustration and show-through, a printer's scan of a web page, a French pangram "
            "read with the English model the image ships, and a two-column leaflet in small print "
            "as a clean scan, a CCITT fax image, a JBIG2 image, askew, and askew on a page turned by "
            "/Rotate); a word hyphenated at a line end counts as the whole word.",
            "",
            *table(real, "page"),
        ]
    return "\n".join(lines)


def write(doc: Path, text: str) -> None:
    """Our block in ``doc`` (``bench.report``); imported here: the peers' interpreter runs this file
    by path and has no ``bench`` package."""
    from bench.report import write_block

    write_block(doc, MARKER, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--real", type=Path, help="a directory holding the real scans of " + REAL_TRUTH.name)
    parser.add_argument("--runs", type=int, default=3, help="timed calls per page and system")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md")
    args = parser.parse_args()
    if not (args.corpus / "truth.json").exists():
        os.environ.setdefault("PYTHONHASHSEED", "0")
        import subprocess

        subprocess.run(
            [sys.executable, "-m", "bench.corpora.ocr_corpus", str(args.corpus)], check=True, cwd=ROOT
        )
    rows = anyio.run(run, args.corpus, synthetic_pages(args.corpus), args.runs)
    real = anyio.run(run, args.real, real_pages(args.real), args.runs) if args.real else []
    text = report(rows, real, sys.argv[1:])
    print(text)
    if not args.no_write:
        write(ROOT / "docs" / "performance.md", text)


if __name__ == "__main__":
    main()
