"""How many pages a read's selection came to, remembered by document sha256.

The supervisor never parses a PDF, so before a job child says so it does not know how many pages a read will
take. The two-ended read (``pdf_airlock.server.tools.read_two_ended``) starts its backward child only once the
forward child's ``selection`` line has said there are pages enough for two: on 2 cores that wait (the forward
child's handover and its opening of the document, then the backward child's handover) was about a millisecond
of a ten-page read's answer. Once a document has been read, its selection's size is known here, and a later
read of the same bytes with the same selection (another call, the next page of a cursor, the same file in
another root) starts both children at once, or reads with one child when there are too few pages for two.
The tools whose child reports PDFium's page count pass it on (``tools.base.learn_page_count``): the size of
a whole-document selection for either engine, so a first read after one of them does too.

What is kept: the document's sha256, the selection's engine and ``pages`` (the user's own
argument, bounded by the input schema) and one number, the size a forward child reported (or the
page count one of those tools reported). Never text, never a password. A value comes from a job
child, so it is untrusted, and it is used only for scheduling: the answer is still built from
the children's lines as they come, checked against the forward child's own ``selection`` line,
so a wrong value costs a wasted or a missing second child, never a wrong answer. Least recently
used entries go first past ``entries``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

__all__ = ["DEFAULT_ENTRIES", "SelectionMemo"]

# About 310 bytes an entry with a short selector (tracemalloc, 1,024 entries: 311 KB); a
# selector may be up to 1,000 characters (the input schema): 1.4 MB then (tests/tools/test_twoended.py).
DEFAULT_ENTRIES: Final = 1024

SelectionKey = tuple[str, str, str | None]  # (sha256, engine, pages)


class SelectionMemo:
    """A bounded LRU map from (sha256, engine, pages) to the selection's page count."""

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        if entries < 0:
            raise ValueError("entries must be >= 0")
        self.entries = entries
        self._sizes: OrderedDict[SelectionKey, int] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sizes)

    def get(self, key: SelectionKey) -> int | None:
        size = self._sizes.get(key)
        if size is not None:
            self._sizes.move_to_end(key)
        return size

    def put(self, key: SelectionKey, selected_pages: int) -> None:
        if self.entries == 0:
            return
        self._sizes[key] = selected_pages
        self._sizes.move_to_end(key)
        while len(self._sizes) > self.entries:
            self._sizes.popitem(last=False)
