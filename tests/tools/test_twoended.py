"""Two-ended reads: the merged answer is byte for byte the single child's, cursor included.

The comparisons run two application cores side by side on real pools (real zygotes, real sandboxed children,
real generated PDFs): two workers with one spare more than workers, which is what the two-ended path needs
(``pdf_airlock.server.tools.read_two_ended``), against one worker (always one child). The stdio tests drive
the real server as shipped.
"""

from __future__ import annotations

import hashlib
import json
import re
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pdfs
import psutil
import pytest
import structlog
from conftest import connect

from pdf_airlock.server.app.calls import App
from pdf_airlock.server.config import Settings
from pdf_airlock.server.pool.child_output import ProgressLines
from pdf_airlock.server.pool.pool import Pool
from pdf_airlock.server.tools.page_counts import SelectionMemo
from pdf_airlock.server.tools.read import PdfReadUntrusted
from pdf_airlock.server.tools.read_two_ended import MIN_TWO_ENDED_BYTES, _TwoEnded, two_ended_read

pytestmark = pytest.mark.anyio

PAGES = pdfs.prose_pages(16)
UNREADABLE = 6  # 0-based page PDFium cannot load in unreadable.pdf
COMBOS: list[tuple[int, str | None]] = [
    (2_000_000, None),
    (1000, None),
    (2500, "3-14"),
    (700, "2,9,4-6,16"),
    (3000, "12-"),
    (1178, None),  # exactly the first page: the budget ends on a page boundary
]
SMALL_COMBOS: list[tuple[int, str | None]] = [(2_000_000, None), (1000, None), (300, "3,1-2"), (500, "2-")]
LABEL_COMBOS: list[tuple[int, str | None]] = [(900, "ii-5"), (2_000_000, "i,3-4,ii"), (1500, "1-")]
SPARES_SETTLE_S = 10.0


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("twoended")
    pdfs.write(folder / "prose.pdf", pdfs.text_pdf(PAGES))
    pdfs.write(folder / "labelled.pdf", pdfs.labelled_pdf(PAGES))
    pdfs.write(folder / "unreadable.pdf", pdfs.unreadable_page_pdf(PAGES, UNREADABLE))
    pdfs.write(folder / "controls.pdf", pdfs.control_chars_pdf(PAGES))
    pdfs.write(folder / "small.pdf", pdfs.text_pdf(PAGES[:3]))
    pdfs.write(folder / "heavy.pdf", pdfs.heavy_first_page_pdf(PAGES[:12]))
    pdfs.write(folder / "heavy-2.pdf", pdfs.heavy_first_page_pdf(PAGES[:1]))  # two pages
    for name in ("prose.pdf", "labelled.pdf", "unreadable.pdf", "controls.pdf", "heavy-2.pdf"):
        assert (folder / name).stat().st_size >= MIN_TWO_ENDED_BYTES, name
    assert (folder / "small.pdf").stat().st_size < MIN_TWO_ENDED_BYTES
    return folder


@asynccontextmanager
async def apps(root: Path, queue_depth: int = 8, **settings: Any) -> AsyncIterator[tuple[App, App]]:
    """(two workers + 3 spares, one worker): the two-ended path and the single child."""
    async with Pool(2, queue_depth, 60, 1, spares=3) as two, Pool(1, 8, 60, 1) as one:
        yield (
            App(Settings(roots=(root,), workers=2, queue_depth=queue_depth, cache_bytes=0, **settings), two),
            App(Settings(roots=(root,), workers=1, cache_bytes=0, **settings), one),
        )


async def settled(app: App, spares: int = 3) -> App:
    """Once the zygote has refilled its spares (after a call it forks replacements)."""
    with anyio.fail_after(SPARES_SETTLE_S):
        while len(app.pool.idle_spares()) < spares:
            await anyio.sleep(0.005)
    return app


async def warm(app: App, name: str) -> None:
    """A first job, which makes the spares. ``pdf_outline`` reports no page count, so a read
    after it is a first read (``pdf_info``, ``pdf_search`` and ``pdf_render`` teach the
    selection memo the whole document's size)."""
    result = await app.call_tool("pdf_outline", {"path": name})
    assert not result.is_error


