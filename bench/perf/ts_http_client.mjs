// The official TypeScript SDK client (the one Claude Desktop, Claude Code, Cursor and VS Code
// build on) driving pdf-airlock over stdio and Streamable HTTP side by side, for bench/perf/http_load.py:
//
//   node bench/perf/ts_http_client.mjs PACKAGE_DIR CONFIG_JSON
//
// PACKAGE_DIR holds the pinned node_modules (tests/inspector: its lock pins @modelcontextprotocol/sdk);
// CONFIG_JSON is
//   {"targets": [{"name", "kind": "stdio", "command", "args", "env"}
//                | {"name", "kind": "http", "url", "bearer"}],
//    "tool", "arguments", "warmup", "rounds", "pause_ms"}
// Every target is connected first; then one call at a time, each after a pause of pause_ms, the
// targets taking turns call by call (the order rotates each round, as http_load.py's Python rows).
// Prints one JSON object to stdout:
//   {name: {"ms": [...], "cpu_ms": [...], "errors": n}}
// where cpu_ms is this process's CPU time (user + system) during the call: the client's share.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
const sdk = join(packageDir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm", "client");
const load = (path) => import(pathToFileURL(join(sdk, path)).href);
const { Client } = await load("index.js");
const { StdioClientTransport } = await load("stdio.js");
const { StreamableHTTPClientTransport } = await load("streamableHttp.js");

function transportOf(target) {
  if (target.kind === "stdio") {
    return new StdioClientTransport({
      command: target.command,
      args: target.args,
      env: target.env,
      cwd: target.cwd,
      stderr: "inherit",
    });
  }
  const headers = target.bearer ? { Authorization: `Bearer ${target.bearer}` } : {};
  return new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers } });
}

const clients = [];
for (const target of config.targets) {
  const client = new Client({ name: "pdf-airlock-bench", version: "1" });
  await client.connect(transportOf(target));
  await client.listTools(); // the output schemas, as a host lists tools before calling them
  clients.push([target.name, client]);
}

async function timed(client) {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  let failed = false;
  try {
    const result = await client.callTool({ name: config.tool, arguments: config.arguments });
    failed = Boolean(result.isError);
  } catch {
    failed = true;
  }
  const used = process.cpuUsage(cpu);
  return [Number(process.hrtime.bigint() - started) / 1e6, (used.user + used.system) / 1000, failed];
}

for (let i = 0; i < config.warmup; i++) {
  for (const [, client] of clients) await timed(client);
}
const runs = Object.fromEntries(clients.map(([name]) => [name, { ms: [], cpu_ms: [], errors: 0 }]));
const pause = () => new Promise((resolve) => setTimeout(resolve, config.pause_ms));
for (let round = 0; round < config.rounds; round++) {
  const shift = round % clients.length;
  for (const [name, client] of [...clients.slice(shift), ...clients.slice(0, shift)]) {
    await pause();
    const [ms, cpuMs, failed] = await timed(client);
    runs[name].ms.push(ms);
    runs[name].cpu_ms.push(cpuMs);
    runs[name].errors += failed ? 1 : 0;
  }
}
for (const [, client] of clients) await client.close();
process.stdout.write(JSON.stringify(runs));
