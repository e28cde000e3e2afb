"""Blocks (``pdf_airlock.worker.pdf.structure``) written as GitHub-flavoured Markdown.

Headings are ``#`` to ``####``; list items ``-`` or their number (``1.``), nested by four
spaces a level; tables are pipe tables (the first row the header); images are placeholders that
name what ``pdf_images`` extracts (``![image p3 #2](pdf_images:page=3&name=Im0)``). Text that
would read as Markdown syntax at a line's start (``#``, ``>``, a list marker, a fence) is escaped,
so a document's text never becomes a heading: the headings are only those listed with their
offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from pdf_airlock.worker.pdf.structure import Block

__all__ = ["PageMarkdown", "render_page"]

_ORDERED: Final = re.compile(r"^\(?(\d{1,3})[.)]$")
_LEADING_SYNTAX: Final = re.compile(r"^(#|>|[-+*]\s|\d{1,9}[.)]\s|```|~~~|\||=+\s*$|-+\s*$)")
_INDENT: Final = "    "


@dataclass(slots=True)
class PageMarkdown:
    """One page's Markdown and its headings: (offset in ``text``, level, heading text)."""

    text: str
    headings: list[tuple[int, int, str]] = field(default_factory=list)


def _escape(text: str) -> str:
    return "\\" + text if _LEADING_SYNTAX.match(text) else text


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|") or " "


def _table(rows: tuple[tuple[str, ...], ...]) -> str:
    width = max(len(row) for row in rows)
    padded = [list(row) + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(_cell(cell) for cell in padded[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in padded[1:]]
    return "\n".join(lines)


def _item(block: Block) -> str:
    ordered = _ORDERED.match(block.marker)
    marker = f"{ordered.group(1)}." if ordered else "-"
    text = block.text if ordered or block.marker == "-" else f"{block.marker} {block.text}"
    return f"{_INDENT * block.depth}{marker} {text}"


def render_page(blocks: list[Block], page: int) -> PageMarkdown:
    """The page's Markdown: blocks apart by a blank line, the items of one list by a line break."""
    out = PageMarkdown("")
    parts: list[str] = []
    length = 0
    images = 0
    previous = ""
    for block in blocks:
        if block.kind == "heading":
            text = f"{'#' * block.level} {block.text}"
        elif block.kind == "item":
            text = _item(block)
        elif block.kind == "table":
            text = _table(block.rows)
        elif block.kind == "image":
            images += 1
            text = f"![image p{page} #{images}](pdf_images:page={page}&name={block.text})"
        else:
            text = _escape(block.text)
        separator = "" if not parts else ("\n" if previous == block.kind == "item" else "\n\n")
        length += len(separator)
        if block.kind == "heading":
            out.headings.append((length, block.level, block.text))
        parts.append(separator + text)
        length += len(text)
        previous = block.kind
    out.text = "".join(parts)
    return out
