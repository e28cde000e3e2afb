"""PNG encoding time and size by zlib level on pages of the corpus: ``python bench/png_levels.py``.

The worker encodes every ``pdf_render`` page and ``pdf_images`` extraction as PNG with Pillow at
``pdf_airlock.worker.parsers.render.PNG_COMPRESS_LEVEL``; this measures the candidates in-process, median of
3 encodings each.
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pikepdf
import pypdfium2 as pdfium

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from corpus import build  # noqa: E402

LEVELS = (1, 3, 6)


def images(files: dict[str, Path]) -> dict[str, Any]:
    def page(name: str, dpi: int) -> Any:
        return pdfium.PdfDocument(files[name])[0].render(scale=dpi / 72).to_pil()

    with pikepdf.open(files["scan-10.pdf"]) as pdf:
        photo = pdf.pages[0].Resources.XObject["/I1"]  # the page's one image (bench/corpus.py)
        assert isinstance(photo, pikepdf.Stream)
        extracted = pikepdf.PdfImage(photo).as_pil_image()
    return {
        "scan-10 page 1, 110 dpi": page("scan-10.pdf", 110),
        "paper-14 page 1, 150 dpi": page("paper-14.pdf", 150),
        "text-1, 200 dpi, grey": page("text-1.pdf", 200).convert("L"),
        "scan-10 photo, extracted": extracted,
    }


def main() -> None:
    lines = ["| image | " + " | ".join(f"level {level}" for level in LEVELS) + " |"]
    lines.append("|---|" + "---|" * len(LEVELS))
    for label, image in images(build()).items():
        cells = []
        for level in LEVELS:
            samples, size = [], 0
            for _ in range(3):
                out = io.BytesIO()
                started = time.perf_counter()
                image.save(out, format="PNG", compress_level=level)
                samples.append((time.perf_counter() - started) * 1000)
                size = len(out.getvalue())
            cells.append(f"{statistics.median(samples):.0f} ms, {size // 1000} KB")
        lines.append(f"| {label} {image.size[0]}x{image.size[1]} | " + " | ".join(cells) + " |")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
