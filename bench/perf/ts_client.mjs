// The official TypeScript SDK client (the one Claude Desktop, Claude Code, Cursor and VS Code
// build on) reading whole documents from a stdio server, for bench/perf/mcp_bench.py:
//
//   node bench/perf/ts_client.mjs PACKAGE_DIR SERVER_COMMAND_JSON
//
// PACKAGE_DIR holds the pinned node_modules (tests/inspector: its lock pins @modelcontextprotocol/sdk).
// After connecting and listing the tools it writes {"ready": true}; then, for each line
// {"path": ..., "max_chars": N} on stdin, it calls pdf_read until the cursor runs out and writes
// {"ms": wall time of those calls, "chars": code points of page text, "calls": n}; for
// {"info": path} it calls pdf_info (untimed) and echoes the line. The client
// checks each structuredContent against the tool's outputSchema (Ajv), as it does for any caller.
import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, serverJson] = process.argv.slice(2);
const sdk = join(packageDir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
const { Client } = await import(pathToFileURL(join(sdk, "index.js")).href);
const { StdioClientTransport } = await import(pathToFileURL(join(sdk, "stdio.js")).href);

const [command, ...args] = JSON.parse(serverJson);
const client = new Client({ name: "pdf-airlock-bench", version: "0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
await client.listTools();
const reply = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
reply({ ready: true });

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  if (request.info !== undefined) {
    const result = await client.callTool({ name: "pdf_info", arguments: { path: request.info } });
    if (result.isError) throw new Error(`pdf_info ${request.info}: ${JSON.stringify(result.structuredContent)}`);
    reply({ info: request.info });
    continue;
  }
  const { path, max_chars: maxChars } = request;
  const texts = [];
  let cursor = null;
  let calls = 0;
  const started = performance.now();
  do {
    const args = cursor ? { path, max_chars: maxChars, cursor } : { path, max_chars: maxChars };
    const result = await client.callTool({ name: "pdf_read", arguments: args });
    if (result.isError) {
      throw new Error(`pdf_read ${path}: ${JSON.stringify(result.structuredContent)}`);
    }
    for (const page of result.structuredContent.pages) texts.push(page.text);
    cursor = result.structuredContent.cursor;
    calls += 1;
  } while (cursor);
  const ms = performance.now() - started;
  // Code points, as Python's len() counts them (a JavaScript string's length counts UTF-16 units).
  const chars = texts.reduce((sum, text) => sum + [...text].length, 0);
  reply({ ms, chars, calls });
}
await client.close();
