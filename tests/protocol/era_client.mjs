// The official TypeScript SDK client running the era matrix's calls (tests/protocol/test_era_matrix.py):
//
//   node tests/protocol/era_client.mjs PACKAGE_DIR CONFIG_JSON
//
// PACKAGE_DIR holds the pinned node_modules (tests/inspector: its lock pins @modelcontextprotocol/sdk).
// CONFIG_JSON is {"target": {"kind": "stdio", "command", "args", "cwd"} | {"kind": "http", "url"},
// "calls": [...]} with the calls of test_era_matrix.CALLS, each {"name", "kind", ...}. Prints one
// JSON object: {"protocol": the negotiated version, "results": {name: normalised answer}}, each
// answer shaped as the Python side shapes it (test_era_matrix.py, ``normalise_*``). The client
// declares elicitation and answers "accept" (approve: true) when the question names a document
// whose name ends in -a.pdf, "decline" otherwise.
import { createHash } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [packageDir, configJson] = process.argv.slice(2);
const config = JSON.parse(configJson);
const dist = join(packageDir, "node_modules", "@modelcontextprotocol", "sdk", "dist", "esm");
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const { Client } = await load("client/index.js");
const { StdioClientTransport } = await load("client/stdio.js");
const { StreamableHTTPClientTransport } = await load("client/streamableHttp.js");
const { ElicitRequestSchema, CallToolResultSchema } = await load("types.js");

const target = config.target;
const transport =
  target.kind === "stdio"
    ? new StdioClientTransport({ command: target.command, args: target.args, cwd: target.cwd, stderr: "ignore" })
    : new StreamableHTTPClientTransport(new URL(target.url));
const client = new Client({ name: "pdf-airlock-era-matrix", version: "1" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) =>
  /-a\.pdf/.test(request.params.message)
    ? { action: "accept", content: { approve: true } }
    : { action: "decline" },
);
// This SDK hands a notification to its handler a microtask after reading it, and a response at
// once: a progress notification read together with its call's answer finds the call gone and is
// reported as an error naming it. Those are progress the client received too, in wire order.
let progressSink = null;
const UNKNOWN_TOKEN = "Received a progress notification for an unknown token: ";
client.onerror = (error) => {
  const text = String(error?.message ?? error);
  if (progressSink && text.startsWith(UNKNOWN_TOKEN)) {
    const { params } = JSON.parse(text.slice(UNKNOWN_TOKEN.length));
    progressSink.push([params.progress, params.total ?? null, true]);
  }
};
let negotiated = null; // what initialize agreed, as the client tells its transport
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (version) => {
  negotiated = version;
  setVersion?.(version);
};
await client.connect(transport);
await client.listTools(); // the output schemas, which the client checks every structuredContent against

const sha256 = (text) => createHash("sha256").update(text, "utf8").digest("hex");
const errorOf = (result) => (result.isError ? result.structuredContent.error : null);

async function run(call) {
  switch (call.kind) {
    case "plain": {
      const result = await client.callTool({ name: call.tool, arguments: call.arguments });
      return { error: errorOf(result), structured: result.structuredContent };
    }
    case "paged": {
      const texts = [];
      let cursor = null;
      let calls = 0;
      do {
        const args = cursor ? { ...call.arguments, cursor } : call.arguments;
        const result = await client.callTool({ name: call.tool, arguments: args });
        for (const page of result.structuredContent.pages) texts.push([page.page, page.text]);
        cursor = result.structuredContent.cursor;
        calls += 1;
      } while (cursor);
      return { calls, pages: texts };
    }
    case "progress": {
      const seen = [];
      progressSink = seen;
      const onprogress = (progress) => seen.push([progress.progress, progress.total ?? null, false]);
      const result = await client.callTool({ name: call.tool, arguments: call.arguments }, CallToolResultSchema, {
        onprogress,
      });
      await new Promise((resolve) => setTimeout(resolve, 50)); // the notifications' microtasks
      progressSink = null;
      const done = seen.map(([progress]) => progress);
      return {
        error: errorOf(result),
        seen: seen.length > 0,
        in_order: done.every((value, index) => index === 0 || done[index - 1] <= value),
        totals: [...new Set(seen.map(([, total]) => total).filter((total) => total !== null))].sort(),
        _last: seen.length ? seen.at(-1).slice(0, 2) : null,
        _dropped: seen.filter(([, , dropped]) => dropped).length,
      };
    }
    case "cancel": {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), call.after_ms);
      let cancelled = false;
      try {
        await client.callTool({ name: call.tool, arguments: call.arguments }, CallToolResultSchema, {
          signal: controller.signal,
        });
      } catch {
        cancelled = controller.signal.aborted;
      }
      clearTimeout(timer);
      const after = await client.callTool({ name: "pdf_info", arguments: call.then });
      return { cancelled, after: after.structuredContent.page_count };
    }
    case "approval": {
      const result = await client.callTool({ name: call.tool, arguments: call.arguments });
      const text = result.content.find((block) => block.type === "text")?.text ?? "";
      return { error: errorOf(result)?.details ?? null, found: text.includes(call.expect) };
    }
    case "resource": {
      const result = await client.callTool({ name: call.tool, arguments: call.arguments });
      const link = result.content.find((block) => block.type === "resource_link");
      const parts = [];
      let uri = link.uri;
      while (uri) {
        const read = await client.readResource({ uri });
        const contents = read.contents[0];
        parts.push(contents.text);
        uri = contents._meta["io.pdf-airlock/resource"].next;
      }
      const summary = result.structuredContent.resource;
      return {
        mime_type: link.mimeType,
        size: link.size,
        parts: parts.length,
        sha256: sha256(parts.join("")),
        pages: summary.pages,
        headings: summary.headings,
      };
    }
    case "complete": {
      const params = { ref: { type: "ref/prompt", name: call.prompt }, argument: call.argument };
      if (call.context) params.context = { arguments: call.context };
      const answer = await client.complete(params);
      return { values: answer.completion.values, total: answer.completion.total ?? null };
    }
    default:
      throw new Error(`unknown call kind ${call.kind}`);
  }
}

const results = {};
for (const call of config.calls) results[call.name] = await run(call);
process.stdout.write(`${JSON.stringify({ protocol: negotiated, results })}\n`);
await client.close();
