"""What the visibility check leaves out of a corpus, in-process only:
``python -m bench.studies.withheld --corpus DIR [--out FILE.jsonl] [--timeout 60] [--at-least 20]``.

Each ``*.pdf`` in ``--corpus`` goes through the read parser (``pdf_read``, engine fast,
``include_hidden``, OCR off, every page, no character cap) in this process after the zygote's
warm-up, each file in a forked child with a deadline (``--timeout``), so a runaway or crashing
parse costs one file. It prints the documents scanned, those with hidden runs, the characters
left out by reason, and each document with ``--at-least`` characters or more left out, with
its first hidden runs of each reason (page, reason, box in PDF points, characters, a preview):
the ones to read. A run's text is capped (``MAX_RUN_CHARS``), so the counts are a floor.
``--out`` writes one JSON line per file. The differential (``bench.robustness.differential``,
job ``pdf_read/hidden``) answers the other question, whether the sandbox leaves out the same.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Final

ARGS: Final[dict[str, Any]] = {
    "engine": "fast",
    "include_hidden": True,
    "ocr": "off",
    "max_chars": 10_000_000,
    "pages": None,
    "password": None,
    "start_index": 0,
    "start_offset": 0,
}
_PREVIEW: Final = 70
_SHOWN_RUNS: Final = 3  # runs shown per document and reason


def _one(path: Path, timeout: int) -> dict[str, Any]:
    """The file's hidden runs, read in a forked child (its answer comes back over a pipe)."""
    from pdf_airlock.worker.parsers import get_parser

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: parse, write one JSON object, leave without cleanup
        os.close(read)
        signal.alarm(timeout)
        try:
            result = get_parser("pdf_read")(path.read_bytes(), dict(ARGS))
            pages = result["pages"]
            answer: dict[str, Any] = {
                "kept": sum(len(page["text"]) for page in pages),
                "pages": len(pages),
                "runs": [run for page in pages for run in page.get("hidden", [])],
            }
        except Exception as exc:  # a document the parser refuses: its error, not a crash of the study
            answer = {"error": str(getattr(exc, "code", type(exc).__name__))}
        with os.fdopen(write, "w", encoding="utf-8") as out:
            json.dump(answer, out, ensure_ascii=False)
        os._exit(0)
    os.close(write)
    with os.fdopen(read, encoding="utf-8") as pipe:
        payload = pipe.read()
    _pid, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        return {"error": signal.Signals(os.WTERMSIG(status)).name}
    return dict(json.loads(payload)) if payload else {"error": "no answer"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="folder of *.pdf files")
    parser.add_argument("--out", type=Path, help="one JSON line per file")
    parser.add_argument("--timeout", type=int, default=60, help="seconds per file")
    parser.add_argument("--at-least", type=int, default=20, help="list documents with this many left out")
    ns = parser.parse_args()
    from pdf_airlock.worker.warmup import warm_up

    warm_up()  # the zygote's warm-up: each forked child runs the job child's preloaded code
    files = sorted(p for p in ns.corpus.iterdir() if p.suffix.lower() == ".pdf" and p.is_file())
    out = ns.out.open("w", encoding="utf-8") if ns.out else None
    reasons: Counter[str] = Counter()
    chars: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    kept = documents = 0
    listed: list[tuple[int, str, list[dict[str, Any]]]] = []
    for path in files:
        answer = _one(path, ns.timeout)
        if out is not None:
            out.write(json.dumps({"file": path.name, **answer}, ensure_ascii=False) + "\n")
            out.flush()
        if "error" in answer:
            errors[answer["error"]] += 1
            continue
        runs = answer["runs"]
        kept += answer["kept"]
        documents += bool(runs)
        for run in runs:
            reasons[run["reason"]] += 1
            chars[run["reason"]] += len(run["text"])
        total = sum(len(run["text"]) for run in runs)
        if total >= ns.at_least:
            listed.append((total, path.name, runs))
    removed = sum(chars.values())
    command = shlex.join(["python", "-m", "bench.studies.withheld", *sys.argv[1:]])
    lines = [
        f"`{command}`: {len(files)} files, {len(files) - sum(errors.values())} read "
        f"(not read: {dict(errors) or 'none'}); {documents} with hidden runs; "
        f"{removed:,} characters left out of {kept + removed:,}",
        "",
        "| reason | runs | characters |",
        "|---|---:|---:|",
    ]
    lines += [f"| {reason} | {reasons[reason]} | {chars[reason]:,} |" for reason, _n in chars.most_common()]
    lines += ["", f"Documents with {ns.at_least} or more characters left out:", ""]
    for total, name, runs in sorted(listed, key=lambda item: (-item[0], item[1])):
        lines.append(f"- {name}: {total:,} chars in {len(runs)} runs")
        shown: Counter[str] = Counter()
        for run in runs:
            shown[run["reason"]] += 1
            if shown[run["reason"]] > _SHOWN_RUNS:
                continue
            box = ",".join(f"{value:.0f}" for value in run["box"])
            preview = " ".join(run["text"].split())[:_PREVIEW]
            lines.append(f"  - p{run['page']} {run['reason']} [{box}] {len(run['text'])}: {preview!r}")
        more = sum(max(n - _SHOWN_RUNS, 0) for n in shown.values())
        if more:
            lines.append(f"  - (and {more} more runs)")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
