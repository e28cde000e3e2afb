"""RAG chunks of a Markdown answer (``tools.markdown``): consecutive slices of its Markdown, each with the
heading path it sits under and the pages it covers.

A heading starts a new chunk (a section is not mixed with the one before); blocks (the parts
between blank lines: a paragraph, a list, a table, a heading) are added while the chunk stays
within ``chunk_chars``. A block longer than that is cut at line breaks (a table row or a list
item is never cut), then at sentence ends, and only as a last resort at ``chunk_chars``. Every
chunk's ``text`` is exactly ``markdown[start:end]``, so chunks and page offsets agree.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

__all__ = ["Chunk", "Span", "chunk_markdown"]

_BLOCK_BREAK: Final = re.compile(r"\n\n+")
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=\S)")


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of the Markdown: [start, end) and the page it belongs to."""

    start: int
    end: int
    page: int


@dataclass(frozen=True, slots=True)
class Chunk:
    start: int
    end: int
    heading_path: tuple[str, ...]
    first_page: int
    last_page: int


def _blocks(markdown: str) -> Iterator[tuple[int, int]]:
    start = 0
    for gap in _BLOCK_BREAK.finditer(markdown):
        if gap.start() > start:
            yield start, gap.start()
        start = gap.end()
    if start < len(markdown):
        yield start, len(markdown)


def _pieces(markdown: str, start: int, end: int, limit: int) -> Iterator[tuple[int, int]]:
    """[start, end) in pieces of at most ``limit`` characters where it can: at line breaks,
    then at sentence ends, then anywhere."""
    while end - start > limit:
        window = markdown[start : start + limit + 1]
        cut = window.rfind("\n")
        if cut <= 0:
            ends = [match.start() for match in _SENTENCE_END.finditer(window)]
            cut = ends[-1] if ends and ends[-1] > 0 else limit
        yield start, start + cut
        start += cut
        while start < end and markdown[start] in " \n":
            start += 1
    if end > start:
        yield start, end


def _pages(spans: list[Span], start: int, end: int) -> tuple[int, int]:
    covered = [span.page for span in spans if span.start < end and span.end > start]
    if not covered:
        before = [span.page for span in spans if span.start <= start]
        page = before[-1] if before else (spans[0].page if spans else 0)
        return page, page
    return covered[0], covered[-1]


def chunk_markdown(
    markdown: str,
    spans: list[Span],
    headings: dict[int, tuple[int, str]],
    context: list[tuple[int, str]],
    limit: int,
) -> list[Chunk]:
    """The chunks of ``markdown``: ``headings`` maps a heading's offset to (level, text);
    ``context`` is the heading path where the Markdown starts."""
    path = list(context)
    chunks: list[Chunk] = []
    # The chunk being built: start, end, its heading path, whether it has more than headings.
    current: tuple[int, int, tuple[str, ...], bool] | None = None

    def close() -> None:
        nonlocal current
        if current is not None:
            first, last = _pages(spans, current[0], current[1])
            chunks.append(Chunk(current[0], current[1], current[2], first, last))
            current = None

    for start, end in _blocks(markdown):
        heading = headings.get(start)
        if heading is not None:
            if current is not None and current[3]:
                close()  # a heading starts a new chunk, unless the chunk so far is only headings
            level, text = heading
            path = [entry for entry in path if entry[0] < level] + [(level, text)]
        titles = tuple(text for _, text in path)
        for piece_start, piece_end in _pieces(markdown, start, end, limit):
            if current is not None and piece_end - current[0] > limit:
                close()
            if current is None:
                current = (piece_start, piece_end, titles, heading is None)
            else:  # a chunk of headings only takes the path of its last one
                path_now = current[2] if current[3] else titles
                current = (current[0], piece_end, path_now, current[3] or heading is None)
    close()
    return chunks
