"""OCR quality and speed: pdf-airlock over MCP against Tesseract in-process, on the same scans.

    python -m bench.quality.ocr_score [--corpus DIR] [--languages DIR] [--real DIR] [--runs 1] [--no-write]

Three sets of pages, each made or found where it is not there:

- ``--corpus``: ``bench/corpora/ocr_corpus.py``'s English scans (fonts, a table, two columns, noise);
- ``--languages``: ``bench/corpora/ocr_corpus.py --languages``: three scans of prose in each of the 26
  languages the container image ships (Noto fonts, noised and tilted, at 300, 200 and 150 dpi),
  pages scanned turned 90, 180 and 270 degrees, and a blank scan;
- ``--real DIR``: the real scans of ``bench/quality/ocr_real_truth.json`` found in ``DIR`` (public test
  files, not in this repository; their text checked by hand against the rendered page).

For every page, in one run and interleaved (the order of the systems rotates page by page,
because the machine is shared and noisy):

- **named**: one ``pdf_read`` ``tools/call`` (``ocr`` auto) with ``ocr_languages`` the page's
  language, over MCP stdio through the Python SDK client, to a server with the cache off: the
  sandboxed job child renders the page and runs Tesseract (the sandbox, the rendering and the
  protocol included);
- **none named**: the same call without ``ocr_languages`` (the server detects script and
  orientation and chooses the languages);
- **tesserocr**: Tesseract in this process, as a program without a sandbox would use it: the
  page as shown, rendered by pypdfium2 in grey at its image's own resolution (pixel for pixel),
  read by a ``PyTessBaseAPI`` of the page's language created before timing.

Scores per page: word F1 (the multiset of words, order-free; words compared with their
punctuation stripped), or character F1 (the multiset of characters other than spaces) for
scripts written without spaces (Chinese, Japanese, Thai), and the character error rate in
reading order (edit distance over the length of the truth, whitespace runs as one space). A
blank page scores 1 when nothing is read, else 0. Reported: per group the means of F1 and the
medians of the wall time per page. Writes its block into docs/performance.md unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[2]
MARKER = "OCR-QUALITY"
DEFAULT_CORPUS = Path("/tmp/pdf-airlock-ocr-corpus")
DEFAULT_LANGUAGES = Path("/tmp/pdf-airlock-ocr-languages")
REAL_TRUTH = ROOT / "bench" / "quality" / "ocr_real_truth.json"
SYSTEMS = ("named", "auto", "local")
_PUNCTUATION = re.compile(r"^\W+|\W+$")


def words(text: str) -> Counter[str]:
    found = (_PUNCTUATION.sub("", word) for word in text.split())
    return Counter(word for word in found if word)


def _f1(expected: Counter[str], got: Counter[str]) -> float:
    common = sum((expected & got).values())
    if not common:
        return 0.0
    precision, recall = common / sum(got.values()), common / sum(expected.values())
    return 2 * precision * recall / (precision + recall)


def word_f1(truth: str, found: str) -> float:
    return _f1(words(truth), words(found))


def char_f1(truth: str, found: str) -> float:
    return _f1(Counter(c for c in truth if not c.isspace()), Counter(c for c in found if not c.isspace()))


def score(known: dict[str, Any], found: str) -> float:
    if not known["text"].strip():  # a blank page: right when nothing is read
        return float(not found.strip())
    if known.get("scoring") == "characters":
        return char_f1(known["text"], found)
    return word_f1(known["text"], found)


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
    """Tesseract in this process on the page's own image: one warm API per language."""

    def __init__(self) -> None:
        from pdf_airlock.worker.pdf import ocr

        self.directory = next(d for d in ocr.TESSDATA_DIRS if Path(d, "eng.traineddata").exists())
        self.apis: dict[str, Any] = {}

    def api(self, lang: str) -> Any:
        import tesserocr

        if lang not in self.apis:
            self.apis[lang] = tesserocr.PyTessBaseAPI(path=self.directory, lang=lang, psm=tesserocr.PSM.AUTO)
        return self.apis[lang]

    @staticmethod
    def image(path: Path, number: int) -> tuple[Any, int]:
        """The page as shown, in grey, rendered pixel for pixel at the resolution of its largest
        image as placed (a page without one: at 300 dpi)."""
        import pypdfium2 as pdfium
        import pypdfium2.raw as pdfium_c

        document = pdfium.PdfDocument(path.read_bytes())
        page = document[number - 1]
        images = list(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=4))
        scale = 300 / 72
        if images:
            largest = max(images, key=lambda obj: obj.get_px_size()[0] * obj.get_px_size()[1])
            a, b, c, d, _e, _f = largest.get_matrix().get()
            px_width, px_height = largest.get_px_size()
            scale = max(px_width / (a * a + b * b) ** 0.5, px_height / (c * c + d * d) ** 0.5) * (1 - 1e-9)
        picture = page.render(scale=scale, grayscale=True).to_pil()
        return picture, round(scale * 72)

    def read(self, path: Path, number: int, lang: str) -> str:
        api = self.api(lang)
        picture, dpi = self.image(path, number)
        api.SetImage(picture)
        api.SetSourceResolution(dpi)
        text: str = api.GetUTF8Text()
        return text


