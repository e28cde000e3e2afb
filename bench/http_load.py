"""HTTP and stdio side by side under load: ``python bench/http_load.py [--write]``.

Starts the real server twice from this checkout, each with the result cache off (every call
parses in a sandboxed job child): once on stdio, once on Streamable HTTP behind bearer-token
auth (an RSA key and a JWKS file made here). Both are driven by the real ``mcp`` client with
1-page ``pdf_read`` calls of one text page:

- one at a time: stdio and HTTP take turns call by call, so both see the same load; the
  per-call overhead of HTTP + auth is the median of the paired differences (each HTTP call
  minus the stdio call of the same round), with the difference of the medians beside it;
- under load: ``--sessions`` HTTP sessions (50) each making ``--calls`` calls one after another,
  all at once; then the same number of calls in flight on the one stdio session.

Reports calls per second, median, p99 and errors; ``--write`` puts the section between the
HTTP-LOAD markers of docs/performance.md. The machine is shared and noisy: compare rows of one
run, not runs.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from corpus import text_document  # noqa: E402

ISSUER = "https://issuer.bench"
AUDIENCE = "https://pdf-airlock.bench/mcp"
DOCUMENT = "text-1.pdf"
CALL = {"path": DOCUMENT, "pages": "1"}
MARKERS = ("<!-- HTTP-LOAD -->", "<!-- /HTTP-LOAD -->")
STDIO = "stdio (direct `tools/call` route, the default)"
HTTP = "Streamable HTTP + auth"
START_TIMEOUT_S = 60.0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def server_flags(folder: Path) -> list[str]:
    return ["--root", str(folder), "--cache-mb", "0", "--log-level", "warning"]


def token(key: rsa.RSAPrivateKey) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "bench", "exp": now + 3600, "scope": "pdf:read"}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "bench"})


@asynccontextmanager
async def http_server(folder: Path, key: rsa.RSAPrivateKey | None) -> AsyncIterator[str]:
    """The HTTP server; with ``key``, behind bearer-token auth with that key in its JWKS."""
    port = free_port()
    command = [sys.executable, "-m", "pdf_airlock.server", "serve", *server_flags(folder)]
    command += ["--transport", "streamable-http", "--port", str(port)]
    if key is not None:
        jwks = folder / "jwks.json"
        jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key())) | {"kid": "bench", "alg": "RS256"}
        jwks.write_text(json.dumps({"keys": [jwk]}))
        command += ["--auth-jwks", str(jwks), "--auth-issuer", ISSUER, "--auth-audience", AUDIENCE]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                if httpx2.get(base + "/readyz", timeout=1).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError("the HTTP server did not become ready")
            await anyio.sleep(0.1)
        yield base + "/mcp"
    finally:
        process.terminate()
        process.wait(30)


@asynccontextmanager
async def http_client(url: str, bearer: str | None) -> AsyncIterator[Client]:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer is not None else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(60, read=120))
    async with http, Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
        yield client


@asynccontextmanager
async def stdio_client(folder: Path, *, direct: bool = True) -> AsyncIterator[Client]:
    """The stdio server; ``direct=False`` turns its direct ``tools/call`` route off (the SDK's)."""
    args = ["-m", "pdf_airlock.server", "serve", *server_flags(folder)]
    env = {**os.environ, "PDF_AIRLOCK_FAST_CALLS": "1" if direct else "0"}
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        yield client


async def timed(client: Client) -> tuple[float, bool]:
    """Milliseconds of one call, and whether it failed."""
    started = time.perf_counter()
    try:
        result = await client.call_tool("pdf_read", CALL)
        failed = result.is_error
    except Exception:
        failed = True
    return (time.perf_counter() - started) * 1000, failed


async def one_at_a_time(clients: dict[str, Client], rounds: int) -> dict[str, list[float]]:
    """Each client in turn, call by call (the order rotates each round)."""
    names = list(clients)
    for _ in range(10):  # warm all: spares, page-count memo, the triage verdict
        for name in names:
            await timed(clients[name])
    times: dict[str, list[float]] = {name: [] for name in names}
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            ms, _ = await timed(clients[name])
            times[name].append(ms)
    return times


async def under_load(clients: list[Client], tasks_per_client: int, calls: int) -> dict[str, Any]:
    """``calls`` calls one after another in each of ``tasks_per_client`` tasks per client."""
    latencies: list[float] = []
    errors = 0

    async def worker(client: Client) -> None:
        nonlocal errors
        for _ in range(calls):
            ms, failed = await timed(client)
            latencies.append(ms)
            errors += failed

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for client in clients:
            for _ in range(tasks_per_client):
                tg.start_soon(worker, client)
    wall = time.perf_counter() - started
    return {
        "calls": len(latencies),
        "per_s": len(latencies) / wall,
        "median": statistics.median(latencies),
        "p99": percentile(latencies, 0.99),
        "errors": errors,
    }


async def run(sessions: int, calls: int, rounds: int) -> str:
    key = rsa.generate_private_key(65537, 2048)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / DOCUMENT).write_bytes(text_document(1))
        bearer = token(key)
        async with (
            http_server(folder, key) as url,
            http_server(folder, None) as open_url,
            stdio_client(folder) as stdio,
            stdio_client(folder, direct=False) as stdio_sdk,
            http_client(url, bearer) as http,
            http_client(open_url, None) as http_open,
        ):
            clients = {
                STDIO: stdio,
                "stdio, SDK route (`PDF_AIRLOCK_FAST_CALLS=0`)": stdio_sdk,
                "Streamable HTTP, no auth (loopback)": http_open,
                HTTP: http,
            }
            sequential = await one_at_a_time(clients, rounds)
            async with stdio_client(folder) as fresh:  # a session of its own, as HTTP's are
                stdio_load = await under_load([fresh], sessions, calls)
            http_clients: list[Client] = []
            async with _many(url, bearer, sessions, http_clients):
                http_load = await under_load(http_clients, 1, calls)
    return report(sequential, http_load, stdio_load, sessions, calls)


