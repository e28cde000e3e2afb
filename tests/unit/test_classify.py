"""Judging a finished job, in process: exit statuses and untrusted output become exactly one
result or one error code (server/pdf_airlock/server/pool/verdict.py), and the child's envelope, exit summary
and progress lines are read as untrusted bytes (server/pdf_airlock/server/pool/child_output.py).

The statuses are built as ``waitpid`` reports them, so every branch runs without forking a
child; tests/sandbox/test_pool.py and tests/sandbox/test_faults.py drive the same code with real children.
"""

from __future__ import annotations

import json
import signal
from typing import Any

import anyio
import pytest

from pdf_airlock.server.errors import ToolError
from pdf_airlock.server.pool.child_output import JobOutcome, ProgressLines, complete_envelope, exit_summary
from pdf_airlock.server.pool.verdict import classify

BUDGET = 1000 * 1024 * 1024  # the job's memory budget (RLIMIT_AS), bytes
NEAR_KB = 450 * 1024  # peak RSS exactly 0.45 x BUDGET, in kB as rusage reports it
ZYGOTE_KB = 460 * 1024  # what a forked child inherits resident: the zygote's warm memory, kB
DEADLINE_S = 2.5
UNNAMED_SIGNAL = 32  # glibc keeps it for threads: no name in signal.Signals
RESULT = {"pages": [{"page": 1, "text": "ok"}]}
ENVELOPE = json.dumps({"ok": True, "result": RESULT}).encode()


def signalled(sig: int) -> int:
    """A ``waitpid`` status of a child killed by ``sig``."""
    return sig


def exited(code: int) -> int:
    """A ``waitpid`` status of a child that called ``_exit(code)``."""
    return code << 8


def stopped(sig: int) -> int:
    """A ``waitpid`` status of a stopped child: neither exited nor signalled."""
    return (sig << 8) | 0x7F


def outcome(
    status: int | None = 0,
    *,
    output: bytes = ENVELOPE,
    peak_kb: int | None = None,
    base_kb: int | None = None,
    **flags: Any,
) -> JobOutcome:
    rusage = {} if peak_kb is None else {"maxrss_kb": float(peak_kb), "cpu_s": 0.5}
    if base_kb is not None:
        rusage["base_rss_kb"] = float(base_kb)
    return JobOutcome(
        untrusted_output=output,
        output_overflow=flags.pop("output_overflow", False),
        status=status,
        deadline_hit=flags.pop("deadline_hit", False),
        killed=flags.pop("killed", False),
        wall_ms=12.0,
        rusage=rusage,
        **flags,
    )


def refusal(job: JobOutcome) -> tuple[str, str, dict[str, Any]]:
    with pytest.raises(ToolError) as caught:
        classify(job, BUDGET, DEADLINE_S)
    return caught.value.code, caught.value.message, caught.value.details


def test_a_clean_exit_with_a_good_envelope_is_the_result() -> None:
    assert classify(outcome(), BUDGET, DEADLINE_S) == RESULT


def test_an_envelope_taken_before_the_reap_is_judged_alone() -> None:
    """``status`` None: the envelope parsed by the pool is the answer; the raw output is not
    parsed again (here it is garbage on purpose)."""
    job = outcome(status=None, output=b"\xff not json", untrusted_envelope={"ok": True, "result": RESULT})
    assert classify(job, BUDGET, DEADLINE_S) == RESULT


@pytest.mark.parametrize(
    ("flags", "code", "message"),
    [
        (
            {"output_overflow": True, "killed": True, "deadline_hit": True},
            "output_limit",
            "the result exceeded the result-size cap; select fewer pages",
        ),
        ({"killed": True, "deadline_hit": True}, "cancelled", "the call was cancelled"),
        ({"deadline_hit": True}, "timeout", "the parse did not finish within 2.5 s (--timeout)"),
    ],
)
def test_what_the_supervisor_did_wins_over_the_exit_status(
    flags: dict[str, Any], code: str, message: str
) -> None:
    """The supervisor killed the child for a reason: that reason is the code, whatever the
    child's status (SIGKILL near the budget would otherwise read as memory_limit) or output."""
    assert refusal(outcome(signalled(signal.SIGKILL), peak_kb=NEAR_KB, **flags)) == (code, message, {})


def test_a_whole_number_deadline_is_shown_without_decimals() -> None:
    with pytest.raises(ToolError) as caught:
        classify(outcome(deadline_hit=True), BUDGET, 30.0)
    assert caught.value.message == "the parse did not finish within 30 s (--timeout)"


