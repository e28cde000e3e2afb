"""End to end with the real ``mcp`` Python client over real stdio, real sandbox, real PDFs."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from conftest import ALL_TOOLS, HELLO_PAGES, TEST_PASSWORD, connect
from mcp import Client
from mcp.shared.exceptions import MCPError

pytestmark = pytest.mark.anyio


def error_code(result: Any) -> str:
    assert result.is_error is True, result
    return str(result.structured_content["error"]["code"])


async def test_handshake_lists_both_tools_read_only(docs: Path) -> None:
    async with connect(docs) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None and client.server_info.name == "pdf-airlock"
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == ALL_TOOLS
    for tool in tools.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.open_world_hint is False
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert "path" in tool.input_schema["properties"]
    assert tools["pdf_read"].input_schema["properties"]["engine"]["enum"] == ["fast", "layout"]
    assert {tool.meta["io.pdf-airlock/category"] for tool in tools.values()} == {
        "text",
        "structure",
        "security",
        "render",
    }


async def test_modern_era_discover_and_call(docs: Path) -> None:
    async with connect(docs, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        result = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "2"})
    assert result.is_error is False
    assert result.structured_content["pages"][0]["text"] == HELLO_PAGES[1]


async def test_info_and_read_exact(docs: Path) -> None:
    async with connect(docs) as client:
        info = await client.call_tool("pdf_info", {"path": "hello.pdf"})
        read = await client.call_tool("pdf_read", {"path": "hello.pdf"})
        subset = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "3,1"})
    data = info.structured_content
    assert info.is_error is False
    assert data["page_count"] == 3
    assert data["metadata"]["title"] == "Hello Title"
    assert data["encrypted"] is False
    assert [p["has_text"] for p in data["pages"]] == [True, True, True]
    assert data["pages"][0]["width_pt"] == 612.0 and data["pages"][0]["height_pt"] == 792.0
    assert data["producer"] == "pdf-airlock test suite"
    assert data["metadata"]["author"] == "pdf-airlock tests"
    assert [p["text"] for p in read.structured_content["pages"]] == HELLO_PAGES
    assert read.structured_content["cursor"] is None
    text = read.content[0].text
    assert text.startswith("--- page 1 ---\nHello from page one.")
    assert "--- page 3 ---\nThird page: the end." in text
    assert [p["page"] for p in subset.structured_content["pages"]] == [3, 1]


async def test_layout_engine_reads_columns_in_order(docs: Path) -> None:
    async with connect(docs) as client:
        result = await client.call_tool("pdf_read", {"path": "columns.pdf", "engine": "layout"})
    assert result.structured_content["engine"] == "layout"
    assert result.structured_content["pages"][0]["text"] == "left A\nleft B\nright A\nright B\n"


async def test_max_chars_cursor_returns_everything_once(docs: Path) -> None:
    async with connect(docs) as client:
        whole = await client.call_tool("pdf_read", {"path": "long.pdf"})
        expected = "".join(p["text"] for p in whole.structured_content["pages"])
        collected, cursor, calls = "", None, 0
        while True:
            args: dict[str, Any] = {"path": "long.pdf", "max_chars": 1000}
            if cursor:
                args["cursor"] = cursor
            part = await client.call_tool("pdf_read", args)
            chars = sum(len(p["text"]) for p in part.structured_content["pages"])
            assert chars <= 1000
            collected += "".join(p["text"] for p in part.structured_content["pages"])
            cursor = part.structured_content["cursor"]
            calls += 1
            if cursor is None:
                break
        wrong = await client.call_tool(
            "pdf_read", {"path": "hello.pdf", "cursor": part_cursor(whole, client)}
        )
    assert collected == expected
    assert calls == -(-len(expected) // 1000)
    assert error_code(wrong) == "invalid_arguments"


def part_cursor(_whole: Any, _client: Client) -> str:
    """A syntactically valid cursor for another document (long.pdf's digest is not hello.pdf's)."""
    import json

    body = {"v": 1, "d": "0" * 32, "t": "pdf_read", "a": "x", "p": {"index": 0, "offset": 0}}
    return base64.urlsafe_b64encode(json.dumps(body).encode()).decode().rstrip("=")


async def test_inline_data_and_file_uri(docs: Path) -> None:
    encoded = base64.b64encode((docs / "hello.pdf").read_bytes()).decode()
    async with connect(docs) as client:
        inline = await client.call_tool("pdf_read", {"data": encoded, "pages": "1"})
        uri = await client.call_tool("pdf_read", {"path": (docs / "sub" / "nested.pdf").as_uri()})
        bad = await client.call_tool("pdf_read", {"data": "not base64!!"})
    assert inline.structured_content["source"] == "<inline data>"
    assert inline.structured_content["pages"][0]["text"] == HELLO_PAGES[0]
    assert uri.structured_content["source"] == "sub/nested.pdf"
    assert uri.structured_content["pages"][0]["text"] == "Nested document."
    assert error_code(bad) == "invalid_arguments"


async def test_encryption_codes(docs: Path) -> None:
    async with connect(docs) as client:
        missing = await client.call_tool("pdf_read", {"path": "encrypted.pdf"})
        wrong = await client.call_tool("pdf_read", {"path": "encrypted.pdf", "password": "nope"})
        right = await client.call_tool("pdf_read", {"path": "encrypted.pdf", "password": TEST_PASSWORD})
        info = await client.call_tool("pdf_info", {"path": "encrypted.pdf", "password": TEST_PASSWORD})
    assert error_code(missing) == "encrypted"
    assert error_code(wrong) == "wrong_password"
    assert TEST_PASSWORD not in wrong.content[0].text
    assert right.structured_content["pages"][0]["text"] == "Encrypted body text"
    assert info.structured_content["encrypted"] is True
    assert info.structured_content["encryption"]["revision"] == 6


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("not-a-pdf.pdf", "not_a_pdf"),
        ("empty.pdf", "not_a_pdf"),
        ("missing.pdf", "not_found"),
        ("escape.pdf", "path_denied"),
        ("passwd.pdf", "path_denied"),
        ("zero.pdf", "path_denied"),
        ("/etc/passwd", "path_denied"),
        ("../outside/secret.pdf", "path_denied"),
        ("/proc/self/environ", "path_denied"),
        ("fifo.pdf", "not_a_file"),
        ("sub", "not_a_file"),
        ("file://remote.example/x.pdf", "path_denied"),
    ],
)
async def test_input_errors(docs: Path, path: str, code: str) -> None:
    async with connect(docs) as client:
        result = await client.call_tool("pdf_read", {"path": path})
    assert error_code(result) == code
    assert result.structured_content["error"]["retryable"] is False


async def test_symlink_inside_root_is_followed(docs: Path) -> None:
    async with connect(docs) as client:
        result = await client.call_tool("pdf_read", {"path": "inside-link.pdf", "pages": "1"})
    assert result.structured_content["source"] == "hello.pdf"


async def test_invalid_arguments_and_unknown_tool(docs: Path) -> None:
    async with connect(docs) as client:
        both = await client.call_tool("pdf_read", {"path": "hello.pdf", "data": "AAAA"})
        extra = await client.call_tool("pdf_read", {"path": "hello.pdf", "bogus": 1})
        selector = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "1;rm -rf"})
        out_of_range = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "2-9"})
        with pytest.raises(MCPError) as unknown:
            await client.call_tool("pdf_write", {"path": "hello.pdf"})
    assert error_code(both) == "invalid_arguments"
    assert error_code(extra) == "invalid_arguments"
    assert error_code(selector) == "invalid_arguments"
    assert "rm -rf" not in selector.content[0].text
    assert error_code(out_of_range) == "page_out_of_range"
    assert unknown.value.code == -32602


async def test_too_large(docs: Path, tmp_path: Path) -> None:
    big = tmp_path / "big.pdf"
    big.write_bytes(b"%PDF-1.7\n" + b"0" * (2 << 20))
    async with connect(tmp_path, "--max-file-mb", "1") as client:
        result = await client.call_tool("pdf_read", {"path": "big.pdf"})
    assert error_code(result) == "too_large"
    assert result.structured_content["error"]["details"]["max_bytes"] == 1 << 20


async def test_layout_hang_times_out_and_server_keeps_serving(docs: Path) -> None:
    async with connect(docs) as client:
        hung = await client.call_tool("pdf_read", {"path": "glyphs.pdf", "engine": "layout"})
        after = await client.call_tool("pdf_read", {"path": "hello.pdf", "pages": "1"})
    assert error_code(hung) in {"timeout", "cpu_limit"}
    assert after.structured_content["pages"][0]["text"] == HELLO_PAGES[0]


async def test_decompression_bomb_is_contained(docs: Path) -> None:
    async with connect(docs) as client:
        bomb = await client.call_tool("pdf_read", {"path": "bomb.pdf"})
        after = await client.call_tool("pdf_info", {"path": "hello.pdf"})
    assert error_code(bomb) in {"memory_limit", "decompression_limit"}
    assert after.structured_content["page_count"] == 3


async def test_progress_notifications_per_page(docs: Path) -> None:
    updates: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        updates.append((progress, total))

    async with connect(docs) as client:
        result = await client.call_tool("pdf_read", {"path": "long.pdf"}, progress_callback=on_progress)
        quiet = await client.call_tool("pdf_read", {"path": "hello.pdf"})
    assert result.is_error is False and quiet.is_error is False
    assert updates == [(float(n), 20.0) for n in range(1, 21)]