def english_pages(corpus: Path) -> list[dict[str, Any]]:
    """``bench/corpora/ocr_corpus.py``'s pages: one-page PDFs, by file name."""
    truth = json.loads((corpus / "truth.json").read_text())
    return [
        {"name": name, "file": name, "page": 1, "group": known["variant"], "lang": "eng", **known}
        for name, known in truth.items()
    ]


def language_pages(corpus: Path) -> list[dict[str, Any]]:
    truth = json.loads((corpus / "truth.json").read_text())
    pages = []
    for name, known in truth.items():
        group = known["lang"] or "blank"
        if known.get("turn"):
            group = f"turned {known['turn']}"
        pages.append({"name": name, "file": name, "page": 1, "group": group, **known})
        if not known["lang"]:
            pages[-1]["lang"] = "eng"
    return pages


def real_pages(directory: Path) -> list[dict[str, Any]]:
    """The pages of ``REAL_TRUTH`` whose file is in ``directory`` (the others are named on stderr)."""
    pages = []
    for known in json.loads(REAL_TRUTH.read_text())["pages"]:
        if not (directory / known["file"]).is_file():
            print(f"not in {directory}: {known['file']} ({known['source']})", file=sys.stderr)
            continue
        name = f"{known['file']} p. {known['page']}"
        pages.append({"name": name, "group": name, "lang": known.get("lang", "eng"), **known})
    return pages


async def run(corpus: Path, pages: list[dict[str, Any]], runs: int) -> list[dict[str, Any]]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, get_default_environment

    local = InProcess()
    command = [sys.executable, "-m", "pdf_airlock.server", "--root", str(corpus), "--cache-mb", "0"]
    params = StdioServerParameters(command=command[0], args=command[1:], env=get_default_environment())
    rows: list[dict[str, Any]] = []
    async with Client(params, mode="legacy", read_timeout_seconds=300) as client:
        first = pages[0]  # warm: a spare, a first page
        await client.call_tool("pdf_read", {"path": first["file"], "pages": str(first["page"])})
        local.read(corpus / first["file"], first["page"], first["lang"])
        for number, known in enumerate(pages):
            times: dict[str, list[float]] = {system: [] for system in SYSTEMS}
            texts: dict[str, str] = {}
            detail: dict[str, Any] = {}
            for attempt in range(runs):
                turn = (number + attempt) % len(SYSTEMS)
                for system in SYSTEMS[turn:] + SYSTEMS[:turn]:
                    started = time.perf_counter()
                    if system == "local":
                        texts[system] = local.read(corpus / known["file"], known["page"], known["lang"])
                    else:
                        arguments: dict[str, Any] = {"path": known["file"], "pages": str(known["page"])}
                        if system == "named":
                            arguments["ocr_languages"] = [known["lang"]]
                        result = await client.call_tool("pdf_read", arguments)
                        assert result.is_error is False, result.content
                        page = result.structured_content["pages"][0]
                        assert page["text_source"] == "ocr", known["name"]
                        texts[system] = page["text"]
                        detail[system] = (page.get("ocr_languages"), page.get("ocr_rotation"))
                    times[system].append(time.perf_counter() - started)
            row = {"name": known["name"], "group": known["group"], "detail": detail}
            for system in SYSTEMS:
                row[f"{system}_f1"] = score(known, texts[system])
                row[f"{system}_cer"] = cer(known["text"], texts[system])
                row[f"{system}_s"] = statistics.median(times[system])
            rows.append(row)
            print(json.dumps(row, ensure_ascii=False), file=sys.stderr)
    return rows


def _mean(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.fmean(row[key] for row in rows))


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(row[key] for row in rows))


