"""What a job child may return: strict, bounded models that its untrusted JSON must satisfy.

Every string has a length cap, every list a size cap, and no model admits extra keys; anything else fails
validation and the call ends as ``crashed``. ``pdf_airlock.server.tools.models`` builds the published outputs
from these once they validate.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ActionLocation",
    "Annotation",
    "Attachment",
    "Bounded",
    "EncryptionInfo",
    "ExtractedFile",
    "ExtractedImage",
    "Features",
    "FormField",
    "HiddenText",
    "ImageInfo",
    "Label",
    "MetadataConflict",
    "OutlineItem",
    "PageCountUntrusted",
    "PageInfo",
    "PageText",
    "PdfAnnotationsUntrusted",
    "PdfAttachmentsUntrusted",
    "PdfFormsUntrusted",
    "PdfImagesUntrusted",
    "PdfInfoUntrusted",
    "PdfOutlineUntrusted",
    "PdfReadUntrusted",
    "PdfRenderUntrusted",
    "PdfSearchUntrusted",
    "PdfSecurityUntrusted",
    "ReadPosition",
    "Rect",
    "RepairReport",
    "SearchHit",
    "SearchPosition",
    "SecurityEncryption",
    "Signature",
    "StreamLine",
    "StreamedPage",
    "StreamedSelection",
    "XfaField",
]

_MAX_TEXT = 4096
_MAX_PAGES_IN_ANSWER = 100_000
_MAX_PNG_BASE64 = 48 * 1024 * 1024
_MAX_COUNT = 10_000_000
_MAX_OFFSET = 1 << 40


Bounded = Annotated[str, Field(max_length=_MAX_TEXT)]


class _UntrustedModel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class EncryptionInfo(_UntrustedModel):
    revision: int = Field(ge=0, le=100)
    version: int = Field(ge=0, le=100)
    key_bits: int = Field(ge=0, le=4096)
    method: Bounded


Label = Annotated[str, Field(max_length=64)]


class PageInfo(_UntrustedModel):
    page: int = Field(ge=1)
    label: Label = Field(description="The page label a viewer shows ('iv', 'A-1'); the number if none.")
    width_pt: float = Field(ge=0)
    height_pt: float = Field(ge=0)
    rotation: int
    has_text: bool
    chars: int = Field(ge=0, description="Characters in the page's text layer.")
    tokens_estimate: int = Field(ge=0, description="About chars / 4: a rough LLM token count of the text.")
    scanned: bool = Field(
        description="Looks scanned: almost no text layer and images cover at least half the page (needs OCR)."
    )


class MetadataConflict(_UntrustedModel):
    field: Annotated[str, Field(max_length=32)]
    info: Bounded
    xmp: Bounded


class Features(_UntrustedModel):
    tagged: bool = Field(description="Tagged PDF (/MarkInfo /Marked): has a logical structure tree.")
    linearized: bool = Field(description="Linearized ('fast web view').")
    has_forms: bool
    has_xfa: bool
    has_attachments: bool
    has_javascript: bool = Field(description="Document-level JavaScript; see pdf_security for all of it.")
    has_outline: bool
    has_page_labels: bool


class RepairReport(_UntrustedModel):
    xref_rebuilt: bool = Field(
        description="qpdf had to reconstruct the cross-reference table (damaged file)."
    )
    warning_count: int = Field(ge=0)
    warnings: list[Annotated[str, Field(max_length=300)]] = Field(max_length=20)


class PdfInfoUntrusted(_UntrustedModel):
    page_count: int = Field(ge=0)
    pdf_version: Annotated[str, Field(max_length=16)]
    encrypted: bool
    encryption: EncryptionInfo | None
    producer: Bounded | None
    metadata: dict[Annotated[str, Field(max_length=128)], Bounded] = Field(max_length=64)
    xmp: dict[Annotated[str, Field(max_length=128)], Bounded] | None = Field(max_length=64)
    metadata_conflicts: list[MetadataConflict] = Field(max_length=16)
    features: Features | None
    repair: RepairReport | None
    tokens_estimate: int = Field(ge=0)
    scanned_pages: int = Field(ge=0)
    pages: list[PageInfo] = Field(max_length=1000)
    next_start: int | None = Field(ge=0)
    warnings: list[Bounded] = Field(max_length=100)


class PageCountUntrusted(_UntrustedModel):
    page_count: int = Field(ge=0, le=10_000_000)


TextLayer = Literal["ok", "none", "unusable"]


class PageText(_UntrustedModel):
    page: int = Field(ge=1)
    text: str
    offset: int = Field(ge=0, description="Character offset in the page where this text starts.")
    complete: bool = Field(description="False when the page continues in the next answer (see cursor).")
    text_layer: TextLayer = Field(
        description="ok; none (no text: a scan? see warnings); unusable (glyph codes without Unicode)."
    )


class ReadPosition(_UntrustedModel):
    index: int = Field(ge=0)
    offset: int = Field(ge=0)


class PdfReadUntrusted(_UntrustedModel):
    engine: Literal["fast", "layout"]
    page_count: int = Field(ge=0)
    selected_pages: int = Field(ge=0)
    pages: list[PageText] = Field(max_length=_MAX_PAGES_IN_ANSWER)
    next: ReadPosition | None
    warnings: list[Bounded] = Field(max_length=100)


class StreamedSelection(_UntrustedModel):
    """A streamed ``pdf_read``'s first line (``pdf_airlock.server.tools.read_two_ended``)."""

    page_count: int = Field(ge=0, le=_MAX_COUNT)
    selected_pages: int = Field(ge=0, le=_MAX_COUNT)