@asynccontextmanager
async def _many(url: str, bearer: str, count: int, out: list[Client]) -> AsyncIterator[None]:
    """``count`` HTTP sessions opened before the clock starts."""
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        for _ in range(count):
            out.append(await stack.enter_async_context(http_client(url, bearer)))
        yield


def report(
    sequential: dict[str, list[float]],
    http_load: dict[str, Any],
    stdio_load: dict[str, Any],
    sessions: int,
    calls: int,
) -> str:
    stdio_median = statistics.median(sequential[STDIO])
    http_median = statistics.median(sequential[HTTP])

    def paired(name: str) -> float:
        """The median of the call-by-call differences from stdio (the same round, so the same
        load): less noisy than the difference of the medians."""
        return statistics.median(a - b for a, b in zip(sequential[name], sequential[STDIO], strict=True))

    overheads = [f"{name}: {paired(name):+.2f} ms" for name in sequential if name != STDIO]

    def row(name: str, values: list[float]) -> str:
        median = statistics.median(values)
        p99 = percentile(values, 0.99)
        return f"| {name} | {len(values)} | {median:.2f} | {p99:.2f} | {p99 / median:.1f}x |"

    def load_row(name: str, load: dict[str, Any]) -> str:
        ratio = load["p99"] / load["median"]
        return (
            f"| {name} | {load['calls']} | {load['per_s']:.1f} | {load['median']:.1f} | "
            f"{load['p99']:.1f} | {ratio:.1f}x | {load['errors']} |"
        )

    load1 = os.getloadavg()[0]
    lines = [
        MARKERS[0],
        "## Streamable HTTP beside stdio (issue #26)",
        "",
        f"Generated by `python bench/http_load.py --write` on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {load1:.2f} at the end. The machine is shared "
        "and noisy: compare the rows of this run with each other, not with other runs. Both servers run "
        "from this checkout with the result cache off (`--cache-mb 0`: every call parses in a sandboxed "
        "job child) and the default workers; every call is a 1-page `pdf_read` of a one-page text "
        "document through the Python SDK client. HTTP is behind bearer-token auth (RS256 JWT checked "
        "against a JWKS file) with the default approvals on (the document's triage verdict is "
        "remembered after the first call).",
        "",
        "One call at a time, the four servers taking turns call by call (ms):",
        "",
        "| server | calls | median | p99 | p99 / median |",
        "|---|---|---|---|---|",
        *(row(name, values) for name, values in sequential.items()),
        "",
        f"Per-call overhead of HTTP + auth over stdio at the median: {paired(HTTP):+.2f} ms as the median "
        f"of the paired differences, {http_median - stdio_median:+.2f} ms as the difference of the medians "
        f"({http_median:.2f} against {stdio_median:.2f} ms, ratio {http_median / stdio_median:.2f}x). "
        f"Paired differences from stdio, each row: {'; '.join(overheads)}.",
        "",
        f"Under load: {sessions} HTTP sessions each making {calls} calls one after another, all at once; "
        f"stdio: the same {sessions} callers in flight on one session (ms):",
        "",
        "| transport | calls | calls/s | median | p99 | p99 / median | errors |",
        "|---|---|---|---|---|---|---|",
        load_row(f"Streamable HTTP + auth, {sessions} sessions", http_load),
        load_row(f"stdio, {sessions} in flight on one session", stdio_load),
        MARKERS[1],
    ]
    return "\n".join(lines)


def write(section: str) -> None:
    path = ROOT / "docs" / "performance.md"
    text = path.read_text()
    if MARKERS[0] in text:
        start = text.index(MARKERS[0])
        end = text.index(MARKERS[1]) + len(MARKERS[1])
        text = text[:start] + section + text[end:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20, help="calls per session under load")
    parser.add_argument("--rounds", type=int, default=200, help="calls of each transport one at a time")
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args()
    section = anyio.run(run, args.sessions, args.calls, args.rounds)
    print(section)
    if args.write:
        write(section)


if __name__ == "__main__":
    main()
