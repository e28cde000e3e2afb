"""Page times after an idle spell, in process and in a forked child: ``python -m bench.studies.cold_page``.

    python -m bench.studies.cold_page text-10.pdf --runs 30 --pause 0.03

Each run sleeps ``--pause`` seconds, reads FILE page by page in this process, then forks a
child that (like an idle spare) parses the warm-up document, sleeps the same pause and reads
FILE page by page. Prints the medians of the open, the first page, the second page and the
later pages for both: whether a job child's slower first page comes from the fork or from
the idle spell that both share.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import time
from pathlib import Path

import pypdfium2 as pdfium

from bench.corpora.corpus import build
from pdf_airlock.worker.pdf.sample import tiny_pdf as _tiny_pdf

ROOT = Path(__file__).resolve().parents[2]


def page_times(data: bytes) -> list[float]:
    """Milliseconds: the open, then each page's text extraction."""
    started = time.perf_counter()
    document = pdfium.PdfDocument(data)
    times = [time.perf_counter() - started]
    for index in range(len(document)):
        started = time.perf_counter()
        page = document[index]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
        times.append(time.perf_counter() - started)
    document.close()
    return [value * 1000 for value in times]


def in_child(data: bytes, warm: bytes, pause: float) -> list[float]:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        page_times(warm)
        time.sleep(pause)
        os.write(write_fd, repr(page_times(data)).encode())
        os._exit(0)
    os.close(write_fd)
    output = b""
    while chunk := os.read(read_fd, 65536):
        output += chunk
    os.close(read_fd)
    os.waitpid(pid, 0)
    times: list[float] = ast.literal_eval(output.decode())
    return times


def summary(label: str, rows: list[list[float]]) -> str:
    columns = list(zip(*rows, strict=True))
    later = [value for column in columns[3:] for value in column]
    return (
        f"{label}: open {statistics.median(columns[0]):.2f} ms, page 1 {statistics.median(columns[1]):.2f}, "
        f"page 2 {statistics.median(columns[2]):.2f}, later pages {statistics.median(later):.2f}, "
        f"whole {statistics.median(sum(row) for row in rows):.2f} ms\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file", nargs="?", default="text-10.pdf")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--pause", type=float, default=0.03)
    ns = parser.parse_args()
    data = build()[ns.file].read_bytes()
    warm = _tiny_pdf()
    if len(page_times(data)) < 4:
        raise SystemExit("cold_page.py: FILE needs at least 3 pages")
    page_times(warm)
    here: list[list[float]] = []
    child: list[list[float]] = []
    for _ in range(ns.runs):
        time.sleep(ns.pause)
        here.append(page_times(data))
        child.append(in_child(data, warm, ns.pause))
    sys.stdout.write(summary("in process", here) + summary("forked child", child))


if __name__ == "__main__":
    main()
