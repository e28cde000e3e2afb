"""Fallback fonts for the job child: the host's fonts, given to PDFium as data from the zygote.

A document that uses a font without embedding it is drawn with a font of the host: PDFium asks
its system-font interface for one. PDFium's own interface opens files under ``/usr/share/fonts``
on demand, which a job child cannot do (no file can be opened in the sandbox): such text came
out blank in the child while the same code in-process drew it. ``install`` (the zygote's
warm-up) puts this package's interface in its place (``serving``): the catalogue's files
(``catalogue``: Noto for Latin, Greek and Cyrillic, CJK, Arabic, Hebrew, Devanagari, Bengali
and Thai, from Debian's fonts-noto-core and fonts-noto-cjk) held in memory (``store``), and
faces chosen as PDFium chooses them (``matching``), in the zygote, in every job child and in any
process that calls ``install``. ``seal`` (the zygote, after its warm-up) makes the callbacks'
code read-only (``pdf_airlock.worker.memory.closures``).

Missing files are skipped: with none installed, PDFium draws such text with its built-in Latin
faces only, in the child and in-process alike, and ``pdf-airlock self-test`` says so.
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pdf_airlock.worker.fonts.serving import FontServer

__all__ = ["Installed", "install", "installed", "seal", "self_check", "status"]

_SCRIPTS_SEPARATOR: Final = ", "


@dataclass(slots=True)
class Installed:
    """What ``install`` found: the server (kept alive here: PDFium holds its pointers) and the
    catalogue files it could not map."""

    server: FontServer
    faces: int
    files: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    sealed: int = 0


_installed: list[Installed] = []


def install() -> Installed:
    """Map the catalogue's files and make them PDFium's system fonts in this process (once)."""
    if _installed:
        return _installed[0]
    import pypdfium2.raw as pdfium_c

    from pdf_airlock.worker.fonts.catalogue import FONT_DIR, FONT_FILES
    from pdf_airlock.worker.fonts.faces import faces_of
    from pdf_airlock.worker.fonts.matching import FaceIndex
    from pdf_airlock.worker.fonts.serving import FontServer
    from pdf_airlock.worker.fonts.store import MappedFile, load

    files: list[MappedFile] = []
    faces = []
    found, missing, scripts = [], [], []
    held = load([f"{FONT_DIR}/{entry.path}" for entry in FONT_FILES])
    for entry, mapped in zip(FONT_FILES, held, strict=True):
        if mapped is None:
            missing.append(entry.path)
            continue
        faces += faces_of(mapped.view(), len(files))
        files.append(mapped)
        found.append(entry.path)
        scripts += [script for script in entry.scripts.split(_SCRIPTS_SEPARATOR) if script not in scripts]
    server = FontServer(FaceIndex(faces), files)
    pdfium_c.FPDF_SetSystemFontInfo(ctypes.byref(server.interface))
    _installed.append(Installed(server, len(server.faces), found, missing, scripts))
    return _installed[0]


def installed() -> Installed | None:
    return _installed[0] if _installed else None


def seal() -> int:
    """Make the installed callbacks' code pages read-and-execute (``memory.closures``); the number of
    mappings sealed."""
    from pdf_airlock.worker.memory.closures import seal as seal_closures

    done = installed()
    if done is None:
        return 0
    done.sealed += seal_closures(done.server.callbacks.values())
    return done.sealed


def status() -> str:
    """The font set as a self-test line: ``active: ...``, ``partial: ...`` or ``unavailable: ...``."""
    from pdf_airlock.worker.fonts.catalogue import FONT_FILES, packages

    done = installed()
    if done is None:
        return "unavailable: not installed in this process"
    if not done.files:
        return (
            f"unavailable: no fallback font files (Debian: {' '.join(packages())}); fonts a document "
            "does not embed are drawn in PDFium's built-in Latin only"
        )
    summary = f"{done.faces} faces from {len(done.files)} of {len(FONT_FILES)} files"
    if done.missing:
        return f"partial: {summary}; missing: {_missing_packages(done)}"
    return f"active: {summary} ({_SCRIPTS_SEPARATOR.join(done.scripts)})"


def _missing_packages(done: Installed) -> str:
    from pdf_airlock.worker.fonts.catalogue import FONT_FILES

    wanted = {entry.path: entry.package for entry in FONT_FILES}
    return " ".join(dict.fromkeys(wanted[path] for path in done.missing))


def self_check() -> str:
    """In a sandboxed child (``pdf-airlock self-test``): whether a page naming fonts it does not
    embed draws each script (``pdf_airlock.worker.fonts.check``), or ``status`` when no font is
    installed."""
    from pdf_airlock.worker.fonts import check

    done = installed()
    if done is None or not done.files:
        return status()
    drawn = check.self_check(done.faces)
    return f"{drawn}; missing: {_missing_packages(done)}" if done.missing else drawn