async def read_all(app: App, name: str, max_chars: int, pages: str | None, **extra: Any) -> list[Any]:
    """Every answer, cursor followed to the end (or to an error), exactly as a client gets it."""
    answers: list[Any] = []
    cursor = None
    while True:
        args: dict[str, Any] = {"path": name, "max_chars": max_chars, **extra}
        if pages:
            args["pages"] = pages
        if cursor:
            args["cursor"] = cursor
        if app.pool.workers > 1:
            await settled(app)
        result = await app.call_tool("pdf_read", args)
        answers.append(result.model_dump(mode="json"))
        cursor = None if result.is_error else result.structured_content["cursor"]
        if cursor is None:
            return answers


async def compare(
    two: App, one: App, name: str, combos: list[tuple[int, str | None]], **extra: Any
) -> tuple[list[str], int]:
    """Compares every answer; returns the error codes met (errors must match too) and how many
    calls took the two-ended path."""
    codes = []
    with structlog.testing.capture_logs() as logs:
        for max_chars, pages in combos:
            await warm(two, name)
            merged = await read_all(two, name, max_chars, pages, **extra)
            single = await read_all(one, name, max_chars, pages, **extra)
            assert merged == single, (name, max_chars, pages)
            codes += [
                answer["structured_content"]["error"]["code"] for answer in merged if answer["is_error"]
            ]
    return codes, sum(1 for log in logs if log["event"] == "two_ended_read")


@pytest.mark.parametrize("name", ["prose.pdf", "unreadable.pdf", "controls.pdf", "small.pdf"])
async def test_merged_answer_is_the_single_childs(root: Path, name: str) -> None:
    async with apps(root) as (two, one):
        codes, two_ended = await compare(two, one, name, SMALL_COMBOS if name == "small.pdf" else COMBOS)
        [whole] = await read_all(two, name, 2_000_000, None)
    # unreadable.pdf: PDFium counts 15 pages (the broken kid is not counted), so "16" is out of range
    assert codes == (["page_out_of_range"] if name == "unreadable.pdf" else [])
    assert two_ended == 0 if name == "small.pdf" else two_ended >= 10
    text = "".join(page["text"] for page in whole["structured_content"]["pages"])
    warnings = whole["structured_content"]["warnings"]
    if name == "unreadable.pdf":
        assert warnings == [f"page {UNREADABLE + 1} could not be loaded by PDFium; its text is empty"]
    elif name == "controls.pdf":
        assert warnings == ["removed 24 control/invisible character(s) from the text"]
        assert "\u202e" not in text and "\x07" not in text and "xy" in text
    else:
        assert warnings == []
        assert text.count("end ") == (15 if name == "prose.pdf" else 3)  # page 4 is empty


async def test_label_and_list_selections(root: Path) -> None:
    async with apps(root) as (two, one):
        codes, two_ended = await compare(two, one, "labelled.pdf", [*LABEL_COMBOS, COMBOS[3]])
        [first] = await read_all(two, "labelled.pdf", 2_000_000, "ii-5")
    assert codes == [] and two_ended >= 4
    assert [page["page"] for page in first["structured_content"]["pages"]] == [2, 3, 4, 5, 6, 7]


async def test_layout_engine(root: Path) -> None:
    async with apps(root) as (two, one):
        codes, two_ended = await compare(
            two, one, "prose.pdf", [(2_000_000, None), (1500, "2-9")], engine="layout"
        )
    assert codes == [] and two_ended >= 2


async def test_result_cap_is_judged_on_the_whole_answer(root: Path) -> None:
    """Over the cap, the merged answer fails exactly as one child's envelope does, even where
    each child's stream alone fits; under it, both answer."""
    async with apps(root, max_result_bytes=8000) as (two, one):
        codes, two_ended = await compare(two, one, "prose.pdf", [(2_000_000, None), (6000, None)])
    # The whole read may also end on the single child: when the backward child starts late, the
    # forward child's own stream passes the cap first and the answer is the single child's (the
    # same error either way, which ``compare`` checks). At least one of the two reads merges.
    assert codes == ["output_limit"] and two_ended >= 1


