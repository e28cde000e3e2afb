"""A long answer delivered as a resource instead of inline (``deliver: "resource"``).

The tools declared with a ``Delivery`` take ``deliver``. With ``"resource"`` the call
runs the tool for its largest answer (the tool's ``Delivery.whole`` arguments: ``max_chars`` at
its ceiling, every table), keeps the answer's text in the resource store
(``pdf_airlock.server.app.resources``) for the calling principal, and answers with what an agent
needs to decide whether and how to read it: a ``resource_link`` (URI, MIME type, size) and, in
``structuredContent.resource``, its size in bytes and characters, the pages it covers, the parts
``resources/read`` returns it in, its headings (the first ``MAX_HEADINGS``), how long it lasts,
and, when even the largest answer did not reach the end of the selection, ``complete: false``
and the ``cursor`` to deliver the rest with. The document's fields and the tool's warnings are
there too; the text itself is not.

The answer is the tool's own, under the same path policy, approvals, cache and audit; only its
wrapping differs. A principal asking again for the same answer while it lasts gets the same URI.
"""

from __future__ import annotations

from typing import Any, Final

import mcp_types as types

from pdf_airlock.server.app.resources import Delivered
from pdf_airlock.server.tools.base import Delivery

__all__ = ["MAX_HEADINGS", "RESOURCE_META", "delivered_result", "whole_arguments"]

MAX_HEADINGS: Final = 50
RESOURCE_META: Final = "io.pdf-airlock/resource"
_SHOWN_HEADINGS: Final = 12  # in the text fallback


def whole_arguments(delivery: Delivery, arguments: dict[str, Any]) -> dict[str, Any]:
    """The call that gives the whole answer: the same arguments, inline, at the tool's largest."""
    return {name: value for name, value in arguments.items() if name != "deliver"} | dict(delivery.whole)


def _summary(delivered: Delivered, expires_in_s: int) -> dict[str, Any]:
    return {
        "uri": delivered.uri,
        "mime_type": delivered.mime_type,
        "size_bytes": delivered.size_bytes,
        "chars": len(delivered.text),
        "pages": delivered.pages,
        "parts": delivered.parts,
        "headings": [{"level": level, "text": text} for level, text in delivered.headings[:MAX_HEADINGS]],
        "headings_total": len(delivered.headings),
        "complete": delivered.complete,
        "cursor": delivered.cursor,
        "expires_in_s": expires_in_s,
    }


def _text(delivered: Delivered, summary: dict[str, Any], part_chars: int, warnings: list[str]) -> str:
    lines = [
        f"{delivered.source}: the {delivered.tool} answer is delivered as a resource, not inline: "
        f"{delivered.uri}",
        f"{summary['chars']} characters ({summary['size_bytes']} bytes, {delivered.mime_type}), "
        f"{delivered.pages} page(s), {summary['headings_total']} heading(s); "
        f"readable for {summary['expires_in_s']} s with resources/read by this client only.",
    ]
    if delivered.parts > 1:
        lines.append(
            f"It is read in {delivered.parts} parts of up to {part_chars} characters: "
            f"{delivered.uri}, then {delivered.part_uri(2)} and so on."
        )
    shown = delivered.headings[:_SHOWN_HEADINGS]
    if shown:
        lines.append("Headings: " + "; ".join(f"{'#' * level} {text}" for level, text in shown))
        if len(delivered.headings) > len(shown):
            lines.append(f"(and {len(delivered.headings) - len(shown)} more in structuredContent.resource)")
    if not delivered.complete:
        lines.append(
            "It stops before the end of the selection: call again with the same arguments and "
            f"cursor={delivered.cursor} for the rest."
        )
    lines += [f"warning: {warning}" for warning in warnings]
    return "\n".join(lines)


def delivered_result(
    delivered: Delivered, structured: dict[str, Any], part_chars: int, expires_in_s: int
) -> types.CallToolResult:
    """The call's answer: the link, a summary, and the document's fields and warnings."""
    summary = _summary(delivered, expires_in_s)
    warnings = [str(warning) for warning in structured.get("warnings", [])]
    link = types.ResourceLink(
        uri=delivered.uri,
        name=f"{delivered.tool} of {delivered.source}",
        title=delivered.title,
        description=f"{delivered.pages} page(s), {delivered.parts} part(s) for resources/read",
        mime_type=delivered.mime_type,
        size=delivered.size_bytes,
        _meta={RESOURCE_META: {"parts": delivered.parts, "pages": delivered.pages}},
    )
    fields = {name: structured[name] for name in ("source", "sha256", "size_bytes") if name in structured}
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=_text(delivered, summary, part_chars, warnings)), link],
        structured_content=fields | {"resource": summary, "warnings": warnings},
        is_error=False,
    )
