"""A spare keeps a faulted-in heap for its job: the job's own heap growth costs no page faults.

Measured in a fresh interpreter warmed as the zygote is, in two forked children that differ only
in ``pdf_airlock.worker.child._keep_heap``: each runs the spare's warm-up parse, then reads a one-page
document and reports the minor page faults that read took (``getrusage``). Without the kept
heap, glibc has trimmed the warm-up's memory and the read faults its heap in again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.pdfs import prose_pages, text_pdf

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, os, resource, sys
from pdf_airlock.worker.warmup import warm_up
warm_up()
from pdf_airlock.worker import child
from pdf_airlock.worker.parsers import get_parser
from pdf_airlock.worker.contract import Limits
from pdf_airlock.worker.zygote import warm_pdf

warm, data = warm_pdf(), open(sys.argv[1], "rb").read()
limits = Limits(memory_bytes=1 << 30, cpu_seconds=10, max_input_bytes=1 << 26, max_result_bytes=1 << 26)

def read_faults(keep):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        kept = child._keep_heap(child._HEAP_KEPT) if keep else False
        child._warm_up(warm, limits)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        chars = sum(len(p["text"]) for p in get_parser("pdf_read")(data, {"max_chars": 10**6})["pages"])
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        os.write(w, json.dumps({"kept": kept, "faults": faults, "chars": chars}).encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 4096)
    os.waitpid(pid, 0)
    return json.loads(out)

sys.stdout.write(json.dumps({"plain": read_faults(False), "kept": read_faults(True)}))
"""


def test_a_read_after_the_kept_heap_takes_far_fewer_page_faults(tmp_path: Path) -> None:
    lines = [line for page in prose_pages(12) for line in page.split("\n") if line][:48]
    document = tmp_path / "one-page.pdf"
    document.write_bytes(text_pdf(["\n".join(lines)]))  # a full page, about 2,200 characters
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, str(document)], cwd=ROOT, capture_output=True, timeout=120, check=True
    )
    report = json.loads(done.stdout)
    plain, kept = report["plain"], report["kept"]
    assert kept["kept"] is True and plain["kept"] is False
    assert kept["chars"] == plain["chars"] > 2000
    # About 115 against 45-60 here: the heap growth is gone.
    assert kept["faults"] < plain["faults"] - 40, report
