"""Shared pieces of the tools' argument and result models.

Each tool module declares its ``*Input`` model (it validates what a client sends and is the
published ``inputSchema``) and its ``*Output`` model (the published ``outputSchema`` and the
``structuredContent`` it returns) from these: the document's source, page selectors, cursors,
the common limits, the error result.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Self, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    WithJsonSchema,
    model_validator,
)

from pdf_airlock.server.tools.schema import call_schema, inline_refs, result_outline

# Physical page numbers and ranges, or page labels (letters, digits, space, . _ - / ( ) + :),
# comma-separated. The worker resolves each part against the document.
__all__ = [
    "DEFAULT_ANSWER_CHARS",
    "DEFAULT_MAX_CHARS",
    "MAX_CHARS_CEILING",
    "MAX_OCR_LANGUAGES",
    "MAX_PIXELS_CEILING",
    "READ_ENGINES",
    "Cursor",
    "Deliver",
    "DeliveryInput",
    "DocumentInput",
    "ErrorInfo",
    "HiddenTextInput",
    "OcrInput",
    "OcrMode",
    "PageSelector",
    "PngImage",
    "ReadEngine",
    "SourceFields",
    "StrictInput",
    "ToolErrorOutput",
    "output_schema",
]

PAGE_SELECTOR_PATTERN = r"^[A-Za-z0-9 ._/()+:,-]*$"
MAX_SELECTOR_CHARS = 1000
MAX_CHARS_CEILING = 2_000_000
DEFAULT_MAX_CHARS = 100_000
# A default answer's text, also in structuredContent: the size hint of the long-answer tools.
DEFAULT_ANSWER_CHARS = 2 * DEFAULT_MAX_CHARS
MAX_PIXELS_CEILING = 25_000_000


def _page_number_as_selector(value: object) -> object:
    """Clients (and models) often send a single page as a number: 2 means "2"."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


PageSelector = Annotated[
    str,
    BeforeValidator(_page_number_as_selector),
    # The syntax is told once, in the server's instructions (``pdf_airlock.server.mcp.handshake``).
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "maxLength": MAX_SELECTOR_CHARS, "pattern": PAGE_SELECTOR_PATTERN},
                {"type": "integer"},
            ],
            "description": "e.g. '1-3,7' or 'iv'; default all",
        }
    ),
    Field(max_length=MAX_SELECTOR_CHARS, pattern=PAGE_SELECTOR_PATTERN),
]
# The cursor rule is told once, in the server's instructions.
Cursor = Annotated[str, Field(max_length=512)]


class StrictInput(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentInput(StrictInput):
    """Where the document comes from: exactly one of ``path`` and ``data``."""

    path: str | None = Field(None, max_length=4096)
    data: str | None = None
    password: SecretStr | None = Field(None, max_length=1024)

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.path is None) == (self.data is None):
            raise ValueError("give exactly one of 'path' and 'data'")
        return self

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The published ``inputSchema`` (``pdf_airlock.server.tools.schema.call_schema``): pydantic's schema
        written out, compact, without string length caps and with optional arguments as their
        own type. The model, not this schema, validates every call."""
        return call_schema(inline_refs(super().model_json_schema(*args, **kwargs)))


# How a text tool answers (``pdf_airlock.server.app.delivery``): inline, or its whole answer kept as a
# resource the result links to. Told once, in the server's instructions.
Deliver = Literal["inline", "resource"]


class DeliveryInput(DocumentInput):
    """The delivery option of the tools whose answers can be long."""

    deliver: Deliver = "inline"


ReadEngine = Literal["fast", "layout"]
READ_ENGINES: Final[tuple[ReadEngine, ...]] = get_args(ReadEngine)

# OCR of pages without a usable text layer (``pdf_airlock.worker.pdf.ocrpages``); the worker
# answers ``invalid_arguments`` naming the installed languages for one it does not have.
OcrMode = Literal["auto", "off", "force"]
MAX_OCR_LANGUAGES: Final = 8
# Published as a plain string (the server's instructions name the default); the pattern still
# validates every call.
OcrLanguage = Annotated[
    str,
    WithJsonSchema({"type": "string"}),
    Field(pattern=r"^[a-z]{3}(_[a-z]{2,8})?$", max_length=16),
]


class HiddenTextInput(DocumentInput):
    """What every text tool takes: text a person would not see on the rendered page is left
    out (``pdf_airlock.worker.pdf.visibility``); ``include_hidden`` returns it apart, each run
    marked with its reason. Told once, in the server's instructions."""

    include_hidden: bool = False


class OcrInput(HiddenTextInput):
    """The OCR arguments of the text tools."""

    ocr: OcrMode = "auto"  # told once, in the server's instructions
    # absent: detected page by page (the script, then its languages)
    ocr_languages: list[OcrLanguage] | None = Field(None, min_length=1, max_length=MAX_OCR_LANGUAGES)

    def ocr_job_args(self) -> dict[str, object]:
        """The OCR job arguments (OCR's limits travel in the job's limits)."""
        languages = None if self.ocr_languages is None else list(self.ocr_languages)
        return {"ocr": self.ocr, "ocr_languages": languages}


# -- published results ---------------------------------------------------------------------


class SourceFields(BaseModel):
    # Field prose is published only where a name and a type do not say it
    # (``pdf_airlock.server.tools.schema``).
    source: str
    sha256: str
    size_bytes: int


class PngImage(BaseModel):
    width_px: int
    height_px: int
    png_bytes: int
    png_sha256: str


class ErrorInfo(BaseModel):
    code: str = Field(description="One of the closed set of error codes (docs/tools.md).")
    message: str
    retryable: bool
    details: dict[str, Any]


class ToolErrorOutput(BaseModel):
    """``structuredContent`` of a failed call (``isError: true``)."""

    error: ErrorInfo


# Every result has them: the server's instructions say so once (``pdf_airlock.server.mcp.handshake``).
_SOURCE_FIELDS: Final = frozenset(SourceFields.model_fields)


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The published outputSchema: the outline of the tool's result (``pdf_airlock.server.tools.schema``): its
    own top-level properties and their types (the document's ``source``, ``sha256`` and ``size_bytes``, the
    same in every result, are told once in the instructions), nested objects by the keys they always have. No
    top-level ``required``, so a failed call's ``{"error": {...}}`` (``ToolErrorOutput``) is valid against it
    too: some clients (the TypeScript SDK) check ``structuredContent`` even when ``isError`` is true. The
    model itself
    stays the validator of every result."""
    return result_outline(model.model_json_schema(), leave_out=_SOURCE_FIELDS)
