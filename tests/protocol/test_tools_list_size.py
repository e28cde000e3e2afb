"""What an agent pays first: the ``tools/list`` answer, held to a byte budget.

Every conversation with the server starts by reading the tool list (a client parses it, and a
model may read all of it), so its size is a cost paid per conversation. Measured here as the
server sends it: the live result over real stdio through the real ``mcp`` client, serialised as
compact JSON. The schemas are made small in ``pdf_airlock.server.tools.schema``; what every tool shares (page
selectors, the cursor rule, the error taxonomy, the document fields of every result) is said
once, in the server's ``instructions`` (``pdf_airlock.server.mcp.handshake``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import ALL_TOOLS, connect

pytestmark = pytest.mark.anyio

# The budget for all tools is 16 KB, and every tool of the plan is in (twelve, with OCR's
# arguments): the whole list is held to it.
TOOLS_LIST_BUDGET = 16 * 1024
COMING_TOOLS_ALLOWANCE = 0
TODAY_BUDGET = TOOLS_LIST_BUDGET
assert TODAY_BUDGET + COMING_TOOLS_ALLOWANCE <= TOOLS_LIST_BUDGET


def compact_size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def size_table(tools: list[dict[str, Any]]) -> str:
    """Per tool: its whole entry, its inputSchema, outputSchema and description, in bytes."""
    rows = [f"{'tool':16} {'all':>6} {'input':>6} {'output':>6} {'descr':>6}"]
    for tool in sorted(tools, key=compact_size, reverse=True):
        rows.append(
            f"{tool['name']:16} {compact_size(tool):6} {compact_size(tool['inputSchema']):6} "
            f"{compact_size(tool.get('outputSchema')):6} {len(tool['description'].encode()):6}"
        )
    return "\n".join(rows)


async def test_tools_list_fits_its_budget(docs: Path) -> None:
    async with connect(docs) as client:
        listed = await client.list_tools()
    # The client's model adds fields of a later protocol era with their defaults (ttlMs...);
    # a 2025-11-25 session's answer is the tool list alone.
    tools = listed.model_dump(by_alias=True, mode="json", exclude_none=True)["tools"]
    assert {tool["name"] for tool in tools} == ALL_TOOLS
    size = compact_size({"tools": tools})
    assert size < TODAY_BUDGET, f"tools/list is {size} bytes, over {TODAY_BUDGET}:\n{size_table(tools)}"