async def test_progress_is_monotonic_and_reaches_the_selection(root: Path) -> None:
    updates: list[tuple[int, int]] = []

    async def on_progress(done: int, total: int) -> None:
        updates.append((done, total))

    async with apps(root) as (two, _):
        await warm(two, "prose.pdf")
        with structlog.testing.capture_logs() as logs:
            for _ in range(3):
                updates.clear()
                result = await (await settled(two)).call_tool(
                    "pdf_read", {"path": "prose.pdf"}, progress=on_progress
                )
                assert result.is_error is False
                assert updates == [(n, 16) for n in range(1, 17)]
            updates.clear()
            args = {"path": "prose.pdf", "max_chars": 3000}
            cut = await (await settled(two)).call_tool("pdf_read", args, progress=on_progress)
    assert sum(1 for log in logs if log["event"] == "two_ended_read") == 4
    assert cut.is_error is False and cut.structured_content["cursor"] is not None
    done = [progress for progress, _ in updates]
    assert done == sorted(set(done)) and all(total == 16 for _, total in updates)


async def test_concurrent_reads_never_overload(root: Path) -> None:
    """8 calls on 2 workers with room for 9: a backward child is only started on a free slot
    (at most workers - 1 of them while nothing queues), so none of the 8 is refused."""
    names = ["prose.pdf", "labelled.pdf", "controls.pdf", "unreadable.pdf"] * 2
    async with apps(root, queue_depth=7) as (two, one):
        expected = [(await one.call_tool("pdf_read", {"path": name})).model_dump() for name in names]
        await warm(two, "prose.pdf")
        results: dict[int, Any] = {}
        for _ in range(3):
            results.clear()
            await settled(two)
            async with anyio.create_task_group() as tg:
                for number, name in enumerate(names):

                    async def call(number: int = number, name: str = name) -> None:
                        results[number] = (await two.call_tool("pdf_read", {"path": name})).model_dump()

                    tg.start_soon(call)
            assert [results[number] for number in range(len(names))] == expected


async def test_backward_child_supplies_the_pages_after_a_slow_first_one(root: Path) -> None:
    """Page 1 takes PDFium tens of milliseconds, pages 2-13 about one each: the backward child
    reads pages 13 down to 2 before the forward child is done with page 1, and the answer (the
    same as one job's) takes them from it."""
    args = {"pages": None, "password": None, "engine": "fast", "max_chars": 2_000_000}
    async with apps(root) as (two, _):
        await warm(two, "heavy.pdf")
        document = two.policy.open_path("heavy.pdf")
        try:
            with structlog.testing.capture_logs() as logs:
                merged = await two_ended_read(
                    await settled(two), args, document, PdfReadUntrusted, "pdf_read"
                )
            single = await two.run_job("pdf_read", args, document, PdfReadUntrusted)
        finally:
            document.close()
    assert merged == single
    [event] = [log for log in logs if log["event"] == "two_ended_read"]
    assert event["positions"] == event["answered"] == 13
    assert event["backward_started"] and event["from_backward"] >= 6, event


async def test_a_known_selection_starts_both_children_at_once(root: Path) -> None:
    """The first read of a document learns its selection's size from the forward child; a later
    read of the same bytes and selection starts the backward child with the forward one (it does
    not wait for the selection line), and the answers are still the single child's. Another
    selection of the same document is not known yet."""
    async with apps(root) as (two, one):
        await warm(two, "prose.pdf")
        with structlog.testing.capture_logs() as logs:
            for pages in (None, None, "2-"):
                await settled(two)
                merged = await two.call_tool("pdf_read", {"path": "prose.pdf", "pages": pages})
                single = await one.call_tool("pdf_read", {"path": "prose.pdf", "pages": pages})
                assert merged.model_dump() == single.model_dump()
    reads = [log for log in logs if log["event"] == "two_ended_read"]
    assert [(read["selection_known"], read["backward_started"]) for read in reads] == [
        (False, True),
        (True, True),
        (False, True),
    ]
    sha256 = merged.structured_content["sha256"]
    assert two.selections.get((sha256, "fast", None)) == len(PAGES)
    assert two.selections.get((sha256, "fast", "2-")) == len(PAGES) - 1


async def test_a_known_short_selection_reads_with_one_child(root: Path) -> None:
    """heavy-2.pdf is over the two-ended size but has two pages: the first read finds that out
    with one child (the backward one never starts), and later reads skip the two-ended path."""
    async with apps(root) as (two, one):
        await warm(two, "heavy-2.pdf")
        with structlog.testing.capture_logs() as logs:
            for _ in range(2):
                await settled(two)
                merged = await two.call_tool("pdf_read", {"path": "heavy-2.pdf"})
                single = await one.call_tool("pdf_read", {"path": "heavy-2.pdf"})
                assert merged.model_dump() == single.model_dump()
    reads = [log for log in logs if log["event"] == "two_ended_read"]
    assert [(read["selection_known"], read["backward_started"]) for read in reads] == [(False, False)]
    [call] = [log for log in logs if log["event"] == "tool_call" and log["tool"] == "pdf_read"][-1:]
    assert len(call["job_ids"]) == 1, call