@pytest.mark.parametrize(
    ("sig", "code", "message"),
    [
        (signal.SIGXCPU, "cpu_limit", "the parse used up its CPU-time budget"),
        (signal.SIGSYS, "sandbox_violation", "the parser attempted a forbidden system call"),
    ],
)
def test_cpu_and_seccomp_signals(sig: signal.Signals, code: str, message: str) -> None:
    """Whatever the memory peak: SIGXCPU is the CPU rlimit, SIGSYS the seccomp filter."""
    details = {"signal": sig.name, "peak_rss_bytes": NEAR_KB * 1024}
    assert refusal(outcome(signalled(sig), peak_kb=NEAR_KB)) == (code, message, details)


MEMORY_SIGNALS = [
    signal.SIGABRT,
    signal.SIGSEGV,
    signal.SIGBUS,
    signal.SIGILL,
    signal.SIGTRAP,
    signal.SIGKILL,
]


@pytest.mark.parametrize("sig", MEMORY_SIGNALS, ids=lambda sig: sig.name)
def test_an_abort_like_death_near_the_budget_is_memory_limit(sig: signal.Signals) -> None:
    details = {"signal": sig.name, "peak_rss_bytes": NEAR_KB * 1024}
    assert refusal(outcome(signalled(sig), peak_kb=NEAR_KB)) == (
        "memory_limit",
        "the parse exhausted its memory budget",
        details,
    )


@pytest.mark.parametrize("sig", MEMORY_SIGNALS, ids=lambda sig: sig.name)
def test_the_same_death_below_the_threshold_is_a_crash(sig: signal.Signals) -> None:
    details = {"signal": sig.name, "peak_rss_bytes": (NEAR_KB - 1) * 1024}
    assert refusal(outcome(signalled(sig), peak_kb=NEAR_KB - 1)) == (
        "crashed",
        f"the parser crashed ({sig.name})",
        details,
    )


@pytest.mark.parametrize("sig", MEMORY_SIGNALS, ids=lambda sig: sig.name)
def test_what_the_child_inherited_from_the_zygote_is_not_held_against_the_budget(sig: signal.Signals) -> None:
    """The regression: a child killed mid-parse started with the zygote's warm memory (the OCR
    models: more than 0.45 of the budget), and its peak alone read as memory exhaustion. Only
    what it made resident itself counts, in both directions."""
    below, near = ZYGOTE_KB + NEAR_KB - 1, ZYGOTE_KB + NEAR_KB
    assert refusal(outcome(signalled(sig), peak_kb=below, base_kb=ZYGOTE_KB)) == (
        "crashed",
        f"the parser crashed ({sig.name})",
        {"signal": sig.name, "peak_rss_bytes": below * 1024},
    )
    assert refusal(outcome(signalled(sig), peak_kb=near, base_kb=ZYGOTE_KB)) == (
        "memory_limit",
        "the parse exhausted its memory budget",
        {"signal": sig.name, "peak_rss_bytes": near * 1024},
    )


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGPIPE], ids=lambda sig: sig.name)
def test_other_signals_are_crashes_even_near_the_budget(sig: signal.Signals) -> None:
    details = {"signal": sig.name, "peak_rss_bytes": NEAR_KB * 1024}
    assert refusal(outcome(signalled(sig), peak_kb=NEAR_KB)) == (
        "crashed",
        f"the parser crashed ({sig.name})",
        details,
    )


def test_an_unnamed_signal_and_no_rusage() -> None:
    """A signal Python has no name for is shown by number; with no rusage the peak is 0."""
    assert refusal(outcome(signalled(UNNAMED_SIGNAL))) == (
        "crashed",
        "the parser crashed (32)",
        {"signal": "32", "peak_rss_bytes": 0},
    )


@pytest.mark.parametrize(
    ("status", "code", "message", "details"),
    [
        (exited(71), "internal", "the sandbox could not be set up for this job", {}),
        (exited(1), "crashed", "the parser exited with status 1", {"exit_status": 1}),
        (exited(70), "crashed", "the parser exited with status 70", {"exit_status": 70}),
        (exited(72), "crashed", "the parser exited with status 72", {"exit_status": 72}),
        (stopped(signal.SIGSTOP), "crashed", "the parser exited with status -1", {"exit_status": -1}),
    ],
)
def test_a_non_zero_exit(status: int, code: str, message: str, details: dict[str, int]) -> None:
    """Only exit 71 (the job child's "sandbox set-up failed") is the supervisor's own problem;
    any other non-zero exit, even with a good envelope written first, is a crash."""
    assert refusal(outcome(status)) == (code, message, details)


