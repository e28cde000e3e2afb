"""What makes a line a heading: section numbering, and what never is one.

Part of the Markdown parser's structure stage. Input: the text of one untrusted line; nothing is
assumed about it. ``numbering`` reads the numbering schemes of real documents and gives the
depth they say (``1`` / ``I.`` / ``Appendix A`` is 1; ``1.1`` / ``A.`` / ``II-A`` is 2; ``1.1.1``
/ ``1)`` / ``II-A1`` is 3; ``(1)`` / ``a)`` is 4); ``never_heading`` refuses captions ("Figure 3.",
"Table II"), dates and page numbers, whatever their style; ``is_label`` refuses a paper's
metadata labels ("Keywords", "Index Terms") as run-in headings.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_HEADING_WORDS", "is_label", "never_heading", "numbering", "split_number"]

MAX_HEADING_WORDS: Final = 14  # a numbered line with more words is a list item or a sentence
_SCHEMES: Final = (
    (re.compile(r"^(appendix|annex|chapter|part)\s+([a-z]|\d{1,3}|[ivxlc]{1,6})\b[.:]?\s*", re.I), 1),
    (re.compile(r"^(\d{1,3}(?:\.\d{1,3}){0,4})\.?(?=\s+\S)\s+"), 0),  # depth: the number's parts
    (re.compile(r"^([IVXL]{1,6})-([A-Z])(\d{1,2})\.?\s+"), 3),
    (re.compile(r"^([IVXL]{1,6})-([A-Z])\.?\s+"), 2),
    (re.compile(r"^([IVXL]{1,6})\.\s+"), 1),
    (re.compile(r"^([A-Z])\.\s+"), 2),
    (re.compile(r"^([A-Z]\.\d{1,2}(?:\.\d{1,2})?)\.?\s+"), 0),  # A.1, B.2.3: appendix sections
    (re.compile(r"^([A-H])\s+(?=[A-Z][a-z])"), 1),  # "A Omitted proofs": an appendix (LNCS)
    (re.compile(r"^(\d{1,2})\)\s+"), 3),
    (re.compile(r"^\((\d{1,2}|[a-z])\)\s+"), 4),
    (re.compile(r"^([a-z])\)\s+"), 4),
)
_CAPTION: Final = re.compile(
    r"^(fig\.?|figure|tab\.?|table|listing|algorithm|alg\.|scheme|chart|plate|exhibit|box|eq\.?|equation)"
    r"\s*[-.:]?\s*([0-9ivxlc]{1,6}|[a-z]?\d{1,3}(\.\d{1,3})?)\b",
    re.IGNORECASE,
)
_MONTHS: Final = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_DATE: Final = re.compile(
    rf"^((\w+day,?\s+)?({_MONTHS}\s+\d{{1,2}}(st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(st|nd|rd|th)?\s+{_MONTHS},?\s+\d{{4}}"
    rf"|{_MONTHS},?\s+\d{{4}}|\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}[./]\d{{1,2}}[./]\d{{2,4}})\.?)$",
    re.IGNORECASE,
)
_WORD: Final = re.compile(r"[^\W\d_]{2}")
_LABELS: Final = frozenset(  # a paper's metadata labels, and a manual's admonitions
    {
        "keywords",
        "key words",
        "index terms",
        "general terms",
        "categories and subject descriptors",
        "ccs concepts",
        "acm reference format",
        "additional key words and phrases",
        "mathematics subject classification",
        "jel classification",
        "warning",
        "note",
        "caution",
        "tip",
        "important",
    }
)
_THEOREM: Final = re.compile(  # the run-in labels of theorems and their kin, numbered or not
    r"^(definition|theorem|lemma|corollary|proposition|proof|example|remark|claim|conjecture|assumption"
    r"|observation|exercise|problem|solution|algorithm|procedure|notation|fact|property|hypothesis)\b"
    r"\s*[\dA-Z.()]*\s*$",
    re.IGNORECASE,
)
_NUMBER_ONLY: Final = re.compile(r"^[\W\d_]*$|^(page\s+)?\d+(\s+of\s+\d+)?$", re.IGNORECASE)


def numbering(text: str) -> int | None:
    """The depth the line's section number says, None without one."""
    for pattern, depth in _SCHEMES:
        found = pattern.match(text)
        if found is None:
            continue
        if len(text.split()) > MAX_HEADING_WORDS or not _WORD.search(text[found.end() :]):
            return None  # too long for a title, or no word after the number ("(a) (b)")
        if depth == 0:
            return min(found.group(1).count(".") + 1, 4)
        return depth
    return None


def split_number(text: str) -> str:
    """The line's title after its section number (the whole line without one)."""
    for pattern, _ in _SCHEMES:
        found = pattern.match(text)
        if found is not None:
            return text[found.end() :]
    return text


def never_heading(text: str) -> bool:
    """A caption, a date, a page number or a theorem's label ("Definition 2."): never a heading,
    whatever its style."""
    stripped = text.strip()
    if _CAPTION.match(stripped) or _DATE.match(stripped) or _NUMBER_ONLY.match(stripped):
        return True
    return bool(_THEOREM.match(stripped.rstrip(".:")))


def is_label(text: str) -> bool:
    """A paper's metadata label ("Keywords", "Index Terms"): run in, but no heading."""
    return " ".join(text.casefold().replace("\u2014", " ").split()).strip(" .:-") in _LABELS
