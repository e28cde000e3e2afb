"""An instant stdio MCP server for the benchmark: ``replay_server.py TOOLS_JSON RESULT_JSON``.

Answers ``initialize``, ``tools/list`` with the captured ``tools/list`` result, and every
``tools/call`` with the captured call result, encoded once ahead of time. Timing a client against
it measures what the client itself does with an answer (reading, parsing, its outputSchema
check), with next to no server time: ``bench/perf/mcp_bench.py`` compares the SDK client with a bare
pipe on the same answer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    tools = json.loads(Path(sys.argv[1]).read_text())
    encoded_result = json.dumps(json.loads(Path(sys.argv[2]).read_text()), ensure_ascii=False).encode()
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        message = json.loads(line)
        if "id" not in message:
            continue
        method = message.get("method")
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(message["id"]).encode() + b',"result":'
        if method == "tools/call":
            body = encoded_result
        elif method == "tools/list":
            body = json.dumps(tools).encode()
        elif method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": "replay", "version": "0"}
            init = {"protocolVersion": version, "capabilities": {"tools": {}}, "serverInfo": info}
            body = json.dumps(init).encode()
        else:
            body = b"{}"
        out.write(head + body + b"}\n")
        out.flush()


if __name__ == "__main__":
    main()
