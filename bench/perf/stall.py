"""Does a large document stall the server? ``python -m bench.studies.stall [--mb 90] [--code DIR]``.

The server over a bare pipe (cache off) is asked ``pdf_info`` about a new copy of a large PDF
(text-10.pdf with an unused stream of ``--mb`` MB of random bytes: new bytes each round, so
nothing is known of it), while ``ping`` requests go out every millisecond from another thread.
Prints, over the rounds, the median of each round's slowest ping answered while the call was in
flight, and the median ping when the server is idle: how long the supervisor's event loop
(every other call, the protocol itself) waited behind that document. ``--code`` runs another
checkout's server (``git worktree add /tmp/old HEAD~1``), to compare; ``--no-pings`` times the
call alone.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pikepdf

from bench.corpora.corpus import build

ROOT = Path(__file__).resolve().parents[2]


class Pinger:
    """A server process; a reader thread stamps every answer by id."""

    def __init__(self, folder: Path, code: Path) -> None:
        command = [
            sys.executable,
            "-m",
            "pdf_airlock.server",
            "serve",
            "--root",
            str(folder),
            "--cache-mb",
            "0",
        ]
        self.proc = subprocess.Popen(
            [*command, "--log-level", "warning"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=code,
        )  # fmt: skip
        self.answered: dict[int, float] = {}
        self.lock = threading.Lock()
        self.ids = iter(range(1, 10_000_000))
        threading.Thread(target=self._read, daemon=True).start()
        client = {"name": "stall", "version": "0"}
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
        self.wait(self.send("initialize", init), 30)
        self.notify("notifications/initialized")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.lock:
                self.answered[message["id"]] = time.perf_counter()

    def notify(self, method: str) -> None:
        self._write({"jsonrpc": "2.0", "method": method})

    def send(self, method: str, params: dict[str, Any] | None = None) -> int:
        number = next(self.ids)
        self._write({"jsonrpc": "2.0", "id": number, "method": method, "params": params or {}})
        return number

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def wait(self, number: int, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if number in self.answered:
                    return self.answered[number]
            time.sleep(0.0002)
        raise TimeoutError(number)

    def pings(self, until: int) -> list[float]:
        """Ping every millisecond until request ``until`` is answered; each ping's round trip (ms)."""
        sent: list[tuple[int, float]] = []
        while True:
            with self.lock:
                if until in self.answered:
                    break
            sent.append((self.send("ping"), time.perf_counter()))
            time.sleep(0.001)
        return [(self.wait(number, 30) - at) * 1000 for number, at in sent]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(30)


def measure(mb: int = 90, rounds: int = 7, code: Path = ROOT, *, pings: bool = True) -> dict[str, float]:
    """Medians, in ms: the ``pdf_info`` call, each round's slowest ping during it (none without
    ``pings``: the call alone), an idle ping."""
    original = build()["text-10.pdf"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        server = Pinger(folder, code)
        slowest, idle, calls = [], [], []
        try:
            for _ in range(rounds):
                path = folder / "big.pdf"
                with pikepdf.open(original) as pdf:  # a valid xref: the parse itself stays short
                    pdf.Root.Bulk = pdf.make_stream(os.urandom(mb << 20))  # new bytes each round
                    pdf.save(path, compress_streams=False)
                time.sleep(0.5)  # the file written back, the server idle
                idle += server.pings(server.send("ping"))
                time.sleep(0.05)
                started = time.perf_counter()
                call = server.send("tools/call", {"name": "pdf_info", "arguments": {"path": "big.pdf"}})
                if pings:
                    slowest.append(max(server.pings(call)))
                calls.append((server.wait(call, 60) - started) * 1000)
        finally:
            server.close()
    return {
        "call_ms": statistics.median(calls),
        "slowest_ping_ms": statistics.median(slowest) if slowest else float("nan"),
        "idle_ping_ms": statistics.median(idle),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=90)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--code", type=Path, default=ROOT)
    parser.add_argument("--no-pings", action="store_true", help="time the call alone")
    args = parser.parse_args()
    found = measure(args.mb, args.rounds, args.code, pings=not args.no_pings)
    during = (
        f"slowest ping while it ran {found['slowest_ping_ms']:.1f} ms (each round's slowest, median); "
        if not args.no_pings
        else "no pings; "
    )
    sys.stdout.write(
        f"{args.mb} MB, {args.rounds} rounds ({args.code}): pdf_info {found['call_ms']:.0f} ms; {during}"
        f"ping when idle {found['idle_ping_ms']:.2f} ms\n"
    )


if __name__ == "__main__":
    main()
