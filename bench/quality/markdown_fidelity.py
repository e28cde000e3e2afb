"""Does ``pdf_markdown`` keep every word of the page, once? Word multisets against flat text.

    python -m bench.quality.markdown_fidelity --corpus /work/corpus/pdfjs [--limit N] [--out F.json] [--write]

For each ``*.pdf`` of ``--corpus`` (nothing is fetched; never commit corpus files), in this
process: ``pdf_read``'s fast engine (PDFium's flat text, the page as PDFium reads it) and
``pdf_markdown`` (OCR off) on the whole document, each page's words counted (``words``: runs of
letters and digits after NFKC, lower case; a hyphen PDFium kept at a line's end joins the word
as the Markdown does; Markdown syntax and image placeholders are not words). A word of the flat
text the Markdown lacks is **lost**, one the Markdown has more often than the flat text is
**duplicated**. The furniture ``pdf_markdown`` leaves out on purpose (running headers and
footers, page numbers, margin stamps) is counted in its warning ("... (N words)"): that many
lost words are expected, no more. Prints a table (``--write``: also between the
MARKDOWN-FIDELITY markers of docs/performance.md) and the documents with loss or duplication
beyond it; a document that fails to open in either tool, or takes
longer than ``DOC_SECONDS``, is counted apart.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import sys
import time
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DOC_SECONDS = 60
MARKER = "MARKDOWN-FIDELITY"
WORST = 10  # documents named under the table
MAX_CHARS = 5_000_000
_FURNITURE = re.compile(r"^page furniture left out: .* \((\d+) words\)$")
_PLACEHOLDER = re.compile(r"!\[image p\d+ #\d+\]\(pdf_images:[^)]*\)")
_HYPHEN_BREAK = re.compile(r"([^\W\d_])-[ \t]*\r?\n\s*(?=[^\W\d_A-Z])")
_WORD = re.compile(r"\w+")


def words(text: str) -> Counter[str]:
    """The words of a text: runs of letters and digits, NFKC, lower case; a word hyphenated at a
    line's end before a small letter is one word (as ``structure.join_line`` joins it)."""
    text = unicodedata.normalize("NFKC", _HYPHEN_BREAK.sub(r"\1", text))
    return Counter(word.casefold() for word in _WORD.findall(text))


def markdown_words(markdown: str) -> Counter[str]:
    """The words of ``pdf_markdown``'s text: its image placeholders are not the page's."""
    return words(_PLACEHOLDER.sub(" ", markdown))


def furniture_words(warnings: list[str]) -> int:
    """How many words the answer says it left out as page furniture."""
    return sum(int(found.group(1)) for warning in warnings if (found := _FURNITURE.match(warning)))


def compare(flat: str, markdown: str, warnings: list[str]) -> dict[str, Any]:
    """Lost and duplicated words of the Markdown against the flat text; ``excess_lost``: lost
    words beyond the furniture the warnings count. Words spaced differently on the two sides
    (PDFium's flat text runs "OverviewoftheModel" together where the Markdown has the spaces
    the page shows, or the other way round) are ``respaced``, neither lost nor duplicated: a
    lost word found in the Markdown's letters run together, a duplicated word found in the flat
    text's, and the pieces of such words on the other side."""
    theirs, ours = words(flat), markdown_words(markdown)
    lost, duplicated = theirs - ours, ours - theirs
    ours_run = "".join(_WORD.findall(_PLACEHOLDER.sub(" ", markdown).casefold()))
    flat_words = _WORD.findall(unicodedata.normalize("NFKC", _HYPHEN_BREAK.sub(r"\1", flat)).casefold())
    theirs_run = "".join(flat_words)
    joined = {word for word in lost if len(word) > 1 and word in ours_run}
    joined |= {word for word in duplicated if len(word) > 1 and word in theirs_run}
    respaced = 0
    for side in (lost, duplicated):
        for word in list(side):
            if word in joined or any(word in whole for whole in joined):
                respaced += side.pop(word)
    allowed = furniture_words(warnings)
    return {
        "words": sum(theirs.values()),
        "lost": sum(lost.values()),
        "duplicated": sum(duplicated.values()),
        "respaced": respaced,
        "furniture": allowed,
        "excess_lost": max(0, sum(lost.values()) - allowed),
        "lost_sample": [word for word, _ in lost.most_common(8)],
        "duplicated_sample": [word for word, _ in duplicated.most_common(8)],
    }


