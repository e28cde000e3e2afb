"""Resources, the prompt and completions over real stdio with the real ``mcp`` client: an answer
delivered as a resource (``deliver: "resource"``) is the inline answer, read back in parts, in
both eras; delivery off and an answer too large are refused by code; completions refuse other
references and offer nothing outside a root. The store itself: ``tests/unit/test_resources.py``;
the completions: ``tests/unit/test_completions.py``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp_types as types
import pdfs
import pytest
from conftest import connect
from mcp.shared.exceptions import MCPError

from pdf_airlock.server.app.resources import RESOURCE_URI

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("resources")
    pdfs.write(
        root / "long.pdf",
        pdfs.text_pdf([f"Page {n}:\n" + "\n".join(["lorem ipsum dolor " * 5] * 6) for n in range(1, 13)]),
    )
    pdfs.write(root / "locked.pdf", pdfs.encrypted_pdf("s3cret", "Locked text"))
    return root


async def read_all(client: Any, uri: str) -> list[types.TextResourceContents]:
    parts: list[types.TextResourceContents] = []
    next_uri: str | None = uri
    while next_uri:
        contents = (await client.read_resource(next_uri)).contents[0]
        assert isinstance(contents, types.TextResourceContents)
        parts.append(contents)
        next_uri = (contents.meta or {})["io.pdf-airlock/resource"]["next"]
    return parts


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_delivered_read_is_the_inline_answer_in_parts(folder: Path, mode: str) -> None:
    async with connect(folder, "--resource-part-chars", "1500", "--timeout", "60", mode=mode) as client:
        inline = await client.call_tool("pdf_read", {"path": "long.pdf", "max_chars": 2_000_000})
        result = await client.call_tool("pdf_read", {"path": "long.pdf", "deliver": "resource"})
        assert not result.is_error and result.structured_content is not None
        link = result.content[1]
        assert isinstance(link, types.ResourceLink)
        summary = result.structured_content["resource"]
        assert summary["uri"] == str(link.uri) and summary["pages"] == 12 and summary["complete"] is True
        assert link.mime_type == "text/plain" and link.size == summary["size_bytes"]
        assert "pages" not in result.structured_content  # the text is not inline
        parts = await read_all(client, str(link.uri))
        assert len(parts) == summary["parts"] > 1
        assert [part.uri for part in parts][1] == f"{link.uri}?part=2"
        assert inline.structured_content is not None
        pages = inline.structured_content["pages"]
        expected = "\n".join(f"--- page {page['page']} ---\n{page['text']}" for page in pages)
        assert "".join(part.text for part in parts) == expected
        listed = await client.list_resources()
        assert [str(resource.uri) for resource in listed.resources] == [str(link.uri)]
        again = await client.call_tool("pdf_read", {"path": "long.pdf", "deliver": "resource"})
        assert again.structured_content is not None
        assert again.structured_content["resource"]["uri"] == summary["uri"]  # the same answer
        for wrong in (RESOURCE_URI + "A" * 22, f"{link.uri}?part=99", "file:///etc/passwd"):
            with pytest.raises(MCPError) as refused:
                await client.read_resource(wrong)
            assert refused.value.error.code == types.INVALID_PARAMS


async def test_delivery_off_and_an_answer_too_large_are_refused(folder: Path) -> None:
    async with connect(folder, "--resource-mb", "0", "--timeout", "60") as client:
        off = await client.call_tool("pdf_read", {"path": "long.pdf", "deliver": "resource"})
        assert off.is_error and off.structured_content is not None
        assert off.structured_content["error"]["code"] == "invalid_arguments"
    async with connect(folder, "--resource-mb", "1", "--timeout", "60") as client:  # 256 KiB an answer
        big = pdfs.text_pdf(["\n".join(["word " * 18] * 50) for _ in range(70)])  # all on the page
        pdfs.write(folder / "big.pdf", big)
        large = await client.call_tool("pdf_read", {"path": "big.pdf", "deliver": "resource"})
        assert large.is_error and large.structured_content is not None
        assert large.structured_content["error"]["code"] == "output_limit"


async def test_other_references_are_refused_and_unknown_arguments_get_nothing(docs: Path) -> None:
    async with connect(docs) as client:
        with pytest.raises(MCPError) as refused:
            await client.complete(types.PromptReference(name="other"), {"name": "path", "value": ""})
        assert refused.value.error.code == types.INVALID_PARAMS
        with pytest.raises(MCPError):
            await client.complete(
                types.ResourceTemplateReference(uri="pdf-airlock://x"), {"name": "path", "value": ""}
            )
        nothing = await client.complete(
            types.PromptReference(name="read_pdf"), {"name": "other", "value": "x"}
        )
        assert nothing.completion.values == []
        escapes = await client.complete(
            types.PromptReference(name="read_pdf"), {"name": "path", "value": "esc"}
        )
        assert escapes.completion.values == []  # escape.pdf is a link out of the root
        pages = await client.complete(
            types.PromptReference(name="read_pdf"), {"name": "pages", "value": ""}, {"path": "hello.pdf"}
        )
        assert pages.completion.values == ["1", "2", "3"]
        missing = await client.complete(
            types.PromptReference(name="read_pdf"), {"name": "pages", "value": ""}, {"path": "escape.pdf"}
        )
        assert missing.completion.values == []  # a document the caller may not read: no labels
        prompt = await client.get_prompt("read_pdf", {"path": "hello.pdf", "pages": "1"})
        assert "hello.pdf" in prompt.messages[0].content.text  # type: ignore[union-attr]
