// proxy-ts-client.mjs — the official TypeScript SDK client
// (@modelcontextprotocol/sdk) making one progress tool call through
// `mcpbench proxy`, as an application would: connect, callTool with an
// onprogress handler (so the request carries a progressToken), close.
// Prints what happened, one line each. Used by proxy-clients.sh.
//
// Usage: node proxy-ts-client.mjs URL [terminate]
//   terminate: also call transport.terminateSession() (DELETE) before close.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, mode] = process.argv.slice(2);
const t0 = Date.now();
const at = () => `${Date.now() - t0} ms`;
const client = new Client({ name: "ts-through-proxy", version: "0" });
const transport = new StreamableHTTPClientTransport(new URL(url));
transport.onerror = (e) => console.log(`transport error at ${at()}: ${e}`);
try {
  await client.connect(transport);
  const res = await client.callTool(
    { name: "progress", arguments: { count: 3, interval_ms: 5 } },
    undefined,
    { onprogress: (p) => console.log(`progress ${p.progress}/${p.total ?? "?"} at ${at()}`), timeout: 4000 },
  );
  console.log(`result at ${at()}: ${JSON.stringify(res).slice(0, 120)}`);
} catch (e) {
  console.log(`call error at ${at()}: ${e}`);
}
if (mode === "terminate") {
  try {
    await transport.terminateSession();
  } catch (e) {
    console.log(`terminateSession error: ${e}`);
  }
}
await client.close();
console.log(`closed at ${at()}`);
