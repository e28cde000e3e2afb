"""Tool argument and result models: each is both the published JSON Schema and the validator.

``*Input`` models validate what clients send. ``*Output`` models are what the tool publishes as
``outputSchema`` and returns as ``structuredContent``. The ``*Untrusted`` models that validate a
job child's result live in ``pdf_airlock.server.tools.untrusted`` and are re-exported here.
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
from pdf_airlock.server.tools.untrusted import (
    ActionLocation,
    Annotation,
    Attachment,
    EncryptionInfo,
    ExtractedFile,
    Features,
    FormField,
    HiddenText,
    ImageInfo,
    MetadataConflict,
    OutlineItem,
    PageCountUntrusted,
    PageInfo,
    PageText,
    PdfAnnotationsUntrusted,
    PdfAttachmentsUntrusted,
    PdfFormsUntrusted,
    PdfImagesUntrusted,
    PdfInfoUntrusted,
    PdfOutlineUntrusted,
    PdfReadUntrusted,
    PdfRenderUntrusted,
    PdfSearchUntrusted,
    PdfSecurityUntrusted,
    RepairReport,
    SearchHit,
    SecurityEncryption,
    Signature,
    XfaField,
)

__all__ = [
    "READ_ENGINES",
    "DocumentInput",
    "ExtractedImageInfo",
    "PageCountUntrusted",
    "PdfAnnotationsInput",
    "PdfAnnotationsOutput",
    "PdfAnnotationsUntrusted",
    "PdfAttachmentsInput",
    "PdfAttachmentsOutput",
    "PdfAttachmentsUntrusted",
    "PdfFormsInput",
    "PdfFormsOutput",
    "PdfFormsUntrusted",
    "PdfImagesInput",
    "PdfImagesOutput",
    "PdfImagesUntrusted",
    "PdfInfoInput",
    "PdfInfoOutput",
    "PdfInfoUntrusted",
    "PdfOutlineInput",
    "PdfOutlineOutput",
    "PdfOutlineUntrusted",
    "PdfReadInput",
    "PdfReadOutput",
    "PdfReadUntrusted",
    "PdfRenderInput",
    "PdfRenderOutput",
    "PdfRenderUntrusted",
    "PdfSearchInput",
    "PdfSearchOutput",
    "PdfSearchUntrusted",
    "PdfSecurityInput",
    "PdfSecurityOutput",
    "PdfSecurityUntrusted",
    "PngImage",
    "ToolErrorOutput",
    "output_schema",
]

# Physical page numbers and ranges, or page labels (letters, digits, space, . _ - / ( ) + :),
# comma-separated. The worker resolves each part against the document.
PAGE_SELECTOR_PATTERN = r"^[A-Za-z0-9 ._/()+:,-]*$"
MAX_SELECTOR_CHARS = 1000
MAX_CHARS_CEILING = 2_000_000
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


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentInput(_Strict):
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


class PdfInfoInput(DocumentInput):
    pages: PageSelector | None = None
    cursor: Cursor | None = None


ReadEngine = Literal["fast", "layout"]
READ_ENGINES: Final[tuple[ReadEngine, ...]] = get_args(ReadEngine)


class PdfReadInput(DocumentInput):
    pages: PageSelector | None = None
    engine: ReadEngine = "fast"
    max_chars: int = Field(100_000, ge=1, le=MAX_CHARS_CEILING)
    cursor: Cursor | None = None


class PdfOutlineInput(DocumentInput):
    max_depth: int = Field(16, ge=1, le=64)
    max_items: int = Field(1000, ge=1, le=10_000)
    cursor: Cursor | None = None


class PdfAttachmentsInput(DocumentInput):
    extract: str | None = Field(None, max_length=1000, description="name of one to return")
    max_bytes: int = Field(10 * 1024 * 1024, ge=1, le=10 * 1024 * 1024, description="largest to extract")
    max_items: int = Field(1000, ge=1, le=1000)
    cursor: Cursor | None = None


class PdfAnnotationsInput(DocumentInput):
    pages: PageSelector | None = None
    max_items: int = Field(2000, ge=1, le=20_000)
    cursor: Cursor | None = None


class PdfFormsInput(DocumentInput):
    max_items: int = Field(2000, ge=1, le=20_000)
    cursor: Cursor | None = None


class PdfSecurityInput(DocumentInput):
    pass


class PdfSearchInput(DocumentInput):
    query: str = Field(min_length=1, max_length=1000)
    regex: bool = False
    case_sensitive: bool = False
    whole_word: bool = False
    pages: PageSelector | None = None
    context_chars: int = Field(80, ge=0, le=1000)
    max_results: int = Field(100, ge=1, le=1000)
    time_budget_ms: int = Field(2000, ge=10, le=30_000)
    cursor: Cursor | None = None


class PdfRenderInput(DocumentInput):
    page: PageSelector = Field("1", description="one page: number or label")
    dpi: int = Field(110, ge=18, le=600)
    max_pixels: int = Field(4_000_000, ge=10_000, le=MAX_PIXELS_CEILING, description="width x height")


class ImageRef(_Strict):
    page: int = Field(ge=1)
    name: str = Field(min_length=1, max_length=600)


class PdfImagesInput(DocumentInput):
    pages: PageSelector | None = None
    max_items: int = Field(500, ge=1, le=5000)
    extract: ImageRef | None = None
    max_pixels: int = Field(4_000_000, ge=1, le=MAX_PIXELS_CEILING, description="largest to extract")
    cursor: Cursor | None = None


# -- published results ---------------------------------------------------------------------


class _Source(BaseModel):
    # Field prose is published only where a name and a type do not say it
    # (``pdf_airlock.server.tools.schema``).
    source: str
    sha256: str
    size_bytes: int


class PdfInfoOutput(_Source):
    page_count: int
    pdf_version: str
    encrypted: bool
    encryption: EncryptionInfo | None
    producer: str | None
    metadata: dict[str, str]
    xmp: dict[str, str] | None
    metadata_conflicts: list[MetadataConflict]
    features: Features | None
    repair: RepairReport | None
    tokens_estimate: int
    scanned_pages: int
    pages: list[PageInfo]
    cursor: str | None
    warnings: list[str]


class PdfReadOutput(_Source):
    engine: ReadEngine
    page_count: int
    selected_pages: int
    pages: list[PageText]
    cursor: str | None
    warnings: list[str]


class PdfOutlineOutput(_Source):
    items: list[OutlineItem]
    truncated: bool
    cursor: str | None
    warnings: list[str]


class PdfAttachmentsOutput(_Source):
    attachments: list[Attachment]
    extracted: ExtractedFile | None
    cursor: str | None
    warnings: list[str]


class PdfAnnotationsOutput(_Source):
    annotations: list[Annotation]
    cursor: str | None
    warnings: list[str]


class PdfFormsOutput(_Source):
    fields: list[FormField]
    xfa: bool
    xfa_fields: list[XfaField] = Field(description="An XFA form's data: dotted names and values.")
    cursor: str | None
    warnings: list[str]


class PdfSecurityOutput(_Source):
    risk: Literal["low", "medium", "high"] = Field(
        description="high: JavaScript, Launch, submit/import, rich media, XFA; medium: links out, "
        "attachments, hidden text, partial signature"
    )
    reasons: list[str]
    actions: dict[str, int] = Field(description="count per action type")
    locations: list[ActionLocation]
    xfa: bool
    rich_media: int
    embedded_files: int
    encryption: SecurityEncryption | None
    incremental_updates: int
    signatures: list[Signature]
    hidden_text: HiddenText
    warnings: list[str]


class PdfSearchOutput(_Source):
    page_count: int
    selected_pages: int
    pages_searched: int
    hits: list[SearchHit]
    cursor: str | None
    warnings: list[str]


class PngImage(BaseModel):
    width_px: int
    height_px: int
    png_bytes: int
    png_sha256: str


class PdfRenderOutput(_Source):
    page: int
    label: str
    page_count: int
    dpi: float
    image: PngImage
    warnings: list[str]


class ExtractedImageInfo(PngImage):
    page: int
    name: str


class PdfImagesOutput(_Source):
    page_count: int
    selected_pages: int
    images: list[ImageInfo]
    extracted: ExtractedImageInfo | None
    cursor: str | None
    warnings: list[str]


class ErrorInfo(BaseModel):
    code: str = Field(description="One of the closed set of error codes (see the README).")
    message: str
    retryable: bool
    details: dict[str, Any]


class ToolErrorOutput(BaseModel):
    """``structuredContent`` of a failed call (``isError: true``)."""

    error: ErrorInfo


# Every result has them: the server's instructions say so once (``pdf_airlock.server.mcp.handshake``).
_SOURCE_FIELDS: Final = frozenset(_Source.model_fields)


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The published outputSchema: the outline of the tool's result (``pdf_airlock.server.tools.schema``): its
    own top-level properties and their types (the document's ``source``, ``sha256`` and ``size_bytes``, the
    same in every result, are told once in the instructions), nested objects by the keys they always have. No
    top-level ``required``, so a failed call's ``{"error": {...}}`` (``ToolErrorOutput``) is valid against it
    too: some clients (the TypeScript SDK) check ``structuredContent`` even when ``isError`` is true. The
    model itself
    stays the validator of every result."""
    return result_outline(model.model_json_schema(), leave_out=_SOURCE_FIELDS)
