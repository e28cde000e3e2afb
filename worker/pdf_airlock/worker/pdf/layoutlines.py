"""The text lines and images of a page as pdfminer.six lays them out, with their style.

Input: pdfminer's layout of one page of an untrusted document (characters already mended by
``pdf_airlock.worker.pdf.layoutchars``). Each text line keeps its box (measured from the top of
the page), its dominant font size (weighted by characters) and whether it is bold or italic
(from the font's name: PDF fonts carry their weight there, ``Helvetica-Bold``, ``ABCDEF+Arial,Bold``).
Images are kept with their XObject name, the name ``pdf_images`` lists them by. Lines inside
Form XObjects are laid out too (``LAParams(all_texts=True)``); vertical text lines are kept as
lines, read top to bottom.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from pdf_airlock.worker.pdf.textnorm import layout_text

__all__ = ["MAX_LINES_PER_PAGE", "PageLines", "TextLine", "page_lines"]

# A page with more text lines than this keeps its first ones and says so (a bound on the work
# of the structure pass, which is about linear in the lines).
MAX_LINES_PER_PAGE: Final = 20_000
_BOLD: Final = re.compile(
    r"bold|black|heavy|semibold|demibold|extrabold|ultrabold|,bd\b|-bd\b", re.IGNORECASE
)
_ITALIC: Final = re.compile(r"italic|oblique|,it\b|-it\b", re.IGNORECASE)
_BOLD_SHARE: Final = 0.8
_SIZE_STEP: Final = 0.5


@dataclass(frozen=True, slots=True)
class TextLine:
    """One line of text: its box in points from the page's top-left corner, and its style."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool
    italic: bool

    @property
    def height(self) -> float:
        return max(self.bottom - self.top, 0.1)


@dataclass(frozen=True, slots=True)
class PageImage:
    """An image on the page: its XObject name (``pdf_images``'s ``name``) and box."""

    name: str
    x0: float
    x1: float
    top: float
    bottom: float


@dataclass(slots=True)
class PageLines:
    """A page's lines and images, its size in points, and whether lines were left out."""

    width: float
    height: float
    lines: list[TextLine]
    images: list[PageImage]
    cut: bool = False


def page_lines(layout: Any) -> PageLines:
    """The lines and images of one pdfminer ``LTPage``."""
    x0, y0, x1, y1 = layout.bbox
    page = PageLines(width=x1 - x0, height=y1 - y0, lines=[], images=[])
    for element in _elements(layout):
        if len(page.lines) >= MAX_LINES_PER_PAGE:
            page.cut = True
            break
        if isinstance(element, tuple):
            name, box = element
            page.images.append(PageImage(name, box[0] - x0, box[2] - x0, y1 - box[3], y1 - box[1]))
            continue
        line = _line(element, x0, y1)
        if line is not None:
            page.lines.append(line)
    return page


def _elements(container: Any) -> Iterator[Any]:
    """Text lines (and image names with boxes) of a container, depth first, in pdfminer's order."""
    from pdfminer.layout import LTFigure, LTImage, LTTextBox, LTTextLine

    for element in container:
        if isinstance(element, LTTextLine):
            yield element
        elif isinstance(element, LTTextBox):
            yield from _elements(element)
        elif isinstance(element, LTImage):
            yield (str(element.name)[:200], element.bbox)
        elif isinstance(element, LTFigure):
            yield from _elements(element)


def _line(element: Any, left: float, top: float) -> TextLine | None:
    from pdfminer.layout import LTChar

    text = " ".join(layout_text(element.get_text()).split())
    if not text:
        return None
    sizes: Counter[float] = Counter()
    bold = italic = total = 0
    for char in element:
        if not isinstance(char, LTChar) or char.get_text().isspace():
            continue
        weight = len(char.get_text()) or 1
        total += weight
        sizes[round(char.size / _SIZE_STEP) * _SIZE_STEP] += weight
        name = str(char.fontname)
        bold += weight if _BOLD.search(name) else 0
        italic += weight if _ITALIC.search(name) else 0
    size = sizes.most_common(1)[0][0] if sizes else round(element.height, 1)
    x0, y0, x1, y1 = element.bbox
    return TextLine(
        text=text,
        x0=x0 - left,
        x1=x1 - left,
        top=top - y1,
        bottom=top - y0,
        size=size,
        bold=total > 0 and bold >= _BOLD_SHARE * total,
        italic=total > 0 and italic >= _BOLD_SHARE * total,
    )
