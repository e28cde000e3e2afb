"""Shared pieces of the strict, bounded models a job child's untrusted JSON must satisfy.

Each tool module declares the model of its own job's result from these. Every string has a
length cap, every list a size cap, and no model admits extra keys; anything else fails
validation and the call ends as ``crashed`` (tests/unit/test_untrusted.py checks every model of every
tool).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

__all__ = [
    "MAX_COUNT",
    "MAX_OFFSET",
    "MAX_PAGES_IN_ANSWER",
    "MAX_PNG_BASE64",
    "MAX_TEXT",
    "Bounded",
    "Confidence",
    "Hidden",
    "HiddenReason",
    "HiddenRun",
    "Label",
    "OcrLanguages",
    "OcrRotation",
    "Rect",
    "TextLayer",
    "TextSource",
    "UntrustedModel",
]


MAX_TEXT = 4096
MAX_PAGES_IN_ANSWER = 100_000
MAX_PNG_BASE64 = 48 * 1024 * 1024
MAX_COUNT = 10_000_000
MAX_OFFSET = 1 << 40


Bounded = Annotated[str, Field(max_length=MAX_TEXT)]


class UntrustedModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


Label = Annotated[str, Field(max_length=64)]


# Why a text run is left out (``pdf_airlock.worker.pdf.visibility_pixels.REASONS``).
HiddenReason = Literal[
    "invisible_mode",
    "same_colour_as_background",
    "transparent",
    "too_small",
    "clipped",
    "outside_crop_box",
    "covered",
    "optional_content_off",
    "no_visible_pixels",
]
MAX_HIDDEN_RUNS = 10_000  # in one answer; a page lists at most 200
MAX_HIDDEN_RUN_CHARS = 2000


class HiddenRun(UntrustedModel):
    """A run of text a person would not see, returned apart with ``include_hidden``."""

    page: int = Field(ge=1)
    # Published as a string: the reasons are listed once, in docs/tools.md; the Literal still
    # validates every run.
    reason: Annotated[HiddenReason, WithJsonSchema({"type": "string"})]
    text: Annotated[str, Field(max_length=MAX_HIDDEN_RUN_CHARS)]
    box: list[float] = Field(
        min_length=4, max_length=4, description="left, bottom, right, top in PDF points."
    )


Hidden = Annotated[list[HiddenRun], Field(max_length=MAX_HIDDEN_RUNS)]

TextLayer = Literal["ok", "none", "unusable"]
TextSource = Literal["text_layer", "ocr"]
Confidence = Annotated[int, Field(ge=0, le=100)]
# The languages OCR read a page with (Tesseract's codes) and the clockwise turn it applied.
OcrLanguages = Annotated[
    list[Annotated[str, Field(max_length=16, pattern=r"^[a-z]{3}(_[a-z]{2,8})?$")]], Field(max_length=16)
]
OcrRotation = Literal[0, 90, 180, 270]


Rect = list[float]
