"""Rebuild the structure dev set (real documents with truth) under /work/corpus/devset.

    python -m bench.corpora.devset_build [--out /work/corpus/devset] [--only NAME ...] [--truth]

Every input is named in ``bench/quality/devset/manifest.json`` by repository, commit and path; the
repositories are read from their snapshots under ``/work/.mirror/OWNER+NAME`` (fetch them first;
the script says which are missing). PDFs are never committed: they are rebuilt here.

Kinds:

* ``paper``: a paper's LaTeX source compiled with Debian's TeX Live (pdflatex or lualatex, BibTeX,
  three passes). ``class`` replaces the ``\\documentclass`` line (two-column variants of the
  same paper); ``stamp`` adds an arXiv-style identifier rotated 90 degrees in the left margin of
  page 1, as arXiv stamps it. Truth from the source by ``bench/corpora/devset_latex.py``; ``--truth``
  rewrites ``bench/quality/devset/truth/NAME.json`` from it (the headings, body, lists and unit tests).
* ``manual``: a LaTeX manual compiled the same way; truth likewise.
* ``public``: a public PDF copied as it is; its truth is written by hand in
  ``bench/quality/devset/truth/NAME.json`` (never regenerated).
* ``olmocr``: the sample of olmOCR-bench (allenai/olmocr ``olmocr/bench/sample_data``): its PDFs and
  its JSONL unit tests, copied.
* ``icdar``: the ICDAR 2013 table competition set (a copy in BobLd/tabula-sharp's test resources):
  each PDF with its ``-str.xml`` ground truth.

Held-out split: a document is held out when the seeded hash of its name says so (``held_out``;
the seed was picked once, from names alone, so that about a third of each kind is held out); the
engine work must not look at those documents, their truth or their scores.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEVSET_DIR = ROOT / "bench" / "quality" / "devset"
MANIFEST = DEVSET_DIR / "manifest.json"
TRUTH_DIR = DEVSET_DIR / "truth"
OUT = Path("/work/corpus/devset")
MIRROR = Path("/work/.mirror")
SPLIT_SEED = "pdf-airlock-devset-236"
HELD_OUT_BUCKETS = 3  # one bucket of three is held out
TEX_SECONDS = 600
TEX_PASSES = 3
STAMP_TEMPLATE = (
    "\\usepackage{eso-pic}\\usepackage{graphicx}\\usepackage{xcolor}"
    "\\AddToShipoutPictureBG*{\\AtPageLowerLeft{\\put(24,160){\\rotatebox{90}{\\fontsize{20}{22}"
    "\\selectfont\\textcolor[gray]{0.5}{\\textrm{%s}}}}}}\n"
)
UNIT_PRESENT = 8  # sentences quoted per LaTeX document
UNIT_ORDER = 6  # pairs of consecutive paragraphs whose order is asserted
QUOTE_WORDS = 12


def held_out(name: str) -> bool:
    digest = hashlib.sha256(f"{SPLIT_SEED}:{name}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % HELD_OUT_BUCKETS == 0


def mirror(repo: str) -> Path:
    """The snapshot of ``owner/name`` (its git directory)."""
    base = MIRROR / repo.replace("/", "+")
    for candidate in (base / "repo", base / "repo" / ".git", base):
        if (candidate / "HEAD").exists() or (candidate / ".git").exists():
            return candidate
    raise SystemExit(f"{repo}: no snapshot under {base} (fetch github:{repo} first)")


def git(repo: str, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(mirror(repo)), *args], capture_output=True, check=True).stdout


def export(repo: str, commit: str, dest: Path) -> None:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(mirror(repo)), "archive", commit], capture_output=True, check=False
    )
    if archive.returncode == 0:
        subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
        return
    listing = git(repo, "ls-tree", "-r", "-z", commit).decode().split("\0")
    missing = 0
    for line in filter(None, listing):
        meta, path = line.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind != "blob" or mode == "120000":
            continue
        blob = subprocess.run(
            ["git", "-C", str(mirror(repo)), "cat-file", "blob", sha], capture_output=True, check=False
        )
        if blob.returncode:  # a snapshot may lack its largest files (figures): TeX goes on without them
            missing += 1
            continue
        (dest / path).parent.mkdir(parents=True, exist_ok=True)
        (dest / path).write_bytes(blob.stdout)
    if missing:
        sys.stderr.write(f"{repo}: {missing} files absent from the snapshot\n")


def patch_source(main: Path, entry: dict[str, Any]) -> None:
    text = main.read_text(errors="replace")
    if cls := entry.get("class"):
        text = re.sub(
            r"^[^%\n]*\\documentclass\s*(\[[^\]]*\])?\s*\{[^}]*\}", lambda _: cls, text, count=1, flags=re.M
        )
    if stamp := entry.get("stamp"):
        text = text.replace("\\begin{document}", STAMP_TEMPLATE % stamp + "\\begin{document}", 1)
    for old, new in entry.get("replace", []):
        text = text.replace(old, new)
    main.write_text(text)


def compile_tex(workdir: Path, main: str, engine: str) -> Path | None:
    """pdflatex/lualatex, BibTeX when the source cites, then two more passes; the PDF if made."""
    stem = Path(main).with_suffix("").as_posix()
    run = [engine, "-interaction=nonstopmode", main]
    log = workdir / "build.log"
    with log.open("w") as sink:
        for index in range(TEX_PASSES):
            subprocess.run(
                run, cwd=workdir, stdout=sink, stderr=subprocess.STDOUT, timeout=TEX_SECONDS, check=False
            )
            aux = workdir / f"{stem}.aux"
            if index == 0 and aux.exists() and "\\bibdata" in aux.read_text(errors="replace"):
                subprocess.run(
                    ["bibtex", stem], cwd=workdir, stdout=sink, stderr=subprocess.STDOUT, check=False
                )
    pdf = workdir / f"{stem}.pdf"
    return pdf if pdf.exists() else None


def words(text: str, count: int) -> str:
    return " ".join(text.split()[:count])


def latex_truth(entry: dict[str, Any], workdir: Path, pdf: Path) -> dict[str, Any]:
    from bench.corpora.devset_latex import read

    main = workdir / entry["path"]
    named = re.search(r"\{([^}]*)\}\s*$", entry.get("class", ""))
    cls = named.group(1) if named else None
    truth = read(main, cls, main.with_suffix(".bbl"))
    pages = pdf_pages(pdf)
    # quotes come from stretches of text the source and the page agree on (no maths, citations,
    # footnotes or floats inside: bench/corpora/devset_latex.py marks them)
    stretches = [[part for part in parts if len(part.split()) >= QUOTE_WORDS * 2] for parts in truth.quotable]
    body = [parts for parts in stretches if parts]
    step = max(1, len(body) // UNIT_PRESENT)
    tests: list[dict[str, Any]] = []
    for index, parts in enumerate(body[::step][:UNIT_PRESENT]):
        longest = max(parts, key=len).split()
        middle = max(0, (len(longest) - QUOTE_WORDS) // 2)
        sentence = " ".join(longest[middle : middle + QUOTE_WORDS])
        tests.append({"id": f"{entry['name']}_p{index}", "type": "present", "text": sentence, "max_diffs": 2})
    pairs = [
        (a[-1], b[0])
        for a, b in itertools.pairwise(truth.quotable)
        if a and b and len(a[-1].split()) >= QUOTE_WORDS and len(b[0].split()) >= QUOTE_WORDS
    ]
    step = max(1, len(pairs) // UNIT_ORDER)
    for index, (before, after) in enumerate(pairs[::step][:UNIT_ORDER]):
        tests.append(
            {
                "id": f"{entry['name']}_o{index}", "type": "order", "max_diffs": 2,
                "before": " ".join(before.split()[-QUOTE_WORDS:]), "after": words(after, QUOTE_WORDS),
            }
        )  # fmt: skip
    if stamp := entry.get("stamp"):
        tests.append({"id": f"{entry['name']}_stamp", "type": "absent_in_body", "text": stamp})
    return {
        "file": f"{entry['name']}.pdf", "kind": entry["kind"], "pages": pages, "source": "latex",
        "headings": truth.headings, "runin": truth.runin, "body": truth.paragraphs,
        "list_items": truth.list_items, "tables": truth.tables, "stamp": entry.get("stamp"), "tests": tests,
    }  # fmt: skip


def pdf_pages(pdf: Path) -> int:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf.read_bytes())
    try:
        return len(document)
    finally:
        document.close()


def cut_pages(pdf: Path, target: Path, sample: str) -> None:
    """Pages ``FIRST-LAST`` of a long manual as a document of their own."""
    import pypdfium2 as pdfium

    first, last = (int(n) for n in sample.split("-"))
    source = pdfium.PdfDocument(pdf.read_bytes())
    cut = pdfium.PdfDocument.new()
    cut.import_pages(source, list(range(first - 1, min(last, len(source)))))
    cut.save(target)
    cut.close()
    source.close()


def flat_text(pdf: Path) -> str:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf.read_bytes())
    try:
        return " ".join(document[i].get_textpage().get_text_range() for i in range(len(document)))
    finally:
        document.close()


def sampled_truth(truth: dict[str, Any], target: Path, sample: str) -> dict[str, Any]:
    """The truth of a page sample: the source's headings that the sample's pages print (found in
    order in their flat text), and no body (the sample cuts it at arbitrary points)."""
    text = " ".join(re.findall(r"\w+", flat_text(target).lower()))
    kept, position = [], 0
    for heading, level in truth["headings"]:
        key = " ".join(re.findall(r"\w+", heading.lower()))
        found = text.find(key, position) if key else -1
        if found >= 0:
            kept.append((heading, level))
            position = found + len(key)
    tests = [t for t in truth["tests"] if t["type"] == "absent_in_body"]
    return truth | {"headings": kept, "body": [], "list_items": [], "tables": [], "tests": tests,
                    "page_sample": sample}  # fmt: skip


def build_tex(entry: dict[str, Any], out: Path, write_truth: bool) -> None:
    workdir = out / "src" / entry["name"]
    export(entry["repo"], entry["commit"], workdir)
    patch_source(workdir / entry["path"], entry)
    base = workdir / Path(entry["path"]).parent
    pdf = compile_tex(base, Path(entry["path"]).name, entry.get("engine", "pdflatex"))
    if pdf is None:
        sys.stderr.write(f"{entry['name']}: no PDF (see {base / 'build.log'})\n")
        return
    target = out / "docs" / f"{entry['name']}.pdf"
    if sample := entry.get("page_sample"):
        cut_pages(pdf, target, sample)
    else:
        shutil.copy(pdf, target)
    truth_file = TRUTH_DIR / f"{entry['name']}.json"
    if write_truth or not truth_file.exists():
        truth = latex_truth(entry, workdir, target)
        if sample:
            truth = sampled_truth(truth, target, sample)
        truth_file.write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n")
    print(f"{entry['name']}: {pdf_pages(pdf)} pages")


def rewrite_truth(entry: dict[str, Any], out: Path) -> None:
    target = out / "docs" / f"{entry['name']}.pdf"
    if not target.exists():
        return
    truth = latex_truth(entry, out / "src" / entry["name"], target)
    if sample := entry.get("page_sample"):
        truth = sampled_truth(truth, target, sample)
    (TRUTH_DIR / f"{entry['name']}.json").write_text(json.dumps(truth, indent=1, ensure_ascii=False) + "\n")
    print(f"{entry['name']}: truth rewritten")


def copy_blob(repo: str, commit: str, path: str, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_bytes(git(repo, "show", f"{commit}:{path}"))


def build_copy(entry: dict[str, Any], out: Path) -> None:
    if entry["kind"] == "public":
        copy_blob(entry["repo"], entry["commit"], entry["path"], out / "docs" / f"{entry['name']}.pdf")
    elif entry["kind"] == "olmocr":
        base = entry["path"].rstrip("/")
        tests = git(entry["repo"], "show", f"{entry['commit']}:{base}/dataset.jsonl").decode()
        (out / "olmocr").mkdir(parents=True, exist_ok=True)
        (out / "olmocr" / "dataset.jsonl").write_text(tests)
        for pdf in sorted({json.loads(line)["pdf"] for line in tests.splitlines() if line.strip()}):
            copy_blob(entry["repo"], entry["commit"], f"{base}/pdfs/{pdf}", out / "olmocr" / "pdfs" / pdf)
    elif entry["kind"] == "icdar":
        listing = git(entry["repo"], "ls-tree", "-r", "--name-only", entry["commit"], entry["path"]).decode()
        for path in listing.split():
            if path.endswith((".pdf", "-str.xml", "-reg.xml")):
                copy_blob(entry["repo"], entry["commit"], path, out / "icdar" / Path(path).name)
    print(f"{entry['name']}: copied")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", nargs="*", help="names of the manifest's entries to rebuild")
    parser.add_argument("--truth", action="store_true", help="rewrite the LaTeX documents' truth files")
    parser.add_argument(
        "--truth-only", action="store_true", help="rewrite the LaTeX truth from the sources already built"
    )
    args = parser.parse_args()
    manifest = json.loads(MANIFEST.read_text())
    (args.out / "docs").mkdir(parents=True, exist_ok=True)
    TRUTH_DIR.mkdir(parents=True, exist_ok=True)
    for entry in manifest:
        if args.only and entry["name"] not in args.only:
            continue
        try:
            if entry["kind"] in ("paper", "manual") and args.truth_only:
                rewrite_truth(entry, args.out)
            elif entry["kind"] in ("paper", "manual"):
                build_tex(entry, args.out, args.truth)
            else:
                build_copy(entry, args.out)
        except Exception as exc:  # one input that fails to build leaves the others standing
            sys.stderr.write(f"{entry['name']}: {type(exc).__name__}: {exc}\n")


if __name__ == "__main__":
    main()
