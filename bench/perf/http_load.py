"""HTTP and stdio side by side under load: ``python -m bench.perf.http_load [--write]``.

Starts the real server twice from this checkout, each with the result cache off (every call
parses in a sandboxed job child): once on stdio, once on Streamable HTTP behind bearer-token
auth (an RSA key and a JWKS file made here). Both are driven by the real ``mcp`` client with
1-page ``pdf_read`` calls of one text page:

- one at a time: stdio and HTTP (each with its direct ``tools/call`` route, and without it:
  ``PDF_AIRLOCK_DIRECT_CALLS=0``) take turns call by call, so all see the same load, each call
  after a pause (``--pause-ms``) that lets the previous call's server finish its own work
  (its zygote forks and warms the next spare): a client of one server never waits on another
  server's spare. The per-call overhead of HTTP + auth is the median of the paired differences
  (each HTTP call minus the stdio call of the same round), with the difference of the medians
  beside it. Each row also says where the CPU goes: the server's (its supervisor process's
  user + system time over the rounds, per call, from psutil; the zygote and job children are
  other processes) and the client's (this process's thread CPU time during each call: the
  client's work, since nothing else runs while a call is out);
- the same, by three clients: the Python SDK client; no client library at all (a JSON line on
  a pipe, and one HTTP/1.1 request written on a kept-alive socket and its answer read by its
  ``Content-Length``: the servers' own overhead); and the official TypeScript SDK client
  (``bench/perf/ts_http_client.mjs`` under Node 22, the client Claude Desktop, Claude Code, Cursor
  and VS Code build on; skipped without npm), whose stdio and HTTP + auth calls take turns in
  its own loop;
- under load: ``--sessions`` HTTP sessions (50) each making ``--calls`` calls one after another,
  all at once; then the same number of calls in flight on the one stdio session.

Reports calls per second, median, p99 and errors; ``--write`` puts the section between the
HTTP-LOAD markers of docs/performance.md. The machine is shared and noisy: compare rows of one
run, not runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import anyio
import httpx2
import jwt
import psutil
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from bench.corpora.corpus import text_document
from bench.perf.mcp_bench import TS_PACKAGE, RawServer, ts_node
from bench.report import PERFORMANCE, write_block

ROOT = Path(__file__).resolve().parents[2]

ISSUER = "https://issuer.bench"
AUDIENCE = "https://pdf-airlock.bench/mcp"
DOCUMENT = "text-1.pdf"
CALL = {"path": DOCUMENT, "pages": "1"}
MARKER = "HTTP-LOAD"
STDIO = "stdio (direct `tools/call` route, the default)"
STDIO_SDK = "stdio, SDK route (`PDF_AIRLOCK_DIRECT_CALLS=0`)"
HTTP_OPEN = "Streamable HTTP, no auth (loopback), direct route"
HTTP = "Streamable HTTP + auth, direct route (the default)"
HTTP_SDK = "Streamable HTTP + auth, SDK route (`PDF_AIRLOCK_DIRECT_CALLS=0`)"
BARE_STDIO = "stdio, no client library (a JSON line on a pipe)"
BARE_HTTP = "Streamable HTTP + auth, no client library (a request on a kept-alive socket)"
TS_STDIO = "stdio, TypeScript SDK client"
TS_HTTP = "Streamable HTTP + auth, TypeScript SDK client"
BASES = {BARE_HTTP: BARE_STDIO, BARE_STDIO: BARE_STDIO, TS_HTTP: TS_STDIO, TS_STDIO: TS_STDIO}
PROTOCOL_VERSION = "2025-11-25"
TARGET_MS = 2.0  # issue #26: per-call overhead of HTTP + auth within this of stdio, at the median
START_TIMEOUT_S = 60.0
PAUSE_MS = 20.0  # before each call: the previous call's server has forked and warmed its next spare


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


CACHED_MB = 64  # the cached rows' result cache: every answer after the first is a hit


def server_flags(folder: Path, cache_mb: int = 0) -> list[str]:
    return ["--root", str(folder), "--cache-mb", str(cache_mb), "--log-level", "warning"]


def token(key: rsa.RSAPrivateKey) -> str:
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "bench", "exp": now + 3600, "scope": "pdf:read"}
    return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "bench"})


def fast_calls_env(direct: bool) -> dict[str, str]:
    return {**os.environ, "PDF_AIRLOCK_DIRECT_CALLS": "1" if direct else "0"}


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (its threads; not its children)."""
    times = psutil.Process(pid).cpu_times()
    return float(times.user + times.system)