class StreamedPage(_UntrustedModel):
    """One page of a streamed ``pdf_read``; ``position`` is its index after ``start_index``."""

    position: int = Field(ge=0, le=_MAX_COUNT)
    page: int = Field(ge=1, le=_MAX_COUNT)
    text: str
    offset: int = Field(ge=0, le=_MAX_OFFSET)
    complete: bool
    text_layer: TextLayer
    warnings: list[Bounded] = Field(max_length=100)


class StreamLine(_UntrustedModel):
    """A line a streamed ``pdf_read`` writes before its envelope: one of the two."""

    selection: StreamedSelection | None = None
    page: StreamedPage | None = None


class OutlineItem(_UntrustedModel):
    title: Bounded
    level: int = Field(ge=1, le=64)
    page: int | None = Field(
        ge=1, description="1-based page the item points to, if it points into this file."
    )
    label: Annotated[str, Field(max_length=64)] | None = Field(description="That page's label, e.g. 'iv'.")
    action: Annotated[str, Field(max_length=32)] = Field(description="goto, uri, launch, javascript, ...")


class PdfOutlineUntrusted(_UntrustedModel):
    items: list[OutlineItem] = Field(max_length=10_000)
    truncated: bool
    next_start: int | None = Field(ge=1)
    warnings: list[Bounded] = Field(max_length=100)


class Attachment(_UntrustedModel):
    name: Annotated[str, Field(max_length=1000)] = Field(description="The name as stored in the PDF.")
    safe_name: Annotated[str, Field(max_length=255)] = Field(description="A base name safe to save under.")
    path_traversal: bool = Field(description="The stored name climbs directories ('..') or is absolute.")
    size: int = Field(ge=0)
    mime_type: Annotated[str, Field(max_length=128)] | None
    sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]
    created: Annotated[str, Field(max_length=64)] | None
    modified: Annotated[str, Field(max_length=64)] | None
    description: Annotated[str, Field(max_length=1000)] | None


class ExtractedFile(_UntrustedModel):
    name: Annotated[str, Field(max_length=1000)]
    data_base64: str


class PdfAttachmentsUntrusted(_UntrustedModel):
    attachments: list[Attachment] = Field(max_length=1000)
    extracted: ExtractedFile | None
    next_start: int | None = Field(ge=1)
    warnings: list[Bounded] = Field(max_length=100)


Rect = list[float]


class Annotation(_UntrustedModel):
    page: int = Field(ge=1)
    subtype: Annotated[str, Field(max_length=64)] = Field(
        description="Link, Text, Widget, FileAttachment, ..."
    )
    rect: Rect | None = Field(max_length=4)
    contents: Annotated[str, Field(max_length=2000)] | None
    action: Annotated[str, Field(max_length=32)] = Field(
        description="goto, uri, launch, javascript, none, ..."
    )
    uri: Annotated[str, Field(max_length=2000)] | None
    target_page: int | None = Field(ge=1, description="1-based page an internal link points to.")
    hidden: bool = Field(description="Flagged Hidden or NoView: present but not shown to a reader.")


class PdfAnnotationsUntrusted(_UntrustedModel):
    annotations: list[Annotation] = Field(max_length=20_000)
    next_start: int | None = Field(ge=1)
    warnings: list[Bounded] = Field(max_length=100)


class FormField(_UntrustedModel):
    name: Annotated[str, Field(max_length=2000)] = Field(
        description="Fully qualified name, e.g. 'customer.name'."
    )
    label: Annotated[str, Field(max_length=500)] | None = Field(description="Its user-facing label (/TU).")
    type: Literal["text", "button", "choice", "signature", "unknown"]
    export_values: list[Annotated[str, Field(max_length=200)]] = Field(
        max_length=100, description="A check box's or radio button's on-state values."
    )
    value: Bounded | Annotated[list[Annotated[str, Field(max_length=1000)]], Field(max_length=500)] | None
    options: list[Annotated[str, Field(max_length=500)]] = Field(max_length=500)
    flags: int
    page: int | None = Field(ge=1)
    rect: Rect | None = Field(max_length=4)