@pytest.mark.parametrize(
    ("output", "message"),
    [
        (b"", "the job child returned unreadable output"),
        (b'{"ok": true, "result": {', "the job child returned unreadable output"),
        (b'{"ok": true, "result": {"text": "\xff"}}', "the job child returned unreadable output"),
        (b'{"ok": true, "result": ' + b"[" * 100_000 + b"}", "the job child returned unreadable output"),
        (b"[]", "the job child returned a malformed envelope"),
        (b'"ok"', "the job child returned a malformed envelope"),
        (b'{"result": {}}', "the job child returned a malformed envelope"),
        (b'{"ok": 1, "result": {}}', "the job child returned a malformed envelope"),
        (b'{"ok": "true", "result": {}}', "the job child returned a malformed envelope"),
        (b'{"ok": true}', "the job child returned no result"),
        (b'{"ok": true, "result": [1]}', "the job child returned no result"),
        (b'{"ok": true, "result": null}', "the job child returned no result"),
    ],
)
def test_a_clean_exit_with_bad_output_is_a_crash(output: bytes, message: str) -> None:
    assert refusal(outcome(output=output)) == ("crashed", message, {})


def test_an_error_envelope_keeps_a_known_code() -> None:
    error = {"code": "encrypted", "message": "a password is needed", "details": {"revision": 6}}
    output = json.dumps({"ok": False, "error": error}).encode()
    assert refusal(outcome(output=output)) == ("encrypted", "a password is needed", {"revision": 6})


def test_an_error_envelope_with_an_unknown_code_is_internal() -> None:
    output = json.dumps({"ok": False, "error": {"code": "rm -rf", "message": "x"}}).encode()
    assert refusal(outcome(output=output))[0] == "internal"


# server/pdf_airlock/server/pool/child_output.py


@pytest.mark.parametrize(
    ("untrusted", "complete"),
    [
        (b'{"ok": true, "result": {}}', True),
        (b'{"ok": false, "error": {}}', True),
        (b"", False),
        (b"}", False),
        (b'{"ok": true, "result": {}', False),
        (b'{"ok": true, "result": {}}\n', False),
        (b'[{"ok": true}]', False),
        (b'{"ok": 1}', False),
        (b'{"ok": null}', False),
        (b'{"result": {}}', False),
        (b'{"ok": true, "x": "\xff"}', False),
        (b'{"ok": ' + b"[" * 100_000 + b"}", False),
    ],
)
def test_complete_envelope(untrusted: bytes, complete: bool) -> None:
    """Only one whole JSON object with a boolean ``ok`` counts as done."""
    expected = json.loads(untrusted) if complete else None
    assert complete_envelope(untrusted) == expected


@pytest.mark.parametrize(
    ("status", "summary"),
    [
        (exited(0), "exit 0"),
        (exited(71), "exit 71"),
        (signalled(signal.SIGKILL), "SIGKILL"),
        (signalled(signal.SIGSYS), "SIGSYS"),
        (signalled(UNNAMED_SIGNAL), "signal 32"),
        (stopped(signal.SIGSTOP), f"exit {stopped(signal.SIGSTOP)}"),
    ],
)
def test_exit_summary(status: int, summary: str) -> None:
    assert exit_summary(status) == summary


class Lines:
    """A line parser, what it passed on, and the buffer it reads from."""

    def __init__(self, *, progress: bool = True, stream: bool = False) -> None:
        self.progress: list[tuple[int, int]] = []
        self.lines: list[bytes] = []
        self.parser = ProgressLines(
            self._on_progress if progress else None, self.lines.append if stream else None
        )
        self.buffer = bytearray()

    async def _on_progress(self, done: int, total: int) -> None:
        self.progress.append((done, total))

    def feed(self, data: bytes) -> Lines:
        self.buffer += data
        anyio.run(self.parser.consume, self.buffer)
        return self


def progress_line(done: object, total: object) -> bytes:
    return b'{"progress":' + json.dumps(done).encode() + b',"total":' + json.dumps(total).encode() + b"}\n"


def test_progress_is_passed_on_in_order_and_the_envelope_is_left() -> None:
    lines = Lines().feed(progress_line(1, 3) + progress_line(2, 3) + progress_line(3, 3) + ENVELOPE)
    assert lines.progress == [(1, 3), (2, 3), (3, 3)]
    assert bytes(lines.buffer) == ENVELOPE
    assert not lines.parser.active and lines.parser.last == 3


@pytest.mark.parametrize(
    ("untrusted", "kept"),
    [
        (progress_line(0, 3) + progress_line(0, 3), [(0, 3)]),  # not increasing
        (progress_line(2, 3) + progress_line(1, 3), [(2, 3)]),  # backwards
        (progress_line(4, 3), []),  # past its total
        (progress_line(3, 3), [(3, 3)]),  # at its total
        (progress_line(1, 10_000_000), [(1, 10_000_000)]),
        (progress_line(1, 10_000_001), []),  # total over the bound
        (progress_line(-1, 3), []),  # below the start
        (progress_line("x", 3), []),
        (progress_line(1, None), []),
        (b'{"progress":1}\n', []),
        (b'{"progress":1,"total":2\n', []),
        (progress_line(1.9, 3), [(1, 3)]),  # an int() of what was sent
    ],
)
def test_hostile_progress_is_dropped_and_parsing_goes_on(
    untrusted: bytes, kept: list[tuple[int, int]]
) -> None:
    lines = Lines().feed(untrusted + ENVELOPE)
    assert lines.progress == kept
    assert bytes(lines.buffer) == ENVELOPE


