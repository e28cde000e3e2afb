"""Tool argument and result models: each is both the published JSON Schema and the validator.

``*Input`` models validate what clients send. ``*Output`` models are what the tool publishes as
``outputSchema`` and returns as ``structuredContent``. The ``*Untrusted`` models that validate a
job child's result live in ``server.untrusted`` and are re-exported here.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Self, get_args

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    RootModel,
    SecretStr,
    WithJsonSchema,
    model_validator,
)

from server.schema import drop_titles, inline_refs
from server.untrusted import (
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
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "string", "maxLength": 1000, "pattern": PAGE_SELECTOR_PATTERN},
                {"type": "integer"},
            ],
            "description": (
                "Pages, 1-based: '1-3,7', '10-' (to the end), 'all', or one page number; page labels "
                "as a viewer shows them also work ('iv', 'iii-v', 'A-1')."
            ),
            "examples": ["1-3,7", 2, "iv"],
        }
    ),
    Field(
        max_length=1000,
        pattern=PAGE_SELECTOR_PATTERN,
        description="Pages to include, 1-based: '1-3,7', '10-' (to the end), 'all', or page labels ('iv').",
        examples=["1-3,7"],
    ),
]
Cursor = Annotated[str, Field(max_length=512, description="Opaque cursor from a previous answer.")]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DocumentInput(_Strict):
    """Where the document comes from: exactly one of ``path`` and ``data``."""

    path: str | None = Field(
        None,
        max_length=4096,
        description="File path or file:// URI, absolute or relative to a configured root.",
        examples=["report.pdf"],
    )
    data: str | None = Field(None, description="The whole document as base64, instead of a path.")
    password: SecretStr | None = Field(None, max_length=1024, description="Password of an encrypted PDF.")

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if (self.path is None) == (self.data is None):
            raise ValueError("give exactly one of 'path' and 'data'")
        return self


class PdfInfoInput(DocumentInput):
    pages: PageSelector | None = None
    cursor: Cursor | None = None


ReadEngine = Literal["fast", "layout"]
READ_ENGINES: Final[tuple[ReadEngine, ...]] = get_args(ReadEngine)


class PdfReadInput(DocumentInput):
    pages: PageSelector | None = None
    engine: ReadEngine = Field(
        "fast", description="'fast' (PDFium) or 'layout' (pdfminer.six layout analysis, reading order)."
    )
    max_chars: int = Field(
        100_000, ge=1, le=MAX_CHARS_CEILING, description="Most characters of text in one answer; see cursor."
    )
    cursor: Cursor | None = None


class PdfOutlineInput(DocumentInput):
    max_depth: int = Field(16, ge=1, le=64, description="Deepest outline level to return.")
    max_items: int = Field(1000, ge=1, le=10_000, description="Most outline items in one answer; see cursor.")
    cursor: Cursor | None = None


class PdfAttachmentsInput(DocumentInput):
    extract: str | None = Field(
        None,
        max_length=1000,
        description="Name of one attachment (as listed) to return as base64; never parsed.",
    )
    max_bytes: int = Field(
        10 * 1024 * 1024, ge=1, le=10 * 1024 * 1024, description="Largest attachment that may be extracted."
    )
    max_items: int = Field(
        1000, ge=1, le=1000, description="Most attachments listed in one answer; see cursor."
    )
    cursor: Cursor | None = None


class PdfAnnotationsInput(DocumentInput):
    pages: PageSelector | None = None
    max_items: int = Field(2000, ge=1, le=20_000, description="Most annotations in one answer; see cursor.")
    cursor: Cursor | None = None


class PdfFormsInput(DocumentInput):
    max_items: int = Field(2000, ge=1, le=20_000, description="Most form fields in one answer; see cursor.")
    cursor: Cursor | None = None


class PdfSecurityInput(DocumentInput):
    pass


class PdfSearchInput(DocumentInput):
    query: str = Field(min_length=1, max_length=1000, description="Text to find, or a regular expression.")
    regex: bool = Field(False, description="Treat query as a regular expression (Python 're' syntax).")
    case_sensitive: bool = False
    whole_word: bool = Field(False, description="Match only where no letter or digit touches either end.")
    pages: PageSelector | None = None
    context_chars: int = Field(80, ge=0, le=1000, description="Characters of context before and after.")
    max_results: int = Field(100, ge=1, le=1000, description="Most hits in one answer; see cursor.")
    time_budget_ms: int = Field(
        2000,
        ge=10,
        le=30_000,
        description="Time the search may take in all; past it the call fails (timeout).",
    )
    cursor: Cursor | None = None


class PdfRenderInput(DocumentInput):
    page: PageSelector = Field("1", description="One page: a number or a page label.", examples=[1, "iv"])
    dpi: int = Field(
        110, ge=18, le=600, description="Resolution; lowered (with a warning) to fit max_pixels."
    )
    max_pixels: int = Field(
        4_000_000, ge=10_000, le=MAX_PIXELS_CEILING, description="Largest image, in pixels (width x height)."
    )


class ImageRef(_Strict):
    page: int = Field(ge=1, description="Page number as listed.")
    name: str = Field(
        min_length=1, max_length=600, description="Image name as listed, e.g. 'Im0' or 'Fm0/Im1'."
    )


class PdfImagesInput(DocumentInput):
    pages: PageSelector | None = None
    max_items: int = Field(500, ge=1, le=5000, description="Most images listed in one answer; see cursor.")
    extract: ImageRef | None = Field(None, description="One listed image to return as a PNG image block.")
    max_pixels: int = Field(
        4_000_000, ge=1, le=MAX_PIXELS_CEILING, description="Largest image that may be extracted, in pixels."
    )
    cursor: Cursor | None = None


# -- published results ---------------------------------------------------------------------


class _Source(BaseModel):
    source: str = Field(description="The document as given: path relative to its root, or '<inline data>'.")
    sha256: str = Field(description="SHA-256 of the document's bytes.")
    size_bytes: int


class PdfInfoOutput(_Source):
    page_count: int
    pdf_version: str
    encrypted: bool
    encryption: EncryptionInfo | None
    producer: str | None
    metadata: dict[str, str] = Field(description="The Info dictionary.")
    xmp: dict[str, str] | None = Field(description="XMP properties ('dc:title', ...); null without XMP.")
    metadata_conflicts: list[MetadataConflict] = Field(
        description="Facts the Info dictionary and XMP state differently (a viewer may show either)."
    )
    features: Features | None = Field(description="null when only PDFium could read the document.")
    repair: RepairReport | None = Field(description="What qpdf repaired to read the file; null as above.")
    tokens_estimate: int = Field(description="Sum of tokens_estimate over the pages in this answer.")
    scanned_pages: int = Field(description="Pages in this answer that look scanned.")
    pages: list[PageInfo] = Field(
        description="Per-page summary of the selected pages (up to 1000 per answer)."
    )
    cursor: str | None = Field(description="Pass back to get the next part of the page list; null when done.")
    warnings: list[str]


class PdfReadOutput(_Source):
    engine: ReadEngine
    page_count: int
    selected_pages: int
    pages: list[PageText]
    cursor: str | None = Field(
        description="Pass back (same arguments) to continue; null when all text is here."
    )
    warnings: list[str]


class PdfOutlineOutput(_Source):
    items: list[OutlineItem] = Field(description="Bookmarks in reading order; 'level' gives the nesting.")
    truncated: bool = Field(description="True when items deeper than max_depth were left out.")
    cursor: str | None = Field(description="Pass back (same arguments) for more items; null when done.")
    warnings: list[str]


class PdfAttachmentsOutput(_Source):
    attachments: list[Attachment]
    extracted: ExtractedFile | None = Field(description="The attachment named by 'extract', base64-encoded.")
    cursor: str | None = Field(description="Pass back (same arguments) for more attachments; null when done.")
    warnings: list[str]


class PdfAnnotationsOutput(_Source):
    annotations: list[Annotation]
    cursor: str | None = Field(description="Pass back (same arguments) for more annotations; null when done.")
    warnings: list[str]


class PdfFormsOutput(_Source):
    fields: list[FormField]
    xfa: bool = Field(description="The form also carries XFA (an XML form a PDF reader may render instead).")
    cursor: str | None = Field(description="Pass back (same arguments) for more fields; null when done.")
    warnings: list[str]


class PdfSecurityOutput(_Source):
    risk: Literal["low", "medium", "high"] = Field(
        description="high: JavaScript, Launch, form submission/import, rich media or XFA; medium: links out, "
        "embedded files, hidden text or a partial signature; low: none of these."
    )
    reasons: list[str]
    actions: dict[str, int] = Field(
        description="Count of each action type found anywhere a reader triggers one."
    )
    locations: list[ActionLocation]
    xfa: bool
    rich_media: int
    embedded_files: int
    encryption: SecurityEncryption | None
    incremental_updates: int = Field(description="Revisions appended after the first save.")
    signatures: list[Signature]
    hidden_text: HiddenText
    warnings: list[str]


class PdfSearchOutput(_Source):
    page_count: int
    selected_pages: int
    pages_searched: int = Field(description="Pages searched by this answer.")
    hits: list[SearchHit] = Field(description="Hits in page order, then in reading order on the page.")
    cursor: str | None = Field(description="Pass back (same arguments) for more hits; null when done.")
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
    dpi: float = Field(description="The resolution actually used (lower than asked if max_pixels required).")
    image: PngImage = Field(description="The PNG itself is the image block in 'content'.")
    warnings: list[str]


class ExtractedImageInfo(PngImage):
    page: int
    name: str


class PdfImagesOutput(_Source):
    page_count: int
    selected_pages: int
    images: list[ImageInfo]
    extracted: ExtractedImageInfo | None = Field(
        description="The image named by 'extract'; its PNG is the image block in 'content'."
    )
    cursor: str | None = Field(description="Pass back (same arguments) for more images; null when done.")
    warnings: list[str]


class ErrorInfo(BaseModel):
    code: str = Field(description="One of the closed set of error codes (see the README).")
    message: str
    retryable: bool
    details: dict[str, Any]


class ToolErrorOutput(BaseModel):
    """``structuredContent`` of a failed call (``isError: true``)."""

    error: ErrorInfo


def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The published outputSchema: the tool's result or the error envelope. Some clients (the
    TypeScript SDK) validate ``structuredContent`` even when ``isError`` is true. Written out
    without ``$ref``s (``server.schema``): cheaper for a client to check on every answer; and
    without titles, as every published schema."""
    union: type[RootModel[Any]] = RootModel[model | ToolErrorOutput]  # type: ignore[valid-type]
    return drop_titles(inline_refs({"type": "object", **union.model_json_schema()}))
