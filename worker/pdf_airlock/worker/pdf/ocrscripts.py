"""Which language data reads a page when the caller names none: from its script to languages.

Input: the script name Tesseract's orientation and script detection (OSD) gave for a page, the
text a first reading of it produced (untrusted: only counted, never echoed), and the languages
installed. Each script has a first language, read first, and a few others that may write in it
(``SCRIPTS``); Han is read by both Chinese models, whose line-by-line merge keeps the surer. For
Latin, Cyrillic and Arabic, the first reading's words are matched against each candidate's most
frequent short words (``MARKERS``, compared without accents and case, so an English reading of
German still shows ``und``, ``der``, ``nicht``): the best-scoring other language, when it scores
at least ``MIN_MARKER_SHARE`` of the words and no less than the first language, reads the page
too (and the runner-up, when it scores close), and the surest of their readings is kept unless
the first language's was clearly surer (``pdf.ocr``).
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["ALWAYS_BOTH", "FALLBACK", "PROBES", "SCRIPTS", "candidates", "languages_for"]

# OSD's script name -> (the first language, the others that write in it).
SCRIPTS: Final[dict[str, tuple[str, tuple[str, ...]]]] = {
    "Latin": (
        "eng",
        ("deu", "fra", "spa", "por", "ita", "nld", "pol", "ces", "swe", "tur", "vie", "ind"),
    ),
    "Cyrillic": ("rus", ("ukr",)),
    "Greek": ("ell", ()),
    "Arabic": ("ara", ("fas",)),
    "Hebrew": ("heb", ()),
    "Devanagari": ("hin", ()),
    "Bengali": ("ben", ()),
    "Thai": ("tha", ()),
    "Han": ("chi_sim", ("chi_tra",)),
    "Japanese": ("jpn", ()),
    "Katakana": ("jpn", ()),
    "Hiragana": ("jpn", ()),
    "Korean": ("kor", ()),
    "Hangul": ("kor", ()),
}
ALWAYS_BOTH: Final = frozenset({"Han"})  # scripts whose candidates are all read, not scored
FALLBACK: Final = "eng"  # no script found, or its languages are not installed
# The first language of every script: what a page is tried with when its reading is unsure.
PROBES: Final = tuple(dict.fromkeys(first for first, _others in SCRIPTS.values()))
MIN_MARKER_SHARE: Final = 0.04
# The runner-up is read too when it scores at least this share of the best: languages that share
# short words (Italian's and Vietnamese's "da", "con" as an English reading spells them).
CLOSE_SHARE: Final = 0.7

_MARKER_WORDS: Final[dict[str, str]] = {
    "eng": "the and of to in is was for that with by on as are from this which it be at an has have not were",
    "deu": "der die das und ist nicht mit den von zu ein eine einer auf sich des dem auch im wird wurde "
    "werden sind bei nach aus wie oder für über durch",
    "fra": "le la les des et est une un du dans que qui pour sur par pas au aux avec ce sont ont il elle été "
    "leurs plus",
    "spa": "el la los las de del que y en un una es por con para se su sus al como más fue desde hasta muy "
    "entre",
    "por": "o os a as de do da dos das que e em um uma para com não no na se por foi ao pelo pela como mais",
    "ita": "il la le gli di del della che e è un una per con non sono nel nella alla dei delle da al "
    "anche fu",
    "nld": "de het een en van is dat die niet op te zijn met voor werd aan er naar bij ook om door wordt",
    "pol": "i w z na się nie do że jest to od jak po a o oraz przez dla był ich jej jego które który",
    "ces": "a v se na je že s z do to jako od by byl pro jeho které který ale po při jsou",
    "swe": "och i att det som en på är av för med till den har de inte om ett var sedan efter",
    "tur": "ve bir bu da de için ile olarak olan çok daha gibi en kadar sonra her ise değil ne",
    "vie": "và của là có trong được các cho với không người những một này đã từ đến khi về như nhiều năm "
    "thì cũng hai theo",
    "ind": "dan yang di ini itu dengan untuk dari dalam tidak akan pada juga ke adalah oleh sebagai atau "
    "mereka",
    "rus": "и в не на что с по как это из к у для был была от его но или также чтобы между её еще уже",
    "ukr": "та і в не на що з по як це із до у для був була від його але або також щоб між її ще вже "
    "які який",
    "ara": "في من على إلى أن التي الذي عن مع كان هذا هذه قد ذلك بين",
    "fas": "از در به که این را با است برای می آن یک شد بود هم تا",
}
_FOLD: Final = str.maketrans({"ی": "ي", "ى": "ي", "ک": "ك", "ـ": None, "ё": "е", "й": "и", "ї": "і"})


def _fold(word: str) -> str:
    """Lower case, without accents or punctuation, Arabic and Persian letter forms made one."""
    decomposed = unicodedata.normalize("NFD", word.lower().translate(_FOLD))
    return "".join(char for char in decomposed if char.isalnum())


MARKERS: Final[dict[str, frozenset[str]]] = {
    lang: frozenset(_fold(word) for word in words.split()) for lang, words in _MARKER_WORDS.items()
}


def _share(words: list[str], lang: str) -> float:
    markers = MARKERS.get(lang, frozenset())
    return sum(word in markers for word in words) / len(words) if words else 0.0


def candidates(script: str | None, installed: set[str]) -> tuple[str, list[str]]:
    """The first language to read a page of ``script`` with, and the others that may be read
    after it (all installed); ``FALLBACK`` for a script without installed languages."""
    first, others = SCRIPTS.get(script or "", (FALLBACK, ()))
    usable = [lang for lang in (first, *others) if lang in installed]
    if not usable:
        return FALLBACK, []
    return usable[0], usable[1:]


def languages_for(script: str | None, installed: set[str], first_text: str) -> list[str]:
    """The languages that may read a page of ``script``, given the first language's reading
    ``first_text``, in order of preference: the first language alone; or the best-scoring other
    language (and the runner-up when it scores close), then the first; or, for ``ALWAYS_BOTH``,
    every candidate (their readings are compared)."""
    first, others = candidates(script, installed)
    if not others:
        return [first]
    if script in ALWAYS_BOTH:
        return [first, *others]
    words = [folded for folded in (_fold(word) for word in first_text.split()) if folded]
    scored = [(lang, _share(words, lang)) for lang in others if lang in MARKERS]
    if not scored:
        return [first]
    scored.sort(key=lambda item: -item[1])
    best, share = scored[0]
    if share < MIN_MARKER_SHARE or share < _share(words, first):
        return [first]
    close = [lang for lang, other in scored[1:2] if other >= CLOSE_SHARE * share and other > 0]
    return [best, *close, first]