def table(rows: list[dict[str, Any]], first: str, *, total: str = "**all**") -> list[str]:
    """One row per group (``first`` names the column), then one over all ``rows``."""
    groups = list(dict.fromkeys(row["group"] for row in rows))
    lines = [
        f"| {first} | pages | F1 named | F1 none named | F1 tesserocr | CER named / tesserocr "
        "| s per page named / none named / tesserocr |",
        "|---|---|---|---|---|---|---|",
    ]
    for group in [*groups, None]:
        chosen = [row for row in rows if group is None or row["group"] == group]
        lines.append(
            f"| {group or total} | {len(chosen)} | {_mean(chosen, 'named_f1'):.3f} "
            f"| {_mean(chosen, 'auto_f1'):.3f} | {_mean(chosen, 'local_f1'):.3f} "
            f"| {_mean(chosen, 'named_cer'):.3f} / {_mean(chosen, 'local_cer'):.3f} "
            f"| {_median(chosen, 'named_s'):.2f} / {_median(chosen, 'auto_s'):.2f} "
            f"/ {_median(chosen, 'local_s'):.2f} |"
        )
    return lines


def report(
    english: list[dict[str, Any]],
    languages: list[dict[str, Any]],
    real: list[dict[str, Any]],
    argv: list[str],
) -> str:
    lines = [
        "## OCR quality and speed (`ocr`)",
        "",
        f"Generated by `python -m bench.quality.ocr_score {' '.join(argv)}`".rstrip()
        + f" on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load average "
        f"{os.getloadavg()[0]:.2f} at the end. The machine is shared with other work: times are "
        "medians, the systems interleaved page by page. F1 is word F1, or character F1 for Chinese, "
        "Japanese and Thai (means over the pages); a blank page scores 1 when nothing is read. "
        "named: `pdf_read` (`ocr` auto) with `ocr_languages` the page's language, over MCP stdio, "
        "sandboxed, cache off; none named: the same call without `ocr_languages` (script, "
        "orientation and languages detected); tesserocr: the page as shown, rendered at its image's "
        "own resolution, read in-process by a warm `PyTessBaseAPI` of the page's language, no "
        "orientation detection.",
    ]
    if languages:
        lines += [
            "",
            "Every shipped language (`bench/corpora/ocr_corpus.py --languages`: prose written for the "
            "benchmark, typeset with Debian's Noto fonts, three scans per language at 300, 200 "
            "and 150 dpi with noise, blur, JPEG and a tilt of 0.4-0.7 degrees; pages scanned "
            "turned; a blank scan of paper noise):",
            "",
            *table(languages, "language", total="**all languages**"),
        ]
    if english:
        lines += [
            "",
            "English layouts (`bench/corpora/ocr_corpus.py`: fonts DejaVu Sans, Serif, Mono and Pillow's "
            "own; prose, a ruled table, two columns; mild = Gaussian noise sigma 12, blur 0.6 px, "
            "JPEG 75, tilt 0.5-0.8 degrees):",
            "",
            *table(english, "variant"),
        ]
    if real:
        lines += [
            "",
            "Real scans (`--real`): public test files with their text checked by hand against the "
            "rendered page (`bench/quality/ocr_real_truth.json`: OCRmyPDF's test resources, a book page "
            "with an illustration and show-through, a printer's scan of a web page, a French "
            "pangram, and a two-column leaflet in small print as a clean scan, a CCITT fax image, "
            "a JBIG2 image, askew, and askew on a page turned by /Rotate); a word hyphenated at a "
            "line end counts as the whole word.",
            "",
            *table(real, "page"),
        ]
    return "\n".join(lines)


def write(doc: Path, text: str, marker: str = MARKER) -> None:
    """Our block in ``doc`` (``bench.report``)."""
    from bench.report import write_block

    write_block(doc, marker, text)


def _made(directory: Path, *flags: str) -> Path:
    if not (directory / "truth.json").exists():
        env = os.environ | {"PYTHONHASHSEED": "0"}
        corpus = [sys.executable, "-m", "bench.corpora.ocr_corpus", str(directory), *flags]
        subprocess.run(corpus, check=True, env=env, cwd=ROOT)
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--languages", type=Path, default=DEFAULT_LANGUAGES)
    parser.add_argument("--real", type=Path, help="a directory holding the real scans of " + REAL_TRUTH.name)
    parser.add_argument("--only", choices=("english", "languages", "real"), help="one set of pages")
    parser.add_argument("--runs", type=int, default=1, help="timed calls per page and system")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/performance.md")
    args = parser.parse_args()
    sets = {args.only} if args.only else {"english", "languages", "real"}
    english = languages = real = []
    if "languages" in sets:
        corpus = _made(args.languages, "--languages")
        languages = anyio.run(run, corpus, language_pages(corpus), args.runs)
    if "english" in sets:
        corpus = _made(args.corpus)
        english = anyio.run(run, corpus, english_pages(corpus), args.runs)
    if "real" in sets and args.real:
        real = anyio.run(run, args.real, real_pages(args.real), args.runs)
    text = report(english, languages, real, sys.argv[1:])
    print(text)
    if not args.no_write:
        write(ROOT / "docs" / "performance.md", text)


if __name__ == "__main__":
    main()