@asynccontextmanager
async def http_server(
    folder: Path, key: rsa.RSAPrivateKey | None, *, direct: bool = True, cache_mb: int = 0
) -> AsyncIterator[tuple[str, int]]:
    """The HTTP server's endpoint and pid; with ``key``, behind bearer-token auth with that key
    in its JWKS; ``direct=False`` turns its direct ``tools/call`` route off (the SDK's)."""
    port = free_port()
    command = [sys.executable, "-m", "pdf_airlock.server", "serve", *server_flags(folder, cache_mb)]
    command += ["--transport", "streamable-http", "--port", str(port)]
    if key is not None:
        jwks = folder / "jwks.json"
        jwk = json.loads(RSAAlgorithm.to_jwk(key.public_key())) | {"kid": "bench", "alg": "RS256"}
        jwks.write_text(json.dumps({"keys": [jwk]}))
        command += ["--auth-jwks", str(jwks), "--auth-issuer", ISSUER, "--auth-audience", AUDIENCE]
    process = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, env=fast_calls_env(direct)
    )
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
        yield base + "/mcp", process.pid
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
async def stdio_client(
    folder: Path, *, direct: bool = True, cache_mb: int = 0
) -> AsyncIterator[tuple[Client, int]]:
    """A client of the stdio server, and the server's pid; ``direct=False`` turns its direct
    ``tools/call`` route off (the SDK's)."""
    args = ["-m", "pdf_airlock.server", "serve", *server_flags(folder, cache_mb)]
    params = StdioServerParameters(
        command=sys.executable, args=args, cwd=str(ROOT), env=fast_calls_env(direct)
    )
    before = {child.pid for child in psutil.Process().children()}
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        [pid] = [child.pid for child in psutil.Process().children() if child.pid not in before]
        yield client, pid


Timing = tuple[float, float, bool]  # ms, the client's CPU ms, failed
Caller = Callable[[], Awaitable[Timing]]


async def timed(client: Client) -> Timing:
    """Milliseconds of one call, the client's CPU milliseconds in it, and whether it failed."""
    started, cpu = time.perf_counter(), time.thread_time()
    try:
        result = await client.call_tool("pdf_read", CALL)
        failed = result.is_error
    except Exception:
        failed = True
    return (time.perf_counter() - started) * 1000, (time.thread_time() - cpu) * 1000, failed


def sdk_caller(client: Client) -> Caller:
    return lambda: timed(client)


def bare_caller(request: Callable[[str, dict[str, Any]], float]) -> Caller:
    """A call by a client without a library (``RawServer`` or ``RawHttp``): it checks the answer
    after its clock stops, and a failed call stops the benchmark."""

    async def call() -> Timing:
        cpu = time.thread_time()
        ms = request("tools/call", {"name": "pdf_read", "arguments": CALL})
        return ms, (time.thread_time() - cpu) * 1000, False

    return call


