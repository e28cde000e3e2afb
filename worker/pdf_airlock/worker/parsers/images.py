"""``pdf_images``: image XObjects per page, and optionally one of them as a PNG.

Input: untrusted bytes. qpdf (pikepdf) walks each selected page's resources, descending into
Form XObjects (depth-capped, cycle-safe), and reports each image's dictionary facts without
decoding it. With ``extract``, one image is decoded, but only if its declared pixel count is
within the budget; qpdf's decode limits apply to its stream.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Iterator
from typing import Any, Final

import pikepdf

from pdf_airlock.worker.contract import WorkerError
from pdf_airlock.worker.parsers.render import encode_png
from pdf_airlock.worker.pdf.opening import clean_string, open_pikepdf
from pdf_airlock.worker.pdf.pages import pikepdf_label, pikepdf_labels, select_pages

__all__ = ["KIND", "run", "warm_up"]

KIND: Final = "pdf_images"

MAX_FORM_DEPTH: Final = 8
MAX_XOBJECTS_PER_PAGE: Final = 10_000
MAX_WARNINGS: Final = 100
_PNG_MODES: Final = {"1", "L", "LA", "P", "RGB", "RGBA", "I;16"}


def _name(value: object) -> str:
    return clean_string(str(value).lstrip("/"), 64)


def _int(value: object) -> int | None:
    try:
        number = int(value)  # type: ignore[call-overload]
    except (TypeError, ValueError, OverflowError, pikepdf.PdfError):
        return None
    return number if 0 <= number <= 10**9 else None


def _colour_space(stream: pikepdf.Object) -> str | None:
    space = stream.get("/ColorSpace")
    if space is None:
        return None
    if isinstance(space, pikepdf.Array):
        return _name(space[0]) if len(space) else None
    return _name(space)


def _filters(stream: pikepdf.Object) -> list[str]:
    value = stream.get("/Filter")
    if value is None:
        return []
    items = list(value)[:8] if isinstance(value, pikepdf.Array) else [value]
    return [_name(item) for item in items]


def _walk(
    resources: pikepdf.Object | None, prefix: str, depth: int, seen: set[tuple[int, int]], budget: list[int]
) -> Iterator[tuple[str, pikepdf.Stream]]:
    """(path, image stream) pairs; ``seen`` stops Form XObject cycles, ``budget`` caps the walk."""
    xobjects = resources.get("/XObject") if isinstance(resources, pikepdf.Dictionary) else None
    if not isinstance(xobjects, pikepdf.Dictionary):
        return
    for key in sorted(xobjects.keys()):
        budget[0] -= 1
        if budget[0] < 0:
            return
        stream = xobjects.get(key)
        if not isinstance(stream, pikepdf.Stream):
            continue
        path = f"{prefix}{_name(key)}"
        subtype = stream.get("/Subtype")
        if subtype == pikepdf.Name.Image:
            yield path, stream
        elif subtype == pikepdf.Name.Form and depth < MAX_FORM_DEPTH:
            ident = stream.objgen
            if ident != (0, 0):
                if ident in seen:
                    continue
                seen.add(ident)
            yield from _walk(stream.get("/Resources"), f"{path}/", depth + 1, seen, budget)


def _describe(page: int, label: str, path: str, stream: pikepdf.Object) -> dict[str, Any]:
    objnum, gen = stream.objgen
    return {
        "page": page,
        "label": label,
        "name": path,
        "object": f"{objnum} {gen}" if objnum else None,
        "width": _int(stream.get("/Width")),
        "height": _int(stream.get("/Height")),
        "bits_per_component": _int(stream.get("/BitsPerComponent")),
        "color_space": _colour_space(stream),
        "filters": _filters(stream),
        "image_mask": bool(stream.get("/ImageMask", False)),
        "has_soft_mask": "/SMask" in stream,
        "stream_bytes": _int(stream.get("/Length")),
    }


def _extract(item: dict[str, Any], stream: pikepdf.Stream, max_pixels: int) -> dict[str, Any]:
    width, height = item["width"], item["height"]
    if not width or not height:
        raise WorkerError("malformed", "the image has no usable /Width and /Height")
    if width * height > max_pixels:
        raise WorkerError(
            "decompression_limit",
            f"the image is {width} x {height} pixels, over max_pixels ({max_pixels})",
            {"width": width, "height": height, "max_pixels": max_pixels},
        )
    try:
        image = pikepdf.PdfImage(stream).as_pil_image()
        if image.mode not in _PNG_MODES:
            image = image.convert("RGB")
        png = encode_png(image)
    except MemoryError:
        raise
    except Exception as exc:
        raise WorkerError("malformed", "the image could not be decoded (unsupported or damaged)") from exc
    return {
        "page": item["page"],
        "name": item["name"],
        "width_px": image.size[0],
        "height_px": image.size[1],
        "png_base64": base64.b64encode(png).decode("ascii"),
    }


def run(data: bytes, args: dict[str, Any]) -> dict[str, Any]:
    max_items = int(args["max_items"])
    start = int(args.get("start", 0))
    wanted = args.get("extract")
    warnings: list[str] = []
    images: list[dict[str, Any]] = []
    extracted = None
    found = 0
    next_start = None
    with open_pikepdf(data, args.get("password"), warnings) as pdf:
        page_count = len(pdf.pages)
        labels = pikepdf_labels(pdf)
        indices = select_pages(args.get("pages"), page_count, labels)
        for index in indices:
            if next_start is not None and (wanted is None or extracted is not None):
                break
            try:
                resources = pdf.pages[index].obj.get("/Resources")
                found_here = list(_walk(resources, "", 0, set(), [MAX_XOBJECTS_PER_PAGE]))
            except (pikepdf.PdfError, ValueError, TypeError, RecursionError):
                warnings.append(f"page {index + 1}: its resources could not be read")
                continue
            label = (pikepdf_label(pdf, index) or str(index + 1)) if found_here else ""
            for path, stream in found_here:
                item = _describe(index + 1, label, path, stream)
                if wanted is not None and (wanted["page"], wanted["name"]) == (index + 1, path):
                    extracted = _extract(item, stream, int(args["max_pixels"]))
                if start <= found < start + max_items:
                    images.append(item)
                elif found == start + max_items and next_start is None:
                    next_start = found
                found += 1
        if wanted is not None and extracted is None:
            raise WorkerError("invalid_arguments", "no image with that page and name (see the list)")
    return {
        "page_count": page_count,
        "selected_pages": len(indices),
        "images": images,
        "extracted": extracted,
        "next_start": next_start,
        "warnings": warnings[:MAX_WARNINGS],
    }


def warm_up(sample: bytes) -> None:
    _warm_images()


def _warm_images() -> None:
    """Image decoding: every Pillow plugin registered, and one image per common filter decoded
    and encoded to PNG through the same code path as a job."""
    import pikepdf
    from PIL import Image

    Image.init()
    pdf = pikepdf.new()
    pdf.add_blank_page()
    xobjects = pikepdf.Dictionary()
    sample = Image.new("RGB", (4, 4), (200, 30, 30))
    jpeg = io.BytesIO()
    sample.save(jpeg, format="JPEG")
    # Unfiltered data is Flate-encoded by save(); the JPEG keeps its own filter.
    streams = {"Flate": (b"\xc8\x1e\x1e" * 16, None), "DCT": (jpeg.getvalue(), pikepdf.Name.DCTDecode)}
    for name, (raw, decode_filter) in streams.items():
        stream = pikepdf.Stream(pdf, raw)
        stream.Type, stream.Subtype = pikepdf.Name.XObject, pikepdf.Name.Image
        stream.Width, stream.Height, stream.BitsPerComponent = 4, 4, 8
        stream.ColorSpace = pikepdf.Name.DeviceRGB
        if decode_filter is not None:
            stream.Filter = decode_filter
        xobjects[f"/{name}"] = stream
    pdf.pages[0].Resources = pikepdf.Dictionary(XObject=xobjects)
    out = io.BytesIO()
    pdf.save(out)
    for name in streams:
        result = run(
            out.getvalue(), {"max_items": 10, "max_pixels": 100, "extract": {"page": 1, "name": name}}
        )
        if result["extracted"] is None:
            raise RuntimeError("image extraction failed its warm-up")