def run_document(data: bytes) -> dict[str, Any]:
    """Both tools on one document, in this process, and the comparison."""
    from pdf_airlock.worker.parsers import markdown as markdown_parser
    from pdf_airlock.worker.parsers import read as read_parser

    read = read_parser.run(data, {"max_chars": MAX_CHARS, "ocr": "off"})
    flat = "\n".join(page["text"] for page in read["pages"])
    started = time.perf_counter()
    answer = markdown_parser.run(data, {"max_chars": MAX_CHARS, "ocr": "off"})
    seconds = time.perf_counter() - started
    text = "\n\n".join(page["text"] for page in answer["pages"])
    return {**compare(flat, text, answer["warnings"]), "pages": len(answer["pages"]), "seconds": seconds}


class _Slow(Exception):
    pass


def _alarm(signum: int, frame: Any) -> None:
    raise _Slow


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--write", action="store_true", help="the table into docs/performance.md")
    options = parser.parse_args()
    sys.path[:0] = [str(ROOT / "worker")]
    from pdf_airlock.worker.contract import WorkerError

    files = sorted(options.corpus.glob("*.pdf"))[: options.limit or None]
    results: dict[str, Any] = {}
    signal.signal(signal.SIGALRM, _alarm)
    for path in files:
        signal.alarm(DOC_SECONDS)
        try:
            results[path.name] = run_document(path.read_bytes())
        except WorkerError as error:
            results[path.name] = {"error": error.code}
        except _Slow:
            results[path.name] = {"error": "slow"}
        except Exception as error:
            results[path.name] = {"error": f"exception {type(error).__name__}"}
        finally:
            signal.alarm(0)
    read = [r for r in results.values() if "error" not in r]
    lossy = {name: r for name, r in results.items() if r.get("excess_lost") or r.get("duplicated")}
    total_words = sum(r["words"] for r in read)
    table = "\n".join(
        [
            "| documents | read by both | words (flat text) | lost beyond furniture | duplicated "
            "| respaced | furniture | documents with loss or duplication |",
            "|---|---|---|---|---|---|---|---|",
            f"| {len(files)} | {len(read)} | {total_words} | {sum(r['excess_lost'] for r in read)} "
            f"| {sum(r['duplicated'] for r in read)} | {sum(r['respaced'] for r in read)} "
            f"| {sum(r['furniture'] for r in read)} | {len(lossy)} |",
        ]
    )
    print(table)
    if options.write:
        _write(options, table, lossy)
    print(f"\ndocuments with loss or duplication: {len(lossy)}")
    for name, r in sorted(lossy.items(), key=lambda item: -(item[1]["excess_lost"] + item[1]["duplicated"])):
        print(
            f"- {name}: lost {r['excess_lost']} {r['lost_sample']}, duplicated {r['duplicated']} "
            f"{r['duplicated_sample']} of {r['words']}"
        )
    errors = Counter(r["error"] for r in results.values() if "error" in r)
    print(f"\nnot compared: {dict(errors)}")
    if options.out:
        options.out.write_text(json.dumps(results, indent=1))
    return 0


def _write(options: argparse.Namespace, table: str, lossy: dict[str, Any]) -> None:
    """The table between the MARKDOWN-FIDELITY markers of docs/performance.md, with the worst
    documents."""
    from bench.report import write_block

    worst = sorted(lossy.items(), key=lambda item: -(item[1]["excess_lost"] + item[1]["duplicated"]))[:WORST]
    text = "\n".join(
        [
            "## Markdown fidelity (`pdf_markdown` against flat text)",
            "",
            "Generated by `python -m bench.quality.markdown_fidelity "
            f"--corpus {options.corpus.name} --write`: each "
            "document's words in `pdf_markdown` (OCR off) against `pdf_read`'s flat text (PDFium), in "
            "process. Lost: words of the flat text missing from the Markdown beyond the page furniture "
            "its warning counts; duplicated: words the Markdown has more often; respaced: words the two "
            "space differently (neither). Target: 0 lost, 0 duplicated.",
            "",
            table,
            "",
            *(
                f"- {name}: lost {r['excess_lost']}, duplicated {r['duplicated']} of {r['words']}"
                for name, r in worst
            ),
        ]
    )
    write_block(ROOT / "docs" / "performance.md", MARKER, text)


if __name__ == "__main__":
    raise SystemExit(main())