def test_a_progress_line_must_end_within_its_cap() -> None:
    """The newline has to be within the first 128 bytes: a longer line stops the parser (the
    rest is then judged as the envelope, and fails), a line of exactly 128 bytes is read."""
    padded = progress_line(1, 3)[:-2] + b" " * (128 - len(progress_line(1, 3))) + b"}\n"
    assert len(padded) == 128
    assert Lines().feed(padded + ENVELOPE).progress == [(1, 3)]
    too_long = padded[:-2] + b" }\n"
    lines = Lines().feed(too_long + ENVELOPE)
    assert (lines.progress, lines.parser.active) == ([], False)
    assert bytes(lines.buffer) == too_long + ENVELOPE


def test_an_unfinished_progress_line_waits_until_it_is_too_long() -> None:
    start = progress_line(1, 3)[:20]
    lines = Lines().feed(start)
    assert lines.parser.active and bytes(lines.buffer) == start
    lines.feed(b" " * (127 - len(start)))
    assert lines.parser.active and len(lines.buffer) == 127
    lines.feed(b" ")
    assert not lines.parser.active


@pytest.mark.parametrize(
    ("start", "stream", "active"),
    [
        (b"{", False, True),
        (b'{"prog', False, True),
        (b'{"pa', False, False),  # a page line's start: only a streamed read expects one
        (b'{"pa', True, True),
        (b'{"sel', True, True),
        (b'{"ok', True, False),
        (b"x", True, False),
    ],
)
def test_a_chunk_cut_inside_a_line_start_waits(start: bytes, stream: bool, active: bool) -> None:
    lines = Lines(stream=stream).feed(start)
    assert lines.parser.active is active
    assert bytes(lines.buffer) == start


def test_stream_lines_go_to_their_callback_whole() -> None:
    page = b'{"page":{"position":0,"text":"' + b"y" * 500 + b'"}}'
    lines = Lines(stream=True).feed(b'{"selection":{"page_count":1}}\n' + page[:100])
    assert lines.lines == [b'{"selection":{"page_count":1}}']
    assert lines.parser.active and bytes(lines.buffer) == page[:100]
    lines.feed(page[100:300])
    assert lines.lines == [b'{"selection":{"page_count":1}}']
    lines.feed(page[300:] + b"\n" + progress_line(1, 1) + ENVELOPE)
    assert lines.lines == [b'{"selection":{"page_count":1}}', page]
    assert lines.progress == [(1, 1)]
    assert bytes(lines.buffer) == ENVELOPE


def test_a_stream_line_after_a_scanned_one_is_searched_from_its_own_start() -> None:
    """The scan offset is reset after each stream line: a short line after a long one still
    ends at its own newline."""
    long = b'{"page":{"text":"' + b"z" * 200 + b'"}}'
    lines = Lines(stream=True).feed(long[:150])
    lines.feed(long[150:] + b'\n{"page":{}}\n' + ENVELOPE)
    assert lines.lines == [long, b'{"page":{}}']
    assert bytes(lines.buffer) == ENVELOPE


def test_without_a_progress_callback_nothing_is_kept() -> None:
    lines = Lines(progress=False).feed(progress_line(1, 2) + progress_line(2, 2) + ENVELOPE)
    assert list(lines.parser.pending) == [] and lines.parser.last == -1
    assert bytes(lines.buffer) == ENVELOPE


def test_take_keeps_progress_until_flush() -> None:
    """``take`` runs in an fd callback: it queues; ``flush`` passes on, in order, once."""
    lines = Lines()
    lines.buffer += progress_line(1, 2) + progress_line(2, 2)
    lines.parser.take(lines.buffer)
    assert (list(lines.parser.pending), lines.progress) == ([(1, 2), (2, 2)], [])
    anyio.run(lines.parser.flush)
    anyio.run(lines.parser.flush)
    assert (list(lines.parser.pending), lines.progress) == ([], [(1, 2), (2, 2)])


def test_a_stopped_parser_stays_stopped() -> None:
    """After the first byte that starts no line it knows, the parser reads nothing more, even
    a progress line at the front of the buffer."""
    lines = Lines().feed(b'{"ok":')
    assert not lines.parser.active
    lines.buffer[:] = progress_line(1, 2)
    lines.feed(b"")
    assert (lines.progress, bytes(lines.buffer)) == ([], progress_line(1, 2))