class XfaField(_UntrustedModel):
    name: Annotated[str, Field(max_length=500)]
    value: Annotated[str, Field(max_length=4000)]


class PdfFormsUntrusted(_UntrustedModel):
    fields: list[FormField] = Field(max_length=20_000)
    xfa: bool
    xfa_fields: list[XfaField] = Field(max_length=2000)
    next_start: int | None = Field(ge=1)
    warnings: list[Bounded] = Field(max_length=100)


class ActionLocation(_UntrustedModel):
    where: Annotated[str, Field(max_length=300)]
    action: Annotated[str, Field(max_length=64)]
    detail: Annotated[str, Field(max_length=400)]


class Signature(_UntrustedModel):
    field: Annotated[str, Field(max_length=200)]
    filter: Annotated[str, Field(max_length=64)]
    covers_whole_file: bool | None = Field(description="False: bytes were added after signing.")


class HiddenText(_UntrustedModel):
    invisible_render_mode: int = Field(ge=0, description="Text shown with render mode 3 (invisible).")
    white_fill: int = Field(ge=0, description="Text shown in white fill colour.")
    off_page: int = Field(ge=0, description="Text placed outside the page box.")
    pages_scanned: int = Field(ge=0)


class SecurityEncryption(_UntrustedModel):
    revision: int
    key_bits: int
    method: Annotated[str, Field(max_length=64)]


class PdfSecurityUntrusted(_UntrustedModel):
    risk: Literal["low", "medium", "high"]
    reasons: list[Bounded] = Field(max_length=100)
    actions: dict[Annotated[str, Field(max_length=64)], int] = Field(max_length=100)
    locations: list[ActionLocation] = Field(max_length=200)
    xfa: bool
    rich_media: int = Field(ge=0)
    embedded_files: int = Field(ge=0)
    encryption: SecurityEncryption | None
    incremental_updates: int = Field(ge=0)
    signatures: list[Signature] = Field(max_length=200)
    hidden_text: HiddenText
    warnings: list[Bounded] = Field(max_length=100)


class SearchHit(_UntrustedModel):
    page: int = Field(ge=1)
    label: Label
    text: Annotated[str, Field(max_length=1000)] = Field(description="The matched text (first 1000 chars).")
    offset: int = Field(ge=0, description="Character offset of the match in the page's text.")
    before: Annotated[str, Field(max_length=1000)]
    after: Annotated[str, Field(max_length=1000)]
    rects: list[Annotated[list[float], Field(min_length=4, max_length=4)]] = Field(
        max_length=16,
        description="Boxes [left, bottom, right, top] in PDF points (origin bottom-left), one per line.",
    )


class SearchPosition(_UntrustedModel):
    index: int = Field(ge=0)
    skip: int = Field(ge=0)


class PdfSearchUntrusted(_UntrustedModel):
    page_count: int = Field(ge=0)
    selected_pages: int = Field(ge=0)
    pages_searched: int = Field(ge=0)
    hits: list[SearchHit] = Field(max_length=1000)
    next: SearchPosition | None
    warnings: list[Bounded] = Field(max_length=100)


class PdfRenderUntrusted(_UntrustedModel):
    page: int = Field(ge=1)
    label: Label
    page_count: int = Field(ge=1)
    width_px: int = Field(ge=1)
    height_px: int = Field(ge=1)
    dpi: float = Field(gt=0)
    png_base64: Annotated[str, Field(max_length=_MAX_PNG_BASE64)]
    warnings: list[Bounded] = Field(max_length=100)


class ImageInfo(_UntrustedModel):
    page: int = Field(ge=1)
    label: Label
    name: Annotated[str, Field(max_length=600)] = Field(description="Resource name; 'Fm0/Im1' inside a form.")
    object: Annotated[str, Field(max_length=32)] | None = Field(description="Object number, e.g. '12 0'.")
    width: int | None = Field(ge=0)
    height: int | None = Field(ge=0)
    bits_per_component: int | None = Field(ge=0)
    color_space: Annotated[str, Field(max_length=64)] | None
    filters: list[Annotated[str, Field(max_length=64)]] = Field(max_length=8)
    image_mask: bool
    has_soft_mask: bool
    stream_bytes: int | None = Field(ge=0, description="Encoded size as declared by /Length.")


class ExtractedImage(_UntrustedModel):
    page: int = Field(ge=1)
    name: Annotated[str, Field(max_length=600)]
    width_px: int = Field(ge=1)
    height_px: int = Field(ge=1)
    png_base64: Annotated[str, Field(max_length=_MAX_PNG_BASE64)]


class PdfImagesUntrusted(_UntrustedModel):
    page_count: int = Field(ge=0)
    selected_pages: int = Field(ge=0)
    images: list[ImageInfo] = Field(max_length=5000)
    extracted: ExtractedImage | None
    next_start: int | None = Field(ge=0)
    warnings: list[Bounded] = Field(max_length=100)