async def test_info_search_and_render_teach_the_whole_documents_size(root: Path) -> None:
    """``pdf_info``, ``pdf_search`` and ``pdf_render`` report PDFium's page count, the size of a
    whole-document read's selection, for both engines: the first read after one of them starts
    both children at once (and reads a two-page document with one child), and its answer is
    still the single child's. A selection of some pages is not known from them."""
    teachers = [
        ("pdf_info", "prose.pdf", {}),
        ("pdf_search", "labelled.pdf", {"query": "end"}),
        ("pdf_render", "controls.pdf", {"page": 1, "dpi": 20}),
    ]
    async with apps(root) as (two, one):
        await warm(two, "small.pdf")
        with structlog.testing.capture_logs() as logs:
            for tool, name, extra in teachers:
                taught = await two.call_tool(tool, {"path": name, **extra})
                sha256 = taught.structured_content["sha256"]
                assert two.selections.get((sha256, "layout", None)) == taught.structured_content["page_count"]
                for pages in (None, "2-"):
                    await settled(two)
                    merged = await two.call_tool("pdf_read", {"path": name, "pages": pages})
                    single = await one.call_tool("pdf_read", {"path": name, "pages": pages})
                    assert merged.model_dump() == single.model_dump()
            await two.call_tool("pdf_info", {"path": "heavy-2.pdf"})
            await settled(two)
            await two.call_tool("pdf_read", {"path": "heavy-2.pdf"})
    reads = [log for log in logs if log["event"] == "two_ended_read"]
    assert [(read["selection_known"], read["backward_started"]) for read in reads] == [
        (True, True),
        (False, True),
    ] * len(teachers)
    [call] = [log for log in logs if log["event"] == "tool_call" and log["tool"] == "pdf_read"][-1:]
    assert len(call["job_ids"]) == 1, call  # heavy-2.pdf: two pages, known, one child


def test_selection_memo_is_bounded_least_recently_used_first() -> None:
    memo = SelectionMemo(entries=2)
    memo.put(("a", "fast", None), 3)
    memo.put(("b", "fast", None), 4)
    assert memo.get(("a", "fast", None)) == 3  # now the most recently used
    memo.put(("c", "fast", "2-"), 5)
    assert len(memo) == 2 and memo.get(("b", "fast", None)) is None
    assert (memo.get(("a", "fast", None)), memo.get(("c", "fast", "2-"))) == (3, 5)
    off = SelectionMemo(entries=0)
    off.put(("a", "fast", None), 3)
    assert len(off) == 0 and off.get(("a", "fast", None)) is None


def test_a_full_selection_memo_stays_small() -> None:
    """The default memo full of the longest selectors the input schema admits (1,000 characters)
    takes under 2 MB (1.4 MB when written); with short ones, about 310 KB."""
    memo = SelectionMemo()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for number in range(2 * memo.entries):  # the second half replaces the first
            selector = f"{number}-" + ",1" * 499
            memo.put((hashlib.sha256(str(number).encode()).hexdigest(), "layout", selector[:1000]), number)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(memo) == memo.entries == 1024
    assert grown < 2 * 1024 * 1024, grown