class RawHttp:
    """A Streamable HTTP client without a library: the session is opened with httpx (the
    ``initialize`` answer is an SSE stream), then each call is one HTTP/1.1 request written on a
    kept-alive socket, its answer read by its ``Content-Length``: what the server itself costs."""

    def __init__(self, url: str, bearer: str | None) -> None:
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "MCP-Protocol-Version": PROTOCOL_VERSION,
        }
        if bearer is not None:
            headers["Authorization"] = f"Bearer {bearer}"
        init = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        }
        with httpx2.Client(headers=headers, timeout=60) as http:
            answer = http.post(url, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init})
            answer.raise_for_status()
            headers["Mcp-Session-Id"] = answer.headers["mcp-session-id"]
            initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            http.post(url, json=initialized, headers=headers).raise_for_status()
        where = urlparse(url)
        self.sock = socket.create_connection((where.hostname, where.port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        lines = [f"POST {where.path} HTTP/1.1", f"Host: {where.netloc}"]
        self.head = "\r\n".join(lines + [f"{name}: {value}" for name, value in headers.items()])
        self.ids = itertools.count(1)
        self.pending = b""

    def request(self, method: str, params: dict[str, Any]) -> float:
        """One round trip, in milliseconds."""
        body = json.dumps({"jsonrpc": "2.0", "id": next(self.ids), "method": method, "params": params})
        message = f"{self.head}\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode()
        started = time.perf_counter()
        self.sock.sendall(message)
        head, content = self._response()
        elapsed = (time.perf_counter() - started) * 1000
        assert head.startswith(b"HTTP/1.1 200 "), head  # checked after the clock stops
        answer = json.loads(content)
        assert "result" in answer and not answer["result"].get("isError"), answer
        return elapsed

    def _response(self) -> tuple[bytes, bytes]:
        while b"\r\n\r\n" not in self.pending:
            self.pending += self._receive()
        head, _, rest = self.pending.partition(b"\r\n\r\n")
        [length] = [
            int(line.split(b":", 1)[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ]
        while len(rest) < length:
            rest += self._receive()
        self.pending = rest[length:]
        return head, rest[:length]

    def _receive(self) -> bytes:
        data = self.sock.recv(1 << 16)
        if not data:
            raise ConnectionError("the server closed the connection")
        return data

    def close(self) -> None:
        self.sock.close()


@asynccontextmanager
async def bare_clients(
    folder: Path, url: str, bearer: str, http_pid: int
) -> AsyncIterator[dict[str, tuple[Caller, int]]]:
    """The bare pipe (a stdio server of its own) and the bare socket (a session of the HTTP +
    auth server at ``url``)."""
    stdio = RawServer(
        folder, command=[sys.executable, "-m", "pdf_airlock.server", "serve", *server_flags(folder)]
    )
    http = RawHttp(url, bearer)
    try:
        yield {
            BARE_STDIO: (bare_caller(stdio.request), stdio.proc.pid),
            BARE_HTTP: (bare_caller(http.request), http_pid),
        }
    finally:
        http.close()
        stdio.close()


Sequential = dict[str, dict[str, Any]]  # name: {"ms": [...], "client_cpu_ms": [...], "server_cpu_ms": x}


async def one_at_a_time(callers: dict[str, tuple[Caller, int]], rounds: int, pause_ms: float) -> Sequential:
    """Each caller in turn, call by call (the order rotates each round), each call after
    ``pause_ms``; with each server's CPU per call over the rounds (each caller's server serves
    only it here)."""
    names = list(callers)
    for _ in range(10):  # warm all: spares, page-count memo, the triage verdict
        for name in names:
            await callers[name][0]()
    runs: Sequential = {name: {"ms": [], "client_cpu_ms": []} for name in names}
    cpu_before = {name: cpu_s(pid) for name, (_, pid) in callers.items()}
    for index in range(rounds):
        shift = index % len(names)
        for name in names[shift:] + names[:shift]:
            await anyio.sleep(pause_ms / 1000)
            ms, client_ms, _ = await callers[name][0]()
            runs[name]["ms"].append(ms)
            runs[name]["client_cpu_ms"].append(client_ms)
    for name, (_, pid) in callers.items():
        runs[name]["server_cpu_ms"] = (cpu_s(pid) - cpu_before[name]) * 1000 / rounds
    return runs


def typescript(folder: Path, url: str, bearer: str, rounds: int, pause_ms: float) -> Sequential | None:
    """stdio and HTTP + auth through the TypeScript SDK client, taking turns in its own loop (a
    stdio server of its own; a session of the HTTP + auth server at ``url``); None without npm."""
    node = ts_node()
    if node is None:
        return None
    stdio_args = ["-m", "pdf_airlock.server", "serve", *server_flags(folder)]
    config = {
        "targets": [
            {"name": TS_STDIO, "kind": "stdio", "command": sys.executable, "args": stdio_args,
             "env": dict(os.environ), "cwd": str(ROOT)},
            {"name": TS_HTTP, "kind": "http", "url": url, "bearer": bearer},
        ],
        "tool": "pdf_read",
        "arguments": CALL,
        "warmup": 10,
        "rounds": rounds,
        "pause_ms": pause_ms,
    }  # fmt: skip
    script = ROOT / "bench" / "perf" / "ts_http_client.mjs"
    done = subprocess.run(
        [str(node), str(script), str(TS_PACKAGE), json.dumps(config)],
        capture_output=True, text=True, check=True, cwd=ROOT, timeout=1800,
    )  # fmt: skip
    runs: dict[str, dict[str, Any]] = json.loads(done.stdout)
    for name, run in runs.items():
        if run["errors"]:
            raise RuntimeError(f"{name}: {run['errors']} calls failed")
        run["client_cpu_ms"] = run.pop("cpu_ms")
        run["server_cpu_ms"] = None
    return runs


async def under_load(clients: list[Client], tasks_per_client: int, calls: int) -> dict[str, Any]:
    """``calls`` calls one after another in each of ``tasks_per_client`` tasks per client."""
    latencies: list[float] = []
    errors = 0

    async def worker(client: Client) -> None:
        nonlocal errors
        for _ in range(calls):
            ms, _, failed = await timed(client)
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


async def run(sessions: int, calls: int, rounds: int, pause_ms: float) -> str:
    key = rsa.generate_private_key(65537, 2048)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / DOCUMENT).write_bytes(text_document(1))
        bearer = token(key)
        async with (
            http_server(folder, key) as (url, http_pid),
            http_server(folder, key, direct=False) as (sdk_url, http_sdk_pid),
            http_server(folder, None) as (open_url, http_open_pid),
            stdio_client(folder) as (stdio, stdio_pid),
            stdio_client(folder, direct=False) as (stdio_sdk, stdio_sdk_pid),
            http_client(url, bearer) as http,
            http_client(sdk_url, bearer) as http_sdk,
            http_client(open_url, None) as http_open,
        ):
            callers = {
                STDIO: (sdk_caller(stdio), stdio_pid),
                STDIO_SDK: (sdk_caller(stdio_sdk), stdio_sdk_pid),
                HTTP_OPEN: (sdk_caller(http_open), http_open_pid),
                HTTP: (sdk_caller(http), http_pid),
                HTTP_SDK: (sdk_caller(http_sdk), http_sdk_pid),
            }
            sequential = await one_at_a_time(callers, rounds, pause_ms)
            async with bare_clients(folder, url, bearer, http_pid) as bare:
                by_client = await one_at_a_time(bare, rounds, pause_ms)
            ts = await anyio.to_thread.run_sync(typescript, folder, url, bearer, rounds, pause_ms)
            by_client |= ts or {}
            async with stdio_client(folder) as (fresh, _):  # a session of its own, as HTTP's are
                stdio_load = await under_load([fresh], sessions, calls)
            http_clients: list[Client] = []
            async with _many(url, bearer, sessions, http_clients):
                http_load = await under_load(http_clients, 1, calls)
        async with (
            stdio_client(folder, cache_mb=CACHED_MB) as (stdio_cached, stdio_cached_pid),
            http_server(folder, key, cache_mb=CACHED_MB) as (cached_url, cached_pid),
            http_server(folder, key, direct=False, cache_mb=CACHED_MB) as (cached_sdk_url, cached_sdk_pid),
            http_client(cached_url, bearer) as http_cached,
            http_client(cached_sdk_url, bearer) as http_sdk_cached,
        ):
            cached = {
                STDIO: (sdk_caller(stdio_cached), stdio_cached_pid),
                HTTP: (sdk_caller(http_cached), cached_pid),
                HTTP_SDK: (sdk_caller(http_sdk_cached), cached_sdk_pid),
            }
            sequential_cached = await one_at_a_time(cached, rounds, pause_ms)
    return report(sequential, by_client, sequential_cached, http_load, stdio_load, sessions, calls, pause_ms)


@asynccontextmanager
async def _many(url: str, bearer: str, count: int, out: list[Client]) -> AsyncIterator[None]:
    """``count`` HTTP sessions opened before the clock starts."""
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        for _ in range(count):
            out.append(await stack.enter_async_context(http_client(url, bearer)))
        yield


def report(
    sequential: Sequential,
    by_client: Sequential,
    cached: Sequential,
    http_load: dict[str, Any],
    stdio_load: dict[str, Any],
    sessions: int,
    calls: int,
    pause_ms: float,
) -> str:
    stdio_median = statistics.median(sequential[STDIO]["ms"])
    http_median = statistics.median(sequential[HTTP]["ms"])

    def paired(name: str, of: str = "ms", base: str | None = None, runs: Sequential = sequential) -> float:
        """The median of the call-by-call differences from ``base`` (the same round, so the
        same load; by default the row's own stdio): less noisy than the difference of the medians."""
        pairs = zip(runs[name][of], runs[base or BASES.get(name, STDIO)][of], strict=True)
        return float(statistics.median(a - b for a, b in pairs))

    def row(name: str, runs: Sequential = sequential) -> str:
        run = runs[name]
        median = statistics.median(run["ms"])
        p99 = percentile(run["ms"], 0.99)
        overhead = "" if BASES.get(name, STDIO) == name else f"{paired(name, runs=runs):+.2f}"
        server = "-" if run["server_cpu_ms"] is None else f"{run['server_cpu_ms']:.2f}"
        return (
            f"| {name} | {len(run['ms'])} | {median:.2f} | {p99:.2f} | {p99 / median:.1f}x | {overhead} | "
            f"{server} | {statistics.median(run['client_cpu_ms']):.2f} |"
        )

    def load_row(name: str, load: dict[str, Any]) -> str:
        ratio = load["p99"] / load["median"]
        return (
            f"| {name} | {load['calls']} | {load['per_s']:.1f} | {load['median']:.1f} | "
            f"{load['p99']:.1f} | {ratio:.1f}x | {load['errors']} |"
        )

    overhead = paired(HTTP)
    server_extra = sequential[HTTP]["server_cpu_ms"] - sequential[STDIO]["server_cpu_ms"]
    client_extra = paired(HTTP, "client_cpu_ms")
    direct_gain = paired(HTTP, base=HTTP_SDK)
    sdk_server_saving = sequential[HTTP_SDK]["server_cpu_ms"] - sequential[HTTP]["server_cpu_ms"]
    cached_overhead = paired(HTTP, runs=cached)
    cached_server = cached[HTTP]["server_cpu_ms"] - cached[STDIO]["server_cpu_ms"]
    cached_client = paired(HTTP, "client_cpu_ms", runs=cached)
    cached_gain = paired(HTTP, base=HTTP_SDK, runs=cached)
    cached_sdk_saving = cached[HTTP_SDK]["server_cpu_ms"] - cached[HTTP]["server_cpu_ms"]

    waiting = overhead - server_extra - client_extra
    bare = paired(BARE_HTTP, runs=by_client)
    bare_server = by_client[BARE_HTTP]["server_cpu_ms"] - by_client[BARE_STDIO]["server_cpu_ms"]
    bare_client = paired(BARE_HTTP, "client_cpu_ms", runs=by_client)
    ts = paired(TS_HTTP, runs=by_client) if TS_HTTP in by_client else None
    ts_client = paired(TS_HTTP, "client_cpu_ms", runs=by_client) if TS_HTTP in by_client else None

    def verdict(ms: float) -> str:
        return "met" if ms <= TARGET_MS else "not met"

    by_client_summary = [
        f"- no client library: {bare:+.2f} ms (**{verdict(bare)}**): what the server adds; its extra CPU "
        f"a call {bare_server:+.2f} ms, the bare client's {bare_client:+.2f} ms;",
        f"- the Python SDK client: {overhead:+.2f} ms (**{verdict(overhead)}**; the first table);",
    ]
    if ts is not None and ts_client is not None:
        by_client_summary.append(
            f"- the TypeScript SDK client: {ts:+.2f} ms (**{verdict(ts)}**); its extra CPU a call "
            "(Node's `fetch` and the SDK's Streamable HTTP transport against its stdio one) "
            f"{ts_client:+.2f} ms."
        )
    else:
        by_client_summary.append("- the TypeScript SDK client: not measured (no npm on this machine).")

    met = verdict(overhead)
    cached_medians = statistics.median(cached[HTTP]["ms"]) - statistics.median(cached[STDIO]["ms"])
    load1 = os.getloadavg()[0]
    lines = [
        "## Streamable HTTP beside stdio (issue #26)",
        "",
        "Generated by `python -m bench.perf.http_load --write` "
        f"on {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {load1:.2f} at the end. The machine is shared "
        "and noisy: compare the rows of this run with each other, not with other runs. All servers run "
        "from this checkout with the result cache off (`--cache-mb 0`: every call parses in a sandboxed "
        "job child) and the default workers; every call is a 1-page `pdf_read` of a one-page text "
        "document through the Python SDK client (`streamable_http_client` on httpx for HTTP). HTTP + "
        "auth is behind bearer-token auth (RS256 JWT checked against a JWKS file) with the default "
        "approvals on (the document's triage verdict is remembered after the first call; the client "
        "declares no elicitation, so no call needs the SDK's stream).",
        "",
        f"One call at a time, the five servers taking turns call by call, each call after a pause of "
        f"{pause_ms:g} ms (ms). The pause lets the previous call's server finish its own work (its zygote "
        "forks and warms the next spare, about 2 ms of CPU): taking turns without it, each call would "
        "also wait for another server's spare, which no client of one server ever does. Overhead: the "
        "median of the paired differences from stdio's call of the same round. Server CPU: the server's "
        "supervisor process (user + system, psutil) over the rounds, per call; the zygote and the job "
        "children, the same work for every row, are not in it. Client CPU: the median of this "
        "process's thread CPU time during a call, the SDK client's share:",
        "",
        "| server | calls | median | p99 | p99 / median | overhead | server CPU / call | client CPU / call |",
        "|---|---|---|---|---|---|---|---|",
        *(row(name) for name in sequential),
        "",
        f"Per-call overhead of HTTP + auth over stdio at the median: {overhead:+.2f} ms as the median "
        f"of the paired differences, {http_median - stdio_median:+.2f} ms as the difference of the medians "
        f"({http_median:.2f} against {stdio_median:.2f} ms, ratio {http_median / stdio_median:.2f}x). "
        f"Target (at most +{TARGET_MS:.1f} ms): **{met}**. Of the extra CPU per call, the server's is "
        f"{server_extra:+.2f} ms and the SDK client's {client_extra:+.2f} ms (httpx and the SDK's "
        f"Streamable HTTP client against its stdio client): the client's extra CPU alone is "
        f"{client_extra / TARGET_MS:.0%} of the target. The remaining {waiting:.2f} ms is CPU of neither "
        "side: time waiting to run on this shared machine. The direct `tools/call` route against the "
        f"SDK's route on the same HTTP server: {direct_gain:+.2f} ms a call (median of the paired "
        f"differences), {-sdk_server_saving:+.2f} ms of server CPU a call.",
        "",
        "The same overhead by client: without a client library (a JSON line written on the stdio "
        "server's pipe, and one HTTP/1.1 request written on a kept-alive socket of a session of the "
        "HTTP + auth server above, each answer read whole; the two take turns as above), and through "
        "the official TypeScript SDK client (`bench/perf/ts_http_client.mjs` under Node 22, pinned by "
        "`tests/inspector`'s lock; the client Claude Desktop, Claude Code, Cursor and VS Code build on; "
        "its stdio server of its own and a session of the same HTTP + auth server take turns in its "
        "own loop, with the same pause). Client CPU for the TypeScript rows is the Node process's (ms):",
        "",
        "| server and client | calls | median | p99 | p99 / median | overhead | server CPU / call "
        "| client CPU / call |",
        "|---|---|---|---|---|---|---|---|",
        *(row(name, by_client) for name in by_client),
        "",
        f"Per-call overhead of HTTP + auth over stdio at the median of the paired differences, by "
        f"client (target: at most +{TARGET_MS:.1f} ms):",
        "",
        *by_client_summary,
        "",
        f"The same with the result cache on (`--cache-mb {CACHED_MB}`): every answer but the first "
        "comes from the cache, no job child runs, and what is left is the transports' own cost (ms):",
        "",
        "| server | calls | median | p99 | p99 / median | overhead | server CPU / call | client CPU / call |",
        "|---|---|---|---|---|---|---|---|",
        *(row(name, cached) for name in cached),
        "",
        f"Cached, HTTP + auth over stdio: {cached_overhead:+.2f} ms at the median of the paired "
        f"differences, {cached_medians:+.2f} ms as the difference of the medians (target: "
        f"**{verdict(cached_overhead)}** by the first, **{verdict(cached_medians)}** by the second); "
        f"extra CPU a call: server {cached_server:+.2f} ms, SDK client {cached_client:+.2f} ms. "
        f"Direct route against the SDK's: {cached_gain:+.2f} ms a call, {-cached_sdk_saving:+.2f} ms of "
        "server CPU a call.",
        "",
        f"Under load: {sessions} HTTP sessions each making {calls} calls one after another, all at once; "
        f"stdio: the same {sessions} callers in flight on one session (ms):",
        "",
        "| transport | calls | calls/s | median | p99 | p99 / median | errors |",
        "|---|---|---|---|---|---|---|",
        load_row(f"Streamable HTTP + auth, {sessions} sessions", http_load),
        load_row(f"stdio, {sessions} in flight on one session", stdio_load),
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--calls", type=int, default=20, help="calls per session under load")
    parser.add_argument("--rounds", type=int, default=200, help="calls of each transport one at a time")
    parser.add_argument(
        "--pause-ms", type=float, default=PAUSE_MS, help="pause before each call one at a time"
    )
    parser.add_argument("--write", action="store_true", help="update docs/performance.md")
    args = parser.parse_args()
    section = anyio.run(run, args.sessions, args.calls, args.rounds, args.pause_ms)
    print(section)
    if args.write:
        write_block(PERFORMANCE, MARKER, section)


if __name__ == "__main__":
    main()
