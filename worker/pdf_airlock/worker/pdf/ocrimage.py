"""The page image OCR reads: its resolution, its rendering, whether it has ink, and the map from
its pixels back to the page.

Input: a PDFium page of an untrusted document and the job's OCR limits (``contract.OcrLimits``: its
resolution, least resolution and pixel budget). A
scan (the caller says whether the page's text layer is absent or sparse) whose largest image
covers at least ``SCAN_IMAGE_SHARE`` of it is rendered at that image's own pixels per inch as
placed, pixel for pixel (PDFium stretches the page to the bitmap's size, so the size must be
exact for the scanner's pixels to come through unresampled); any other page at the ``dpi``
limit. Either way within ``max_pixels`` and not under ``min_dpi`` (a page that would need fewer
to fit is refused with ``memory_limit`` before anything is rendered). The page is rendered in
grey, turned when asked (the clockwise degrees OSD said set it upright).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from pdf_airlock.worker.contract import WorkerError

__all__ = ["Image", "ink_share", "render", "scale_for", "to_page"]

POINTS_PER_INCH: Final = 72.0
# A page is a scan, read at its image's own resolution, when one image covers this much of it.
SCAN_IMAGE_SHARE: Final = 0.5
MAX_IMAGES_EXAMINED: Final = 500
_IMAGE_DEPTH: Final = 4
# Ink: a pixel darker than INK_LEVEL (of 255) is ink; under MIN_INK_SHARE of them, the page is
# blank (at 300 dpi on a Letter page, about 1,700 pixels: a character or two of body text).
INK_LEVEL: Final = 128
MIN_INK_SHARE: Final = 0.0002
# A page OCR reads nothing sure on is an empty sheet with specks on it (dust, grain: blank) when
# under this share of it is ink, and a picture with no text in it when more is: a page of dense
# body text is about a tenth ink (first pages of the pdf.js corpus at 150 dpi: 0.094 at most).
MAX_SPECKS_INK_SHARE: Final = 0.15


@dataclass(frozen=True, slots=True)
class Image:
    pixels: bytes
    width: int
    height: int
    stride: int
    rotation: int  # clockwise degrees applied


def _scan_scale(page: Any, width_pt: float, height_pt: float) -> float | None:
    """Pixels per point of the image covering most of ``page`` (at least ``SCAN_IMAGE_SHARE``),
    as placed; None when no image does."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    area = width_pt * height_pt
    best: tuple[float, float] | None = None  # (area covered, pixels per point)
    objects = page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=_IMAGE_DEPTH)
    for count, obj in enumerate(objects):
        if count >= MAX_IMAGES_EXAMINED:
            break
        try:
            left, bottom, right, top = obj.get_bounds()
            a, b, c, d, _e, _f = obj.get_matrix().get()
            px_width, px_height = obj.get_px_size()
        except (pdfium.PdfiumError, AttributeError, ValueError):
            continue
        covered = max(0.0, min(right, width_pt) - max(left, 0.0)) * max(
            0.0, min(top, height_pt) - max(bottom, 0.0)
        )
        placed_w, placed_h = math.hypot(a, b), math.hypot(c, d)
        if covered < SCAN_IMAGE_SHARE * area or not (placed_w > 0 and placed_h > 0) or px_width < 1:
            continue
        scale = max(px_width / placed_w, px_height / placed_h)
        if math.isfinite(scale) and (best is None or covered > best[0]):
            best = (covered, scale)
    return None if best is None else best[1]


def scale_for(page: Any, page_number: int, *, dpi: int, min_dpi: int, max_pixels: int, scan: bool) -> float:
    width_pt, height_pt = (float(v) for v in page.get_size())
    if not (math.isfinite(width_pt) and math.isfinite(height_pt)) or width_pt <= 0 or height_pt <= 0:
        raise WorkerError("malformed", f"page {page_number} has no usable size")
    native = _scan_scale(page, width_pt, height_pt) if scan else None
    scale = dpi / POINTS_PER_INCH if native is None else native
    scale = max(scale, min_dpi / POINTS_PER_INCH)
    if width_pt * height_pt * scale * scale > max_pixels:
        scale = math.sqrt(max_pixels / (width_pt * height_pt)) * 0.999
    if scale * POINTS_PER_INCH < min_dpi:
        raise WorkerError(
            "memory_limit",
            f"page {page_number} is too large to OCR: it would need more than {max_pixels} pixels "
            f"at {min_dpi} dpi",
            {"page": page_number, "max_pixels": max_pixels},
        )
    # pixel for pixel: PDFium rounds a bitmap's size up, so a hair under the exact scale
    return scale * (1 - 1e-9) if native is not None and scale == native else scale


def render(page: Any, page_number: int, scale: float, rotation: int) -> Image:
    import pypdfium2 as pdfium

    try:
        bitmap = page.render(scale=scale, rotation=rotation, grayscale=True, may_draw_forms=False)
    except pdfium.PdfiumError as exc:
        raise WorkerError("malformed", f"PDFium could not render page {page_number} for OCR") from exc
    try:
        return Image(bytes(bitmap.buffer), bitmap.width, bitmap.height, bitmap.stride, rotation)
    finally:
        bitmap.close()


_INK: Final = bytes(1 if value < INK_LEVEL else 0 for value in range(256))


def ink_share(image: Image) -> float:
    """The share of ``image``'s pixels that are ink (darker than ``INK_LEVEL``)."""
    if image.stride == image.width:
        dark = image.pixels.translate(_INK).count(1)
    else:
        dark = sum(
            image.pixels[row : row + image.width].translate(_INK).count(1)
            for row in range(0, image.stride * image.height, image.stride)
        )
    return dark / max(1, image.width * image.height)


def to_page(page: Any, image: Image) -> tuple[float, float, float, float, float, float]:
    """The affine map from ``image`` (a rendering of ``page``) to its coordinates, read from
    PDFium (``FPDF_DeviceToPage``, with the rotation it was rendered at) at three corners."""
    import ctypes

    import pypdfium2.raw as pdfium_c

    width, height = image.width, image.height
    corners = []
    for x, y in ((0, 0), (width, 0), (0, height)):
        px, py = ctypes.c_double(), ctypes.c_double()
        rotate = image.rotation // 90
        pdfium_c.FPDF_DeviceToPage(page.raw, 0, 0, width, height, rotate, x, y, px, py)
        corners.append((px.value, py.value))
    (ox, oy), (wx, wy), (hx, hy) = corners
    return ((wx - ox) / width, (wy - oy) / width, (hx - ox) / height, (hy - oy) / height, ox, oy)