async def test_every_child_of_a_two_ended_read_is_audited(root: Path) -> None:
    """The call's audit event lists both children, and each one's exit report (CPU, peak memory)
    is logged under its id, though the answer was complete before either child had exited. The
    children's tasks unwind after the answer, and the call's event waits for them: it counts
    both jobs, the abandoned ones too."""
    async with apps(root) as (two, _):
        await warm(two, "heavy.pdf")
        with structlog.testing.capture_logs() as logs:
            result = await (await settled(two)).call_tool("pdf_read", {"path": "heavy.pdf"})
            for _ in range(1000):
                calls = [log for log in logs if log["event"] == "tool_call"]
                exits = {log["job"]: log for log in logs if log["event"] == "job_exit"}
                if calls and set(calls[0]["job_ids"]) <= set(exits):
                    break
                await anyio.sleep(0.01)
            [call] = calls
    assert not result.is_error
    [read] = [log for log in logs if log["event"] == "two_ended_read"]
    assert read["backward_started"] and len(call["job_ids"]) == 2, (read, call)
    for job in call["job_ids"]:
        assert exits[job]["job_cpu_s"] > 0 and exits[job]["job_peak_rss_kb"] > 0, exits[job]
    # Both were killed once the answer was complete, or one finished first; none is a failure.
    assert all(exits[job].get("abandoned") or exits[job]["exit"] == "exit 0" for job in call["job_ids"])
    assert call.get("jobs_cancelled", 0) + call.get("jobs", 0) == 2


async def test_stop_before_abandoned_children_reported_is_no_lost_job(root: Path) -> None:
    """Children killed once the answer was complete are not failed jobs if the pool stops before
    their exit reports come: no ``zygote_lost`` warning. The zygote is stopped (SIGSTOP) for the
    call, so no report can come; the jobs go straight to the spares the supervisor holds."""
    with structlog.testing.capture_logs() as logs:
        async with apps(root) as (two, _):
            await warm(two, "heavy.pdf")
            await settled(two)
            zygotes = [
                p for p in psutil.Process().children() if "pdf_airlock.worker.zygote" in " ".join(p.cmdline())
            ]
            for zygote in zygotes:
                zygote.suspend()
            result = await two.call_tool("pdf_read", {"path": "heavy.pdf"})
    assert not result.is_error
    [call] = [log for log in logs if log["event"] == "tool_call" and log["tool"] == "pdf_read"]
    # Both children were handed a job; at least one was killed unanswered (the forward one may
    # have finished its envelope first). No exit report came for either.
    assert len(call["job_ids"]) == 2 and call["jobs_cancelled"] >= 1, call
    assert [log for log in logs if log["event"] == "job_exit" and log["job"] in call["job_ids"]] == []
    assert [log for log in logs if log["event"] == "zygote_lost"] == []


async def test_backward_stream_lines(root: Path) -> None:
    """The backward child streams whole pages from the last position down to position 1."""
    args = {"max_chars": 100, "start_index": 1, "stream": "backward"}
    async with apps(root) as (two, _):
        document = two.policy.open_path("prose.pdf")
        lines: list[bytes] = []
        try:
            streamed, _ = await two.run_job(
                "pdf_read", args, document, PdfReadUntrusted, on_line=lines.append
            )
        finally:
            document.close()
    assert streamed.pages == [] and streamed.warnings == [] and streamed.next is None
    decoded = [json.loads(line) for line in lines]
    assert decoded[0] == {"selection": {"page_count": 16, "selected_pages": 16}}
    assert [line["page"]["position"] for line in decoded[1:]] == list(range(14, 0, -1))
    assert [line["page"]["page"] for line in decoded[1:]] == list(range(16, 2, -1))
    assert all(line["page"]["complete"] and line["page"]["offset"] == 0 for line in decoded[1:])
    assert len(decoded[1]["page"]["text"]) == len(PAGES[15])  # whole pages: max_chars is ignored


def unsigned(answer: dict[str, Any]) -> str:
    """An answer with its cursor's tag blanked: each server signs with its own key."""
    return re.sub(r"(eyJ[A-Za-z0-9_-]+)\.[A-Za-z0-9_-]{22}", r"\1.TAG", json.dumps(answer, sort_keys=True))


async def test_default_server_over_stdio(root: Path) -> None:
    """The shipped server, two workers against one, over real stdio: the same answers, and 8
    concurrent multi-page reads on 2 workers with room for 9 are never refused."""
    async with (
        connect(root, "--workers", "2", "--queue-depth", "7", "--cache-mb", "0") as two,
        connect(root, "--workers", "1", "--cache-mb", "0") as one,
    ):
        for max_chars, pages in COMBOS[:3]:
            args = {"path": "controls.pdf", "max_chars": max_chars, **({"pages": pages} if pages else {})}
            merged, single = await two.call_tool("pdf_read", args), await one.call_tool("pdf_read", args)
            assert unsigned(merged.model_dump()) == unsigned(single.model_dump())
        results: list[Any] = []
        async with anyio.create_task_group() as tg:
            for name in ["prose.pdf", "labelled.pdf", "controls.pdf", "unreadable.pdf"] * 2:

                async def call(name: str = name) -> None:
                    results.append(await two.call_tool("pdf_read", {"path": name}))

                tg.start_soon(call)
    assert [result.is_error for result in results] == [False] * 8


