"""The stdio framer in process: linear search, memory near a frame's size, the id of an
oversized frame, and answers that do not depend on where reads cut the stream.

The framer is driven directly (``pdf_airlock.server.stdio.framing.Framer``);
``tests/protocol/test_stdio_raw.py`` checks the same refusals over a real server's stdio.
"""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdf_airlock.server.stdio.framing import Framer, Rejected

READ = 1 << 16  # what the transport reads from stdin at once
MIB = 1 << 20
PEAK_RATIO = 1.5  # memory a frame may cost, over its size
LIMIT = 200  # a small frame limit for the id and chunking tests


def request(request_id: Any, pad: int, *, first: str = '"jsonrpc":"2.0"') -> bytes:
    """A request of about ``pad`` bytes: its id and method come first, a long ``params`` last."""
    head = f'{{{first},"id":{request_id},"method":"tools/call","params":{{"pad":"'.encode()
    return head + b"x" * pad + b'"}}'


def lsp(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def feed(framer: Framer, stream: bytes, size: int = READ) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(stream), size):
        out += framer.feed(stream[start : start + size])
    return out + framer.finish()


def reads_of(message: bytes, size: int = READ) -> list[bytes]:
    """``message`` as the transport's reads; equal middle reads are one shared object, so that
    the reads themselves cost no memory while a framer is measured."""
    middle = message[READ : READ + size]
    count = (len(message) - READ) // size
    if message[READ : READ + count * size] != middle * count:
        raise AssertionError("the message's middle is not one repeated read")
    return [message[:READ], *[middle] * count, message[READ + count * size :]]


# -- linear work -----------------------------------------------------------------------------


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_a_long_frame_in_small_reads_is_searched_once(framing: str) -> None:
    """16 MiB in 64 KiB reads: every byte is searched for the delimiter at most once (the
    buffer rescanned on every read searched 128 times the frame: quadratic)."""
    body = request(1, 16 * MIB)
    stream = body + b"\n" if framing == "ndjson" else lsp(body)
    framer = Framer(len(body))
    [framed] = feed(framer, stream)
    assert framed == body
    assert framer.searched <= len(stream)


def test_a_header_in_one_byte_reads_is_searched_linearly() -> None:
    """A ``Content-Length`` header read a byte at a time: each read searches at most the three
    bytes a straddling delimiter may share with the last, plus its own."""
    body = request(1, 100)
    stream = lsp(body) + b"Content-Length: 2\r\nX-Padding: " + b"p" * 4000 + b"\r\n\r\n{}"
    framer = Framer(LIMIT)
    assert feed(framer, stream, size=1) == [body, b"{}"]
    assert framer.searched <= 4 * len(stream)


def test_many_short_lines_in_one_read_are_searched_once() -> None:
    lines = [b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % n for n in range(20_000)]
    stream = b"\n".join(lines) + b"\n"
    framer = Framer(LIMIT)
    assert framer.feed(stream) == lines
    assert framer.searched == len(stream)


# -- memory ----------------------------------------------------------------------------------


@pytest.mark.parametrize("framing", ["ndjson", "lsp"])
def test_a_frame_near_the_limit_costs_about_its_size(framing: str) -> None:
    """32 MiB at the limit, in 64 KiB reads: the peak of memory allocated while it is framed,
    the body still held, stays under 1.5 times its size (copies of the buffer made it 3)."""
    body = request(1, 32 * MIB - 100)
    stream = body + b"\n" if framing == "ndjson" else lsp(body)
    reads = reads_of(stream)
    framer = Framer(len(body))
    framed: list[Any] = []
    tracemalloc.start()
    try:
        for chunk in reads:
            framed += framer.feed(chunk)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(framed) == 1 and framed[0] == body
    assert peak < PEAK_RATIO * len(body), f"peak {peak / len(body):.2f} times the frame"


# -- the id of an oversized frame ------------------------------------------------------------


def refusal(items: list[Any]) -> Rejected:
    [item] = items
    assert isinstance(item, Rejected)
    assert item.reason == f"message exceeds the {LIMIT}-byte limit"
    return item


