"""``pdf_render``: one page rendered to a PNG by PDFium, within a pixel budget.

Input: untrusted bytes, a page (number or label), a resolution and a pixel budget. The budget
is checked before PDFium allocates the bitmap: a page whose size at the requested resolution
would exceed it is rendered at the largest resolution that fits, and a warning says so. Forms
and annotations are drawn as their appearance streams; no JavaScript runs (PDFium's form
environment is never initialised).
"""

from __future__ import annotations

import base64
import io
import math
from typing import Any, Final

import pypdfium2 as pdfium

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.pdf.opening import open_document
from pdf_airlock.worker.pdf.pages import pdfium_label, pdfium_labels, select_pages

__all__ = ["KIND", "encode_png", "fit_scale", "run", "warm_up"]

KIND: Final = "pdf_render"

POINTS_PER_INCH: Final = 72.0
# zlib levels 1-3 use its fast matcher, 4-9 the lazy one. On rendered pages and decoded photos
# level 3 encodes several times faster than the default 6, and the PNG is no larger in colour
# (a grey text page comes out somewhat larger), as a study (since retired: CHANGELOG) measured on
# the benchmark corpus.
PNG_COMPRESS_LEVEL: Final = 3


def fit_scale(width_pt: float, height_pt: float, dpi: float, max_pixels: int) -> float:
    """The scale (pixels per point) to render at: the requested one unless it breaks the budget."""
    scale = dpi / POINTS_PER_INCH
    area = max(width_pt, 1.0) * max(height_pt, 1.0)
    if area * scale * scale > max_pixels:
        scale = math.sqrt(max_pixels / area)
    return scale


def encode_png(image: Any) -> bytes:
    from PIL import ImageFile

    if isinstance(image, ImageFile.ImageFile):
        # Saving an image opened from a file compares paths (os.path.abspath -> getcwd, which
        # the sandbox refuses); a plain in-memory copy has no file behind it.
        image = image.copy()
    out = io.BytesIO()
    image.save(out, format="PNG", compress_level=PNG_COMPRESS_LEVEL)
    return out.getvalue()


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    dpi = float(args["dpi"])
    max_pixels = int(args["max_pixels"])
    opened = open_document(data, args.get("password"))
    document, warnings = opened.document, list(opened.warnings)
    try:
        page_count = len(document)
        labels = pdfium_labels(document)
        selection = select_pages(str(args["page"]), page_count, labels)
        if len(selection) != 1:
            raise WorkerError("invalid_arguments", "pdf_render renders exactly one page")
        index = selection[0]
        try:
            page = document[index]
        except pdfium.PdfiumError as exc:
            raise WorkerError("malformed", f"page {index + 1} could not be loaded by PDFium") from exc
        try:
            width_pt, height_pt = (float(v) for v in page.get_size())
            if not (math.isfinite(width_pt) and math.isfinite(height_pt)) or width_pt <= 0 or height_pt <= 0:
                raise WorkerError("malformed", f"page {index + 1} has no usable size")
            scale = fit_scale(width_pt, height_pt, dpi, max_pixels)
            # Rounding up may add a row or column: shrink until the bitmap is within budget.
            while math.ceil(width_pt * scale) * math.ceil(height_pt * scale) > max_pixels and scale > 1e-3:
                scale *= 0.999
            if scale < dpi / POINTS_PER_INCH:
                warnings.append(
                    f"rendered at {scale * POINTS_PER_INCH:.1f} dpi instead of {dpi:g}: "
                    f"the page would exceed max_pixels ({max_pixels})"
                )
            try:
                bitmap = page.render(scale=scale, may_draw_forms=False)
            except pdfium.PdfiumError as exc:
                raise WorkerError("malformed", f"PDFium could not render page {index + 1}") from exc
            image = bitmap.to_pil()
            png = encode_png(image)
            width_px, height_px = image.size
            bitmap.close()
        finally:
            page.close()
        label = pdfium_label(document, index)
    finally:
        document.close()
    return {
        "page": index + 1,
        "label": label,
        "page_count": page_count,
        "width_px": width_px,
        "height_px": height_px,
        "dpi": round(scale * POINTS_PER_INCH, 2),
        "png_base64": base64.b64encode(png).decode("ascii"),
        "warnings": warnings,
    }


def warm_up(sample: bytes) -> None:
    if not run(sample, {"page": "1", "dpi": 36, "max_pixels": 100_000})["png_base64"]:
        raise RuntimeError("pdf_render failed its warm-up")