async def test_line_parser_at_every_chunk_boundary() -> None:
    """Progress, selection and page lines come out whole however the pipe cuts them; the
    envelope stays in the buffer; a line parser without a line callback stops at the first page."""
    lines = [
        b'{"progress":1,"total":2}',
        b'{"selection":{"page_count":2,"selected_pages":2}}',
        b'{"page":{"position":0,"text":"a\\nb' + b"x" * 300 + b'"}}',
        b'{"progress":2,"total":2}',
    ]
    envelope = b'{"ok":true,"result":{}}'
    stream = b"".join(line + b"\n" for line in lines) + envelope
    for cut in range(1, len(stream)):
        seen: list[bytes] = []
        progress: list[tuple[int, int]] = []

        async def on_progress(done: int, total: int, log: list[tuple[int, int]] = progress) -> None:
            log.append((done, total))

        parser = ProgressLines(on_progress, seen.append)
        buffer = bytearray()
        for chunk in (stream[:cut], stream[cut:]):
            buffer += chunk
            await parser.consume(buffer)
        assert (seen, progress, bytes(buffer)) == ([lines[1], lines[2]], [(1, 2), (2, 2)], envelope), cut
    plain = ProgressLines(None)
    buffer = bytearray(stream)
    await plain.consume(buffer)
    assert bytes(buffer).startswith(b'{"selection"') and not plain.active


def _line(kind: str, **value: Any) -> bytes:
    return json.dumps({kind: value}).encode()


def _page(position: int, text: str, **extra: Any) -> bytes:
    fields = {
        "position": position,
        "page": position + 1,
        "text": text,
        "offset": 0,
        "complete": True,
        "text_layer": "ok",
        "text_source": "text_layer",
        "ocr_confidence": None,
    }
    return _line("page", **(fields | {"warnings": []} | extra))


async def test_hostile_lines_are_ignored_and_the_forward_stream_decides() -> None:
    """Backward lines that break the protocol or disagree on the selection are ignored."""
    args = {"max_chars": 100, "start_index": 0, "start_offset": 0, "engine": "fast"}
    read = _TwoEnded(args, PdfReadUntrusted, "pdf_read")
    forward, backward = read.forward, read.backward
    read.on_line(backward, _line("selection", page_count=5, selected_pages=4))  # disagrees
    read.on_line(backward, _page(3, "x" * 10))
    assert not backward.rejected and backward.pages
    read.on_line(forward, _line("selection", page_count=4, selected_pages=4))
    assert backward.rejected and not backward.pages
    read.on_line(forward, _page(0, "first"))
    read.on_line(forward, b'{"page": {"position": 1, "page": 2, "text": "a", "offset": 0}}')  # no keys
    assert forward.rejected and read.placed == 1 and not read.done

    read = _TwoEnded(args, PdfReadUntrusted, "pdf_read")
    forward, backward = read.forward, read.backward
    for stream in (forward, backward):
        read.on_line(stream, _line("selection", page_count=4, selected_pages=4))
    read.on_line(backward, _page(3, "last"))
    read.on_line(backward, _page(1, "skipped 2"))  # out of order: rejected, pages so far dropped
    assert backward.rejected and not backward.pages
    read.on_line(forward, _page(0, "one", offset=7))  # offset the protocol does not allow
    assert forward.rejected and read.placed == 0

    read = _TwoEnded(args | {"max_chars": 12}, PdfReadUntrusted, "pdf_read")
    forward, backward = read.forward, read.backward
    for stream in (forward, backward):
        read.on_line(stream, _line("selection", page_count=4, selected_pages=4))
    read.on_line(backward, _page(3, "dddd"))
    read.on_line(backward, _page(2, "cccc"))
    read.on_line(backward, _page(1, "bbbbbbbbbb"))
    read.on_line(forward, _page(0, "aaaa"))
    assert read.done and read.next == {"index": 1, "offset": 8}
    assert read.pages[-1] == {
        "page": 2,
        "text": "bbbbbbbb",
        "offset": 0,
        "complete": False,
        "text_layer": "ok",
        "text_source": "text_layer",
        "ocr_confidence": None,
        "hidden": [],
    }


