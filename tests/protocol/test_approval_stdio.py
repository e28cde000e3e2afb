"""Human approval through MCP elicitation on stdio: ``serve --policy FILE`` with an
``[approval]`` table, driven by the real ``mcp`` client over real stdio."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pdfs
import pytest
from conftest import PROJECT, server_command
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment

from tests.hostile.generate import active_content

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("approval")
    pdfs.write(root / "risky.pdf", active_content())
    pdfs.write(root / "plain.pdf", pdfs.text_pdf(["Plain page."]))
    (root / "policy.toml").write_text('[approval]\nhigh_risk = true\nwithout_elicitation = "deny"\n')
    return root


def _client(folder: Path, answer: str | None) -> Client:
    command = server_command(folder, "--policy", str(folder / "policy.toml"))
    params = StdioServerParameters(
        command=command[0], args=command[1:], cwd=str(PROJECT), env=get_default_environment()
    )
    elicit: Any = None
    if answer is not None:

        async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
            if answer == "accept":
                return types.ElicitResult(action="accept", content={"approve": True})
            return types.ElicitResult(action="decline")

    return Client(params, mode="legacy", read_timeout_seconds=60, elicitation_callback=elicit)


@pytest.mark.parametrize(
    ("answer", "approval"), [("accept", None), ("decline", "declined"), (None, "unavailable")]
)
async def test_stdio_asks_before_reading_a_high_risk_document(
    folder: Path, answer: str | None, approval: str | None
) -> None:
    async with _client(folder, answer) as client:
        plain = await client.call_tool("pdf_read", {"path": "plain.pdf"})
        assert not plain.is_error  # a low-risk document asks nothing
        risky = await client.call_tool("pdf_read", {"path": "risky.pdf"})
    if approval is None:
        assert not risky.is_error
        assert "Active content document" in risky.content[0].text  # type: ignore[union-attr]
    else:
        assert risky.is_error and risky.structured_content is not None
        error = risky.structured_content["error"]
        assert error["code"] == "path_denied" and error["details"]["approval"] == approval