@pytest.mark.parametrize("request_id", [7, '"call-7"', '"quoted \\" brace } id"', 12345678901234567890])
@pytest.mark.parametrize("size", [1, 3, READ])
def test_an_oversized_line_is_refused_with_its_id(request_id: Any, size: int) -> None:
    oversized = request(request_id, 10 * LIMIT)
    items = feed(Framer(LIMIT), oversized + b"\n", size=size)
    expected = request_id if isinstance(request_id, int) else request_id[1:-1].replace('\\"', '"')
    assert refusal(items).request_id == expected


@pytest.mark.parametrize("size", [1, 5, READ])
def test_an_oversized_lsp_frame_is_refused_with_its_id_then_the_next_is_served(size: int) -> None:
    """The refusal waits for the body's first bytes, where the id is, wherever reads cut them."""
    stream = lsp(request('"big"', 10 * LIMIT)) + lsp(b'{"jsonrpc":"2.0","id":2,"method":"ping"}')
    items = feed(Framer(LIMIT), stream, size=size)
    assert isinstance(items[0], Rejected) and items[0].request_id == "big"
    assert items[1:] == [b'{"jsonrpc":"2.0","id":2,"method":"ping"}']


def test_an_oversized_lsp_frame_cut_by_the_end_of_input_is_still_refused() -> None:
    framer = Framer(LIMIT)
    assert framer.feed(lsp(request(3, 10 * LIMIT))[:90]) == []
    assert refusal(framer.finish()).request_id == 3


@pytest.mark.parametrize(
    "head",
    [
        b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"pad":"',  # a notification
        b'{"jsonrpc":"2.0","id":4,"result":{"pad":"',  # a response: its id is the server's
        b'{"jsonrpc":"2.0","method":"x","params":{"id":4,"pad":"',  # an id inside params only
        b'{"jsonrpc":"2.0","method":"x","id":4,"id":5,"pad":"',  # two ids
        b'{"jsonrpc":"2.0","method":"x","id":true,"pad":"',  # not a valid id
        b'{"jsonrpc":"2.0","method":"x","id":4.5,"pad":"',
        b'{"jsonrpc":"2.0","method":"x","id":"\xff","pad":"',  # not UTF-8
        b'["jsonrpc","2.0","id",4,"method","x","',  # not an object
        b'{"jsonrpc":"2.0","method":"x","params":{"pad":"' + b"y" * 5000 + b'"},"id":4,',  # id past the head
    ],
)
def test_an_oversized_frame_whose_id_is_not_certain_gets_null(head: bytes) -> None:
    assert refusal(feed(Framer(LIMIT), head + b"x" * (10 * LIMIT) + b"\n")).request_id is None


def test_a_header_with_an_unreadable_length_is_refused() -> None:
    """More digits than ``int()`` takes (it raised ValueError out of the read loop)."""
    framer = Framer(LIMIT)
    [item] = framer.feed(b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n")
    assert item == Rejected("frame header has no valid Content-Length")
    assert framer.feed(lsp(b"{}")) == [b"{}"]


# -- reads cut anywhere ----------------------------------------------------------------------

NDJSON_PARTS = st.sampled_from(
    [b"\n", b"  \r\n", b'{"id":1}\n', request(9, LIMIT) + b"\n", b'{"method":"a","id":2}   \n', b"x" * 50]
)
LSP_PARTS = st.sampled_from(
    [
        lsp(b'{"id":1}'),
        lsp(request(8, LIMIT)),
        b"Content-Type: x\r\nContent-Length: 2\r\n\r\n{}",
        b"X-No-Length: 1\r\n\r\n",
        lsp(b"\n" * 30),
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    parts=st.one_of(st.lists(NDJSON_PARTS, max_size=12), st.lists(LSP_PARTS, min_size=1, max_size=8)),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=12),
    lead=st.sampled_from([b"", b" ", b"\r\n\t"]),
)
def test_answers_do_not_depend_on_where_reads_cut_the_stream(
    parts: list[bytes], cuts: list[int], lead: bytes
) -> None:
    stream = lead + b"".join(parts)
    whole = Framer(LIMIT)
    expected = whole.feed(stream) + whole.finish()
    framer = Framer(LIMIT)
    got: list[Any] = []
    position = 0
    for cut in sorted(cuts):
        got += framer.feed(stream[position:cut])
        position = max(position, cut)
    got += framer.feed(stream[position:]) + framer.finish()
    assert [bytes(item) if not isinstance(item, Rejected) else item for item in got] == expected