_TAIL = (
    b'"offset": 0, "complete": true, "text_layer": "ok", "text_source": "text_layer", '
    b'"ocr_confidence": null, "warnings": []}}'
)


@pytest.mark.parametrize(
    "line",
    [
        b'{"page": {"position": 3, "page": 4, "text": "\xff", ' + _TAIL,
        b'{"page": {"position": 3, "page": 4, "text": "a\\ud800", ' + _TAIL,
        b'{"page": {"position": NaN, "page": 4, "text": "d", ' + _TAIL,
        b'{"page": {"position": 3, "page": 4, "text": "d", ' + _TAIL[:-1],
    ],
    ids=["bad-utf8", "lone-surrogate-escape", "nan", "truncated"],
)
async def test_unreadable_line_rejects_its_stream(line: bytes) -> None:
    """A line the child never writes (its lines are UTF-8 JSON with no surrogate escapes and no
    NaN) rejects its stream, and the forward child then supplies every page."""
    read = _TwoEnded(
        {"max_chars": 100, "start_index": 0, "start_offset": 0, "engine": "fast"},
        PdfReadUntrusted,
        "pdf_read",
    )
    for stream in (read.forward, read.backward):
        read.on_line(stream, _line("selection", page_count=4, selected_pages=4))
    read.on_line(read.backward, line)
    assert read.backward.rejected and not read.backward.pages
    for position in range(4):
        read.on_line(read.forward, _page(position, str(position)))
    assert read.done and [page["text"] for page in read.pages] == ["0", "1", "2", "3"]


async def test_backward_child_restarts_where_max_chars_runs_out(tmp_path: Path) -> None:
    """A long document and a budget of a few pages: reading from the last page would be wasted,
    so the backward child is restarted just past where max_chars should run out, and the
    answer (cursors followed to the end) is still the single child's."""
    pages = [
        f"Page {n}\n" + "\n".join(["steady words per page " * 4] * 10) + f"\nend {n}" for n in range(1, 121)
    ]
    pdfs.write(tmp_path / "long.pdf", pdfs.text_pdf(pages))
    async with apps(tmp_path) as (two, one):
        with structlog.testing.capture_logs() as logs:
            await warm(two, "long.pdf")
            merged = await read_all(two, "long.pdf", 20_000, None)
        single = await read_all(one, "long.pdf", 20_000, None)
    assert merged == single and len(merged) >= 5
    restarts = [log for log in logs if log["event"] == "backward_read_restarted"]
    reads = [log for log in logs if log["event"] == "two_ended_read"]
    assert restarts and all(log["top"] < log["todo"] - 1 for log in restarts)
    assert any(log["from_backward"] > 0 for log in reads)  # the restarted child's pages were used
    text = "".join(page["text"] for answer in merged for page in answer["structured_content"]["pages"])
    assert text.count("end ") == 120


async def test_the_next_part_right_after_an_answer_reads_from_both_ends(root: Path) -> None:
    """A caller that asks for the next part as soon as it has an answer (``batch``, a script
    on ``App``) finds the read before's cancelled children still holding their worker slots:
    they give them back on their next turn, so the read waits one round of the event loop
    before it judges, and every part with 3 positions or more left is read from both ends."""
    async with apps(root) as (two, _one):
        await warm(two, "prose.pdf")
        await settled(two)
        answers: list[dict[str, Any]] = []
        with structlog.testing.capture_logs() as logs:
            cursor = None
            while not answers or cursor:
                arguments = {"path": "prose.pdf", "max_chars": 1500} | ({"cursor": cursor} if cursor else {})
                result = await two.call_tool("pdf_read", arguments)  # no settling in between
                assert result.structured_content is not None and not result.is_error
                answers.append(result.structured_content)
                cursor = result.structured_content["cursor"]
    left = [len(PAGES) - (answer["pages"][0]["page"] - 1) for answer in answers]
    both_ends = sum(1 for positions in left if positions >= 3)  # fewer: one child, known to suffice
    assert both_ends >= 4
    assert sum(1 for log in logs if log["event"] == "two_ended_read") == both_ends
    assert "".join(page["text"] for answer in answers for page in answer["pages"]) == "".join(PAGES)
