"""The SDK client's handling of one answer, published schema against ``$ref`` schema:
``python bench/schema_refs.py text-10.pdf``.

Captures the server's ``tools/list`` and the ``pdf_read`` answer for FILE, then replays both to two SDK
clients through instant servers (``bench/replay_server.py``): one lists the published ``outputSchema``
(written out, ``server/pdf_airlock/server/tools/schema.py``), the other the same schema as pydantic generates
it, with ``$defs`` and ``$ref``s. The clients take turns; prints the medians of the whole ``call_tool``
(reading, parsing, the outputSchema check).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from pydantic import RootModel

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))

from corpus import build  # noqa: E402
from mcp_bench import capture_read, read_whole, replay_command, timed  # noqa: E402

from pdf_airlock.server.tools.models import ToolErrorOutput  # noqa: E402
from pdf_airlock.server.tools.read import PdfReadOutput  # noqa: E402


def with_refs(tools: dict[str, Any]) -> dict[str, Any]:
    """The same listing with ``pdf_read``'s outputSchema as pydantic generates it."""
    union: Any = RootModel[PdfReadOutput | ToolErrorOutput]
    listing: dict[str, Any] = json.loads(json.dumps(tools))
    for tool in listing["tools"]:
        if tool["name"] == "pdf_read":
            tool["outputSchema"] = {"type": "object", **union.model_json_schema()}
    return listing


async def compare(name: str, runs: int) -> dict[str, float]:
    tools, answer = capture_read(build()[name].parent, name)
    times: dict[str, list[float]] = {"published": [], "with $refs": []}
    with tempfile.TemporaryDirectory() as tmp:
        answer_file = Path(tmp) / "answer.json"
        answer_file.write_text(json.dumps(answer))
        servers: dict[str, StdioServerParameters] = {}
        for label, listing in (("published", tools), ("with $refs", with_refs(tools))):
            listing_file = Path(tmp) / f"{len(servers)}.json"
            listing_file.write_text(json.dumps(listing))
            command = replay_command(listing_file, answer_file)
            servers[label] = StdioServerParameters(command=command[0], args=command[1:], cwd=str(ROOT))
        async with (
            Client(servers["published"], mode="legacy") as published,
            Client(servers["with $refs"], mode="legacy") as refs,
        ):
            clients = {"published": published, "with $refs": refs}
            for client in clients.values():
                await client.list_tools()
            for _ in range(runs):
                for label, client in clients.items():
                    times[label].append(await timed(partial(read_whole, client, name)))
    return {label: statistics.median(values) for label, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("file")
    parser.add_argument("--runs", type=int, default=200)
    ns = parser.parse_args()
    medians = anyio.run(compare, ns.file, ns.runs)
    line = ", ".join(f"{label} {ms:.2f} ms" for label, ms in medians.items())
    sys.stdout.write(f"{ns.file}: the SDK client's call_tool on a replayed answer: {line}\n")


if __name__ == "__main__":
    main()
