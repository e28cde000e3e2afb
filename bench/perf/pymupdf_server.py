"""A minimal PyMuPDF MCP server: the peer of ``bench/perf/cpu_per_doc.py``'s "PyMuPDF server" row.

``/tmp/peers/bin/python bench/perf/pymupdf_server.py ROOT`` serves one tool, ``pdf_read``, over stdio
with the official ``mcp`` SDK (``MCPServer``): a document under ROOT opened in-process with
PyMuPDF, each page's text, structured output. No sandbox, no fork, no checks beyond the SDK's
own argument validation: the cheapest honest server of the same call, the price pdf-airlock's
1-page MCP call is held to (issue #27: "at most 1.5x the PyMuPDF server's").

PyMuPDF is AGPL: it runs only from the benchmark peers' own interpreter, never as a dependency
of pdf-airlock (this file imports nothing of it).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pymupdf  # type: ignore[import-not-found]
from mcp.server.mcpserver import MCPServer


def read(root: Path, path: str) -> dict[str, Any]:
    """Every page's text of ``path`` under ``root``, opened and closed in this process."""
    with pymupdf.open(root / path) as document:
        pages = [{"page": number, "text": page.get_text()} for number, page in enumerate(document, 1)]
    return {"source": path, "page_count": len(pages), "pages": pages}


def main() -> None:
    """Serve ``pdf_read`` over stdio until stdin closes."""
    root = Path(sys.argv[1])
    server: MCPServer[Any] = MCPServer("pymupdf-peer", log_level="WARNING")

    @server.tool(name="pdf_read", description="Read the text of a PDF's pages.")
    def pdf_read(path: str) -> dict[str, Any]:
        return read(root, path)

    server.run("stdio")


if __name__ == "__main__":
    main()
