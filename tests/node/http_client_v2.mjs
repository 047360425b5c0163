// The official MCP TypeScript client v2 (@modelcontextprotocol/client 2.4.0) against
// aletheia-server over Streamable HTTP, in the version negotiation mode given (auto probes
// server/discover and then speaks 2026-07-28 to a server that answers it).
//   node http_client_v2.mjs URL [--mode auto|legacy] [--token T] [--calls JSON]
// --calls is a JSON array of [toolName, arguments] run in order. Prints one JSON object:
// the negotiated version, the session id (null when stateless), the tools, each call's result.
// Exit 0 when every call ran (isError results included), 2 on any protocol/transport failure.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, ...rest] = process.argv.slice(2);
const opts = { mode: 'auto', calls: '[]' };
for (let i = 0; i < rest.length; i += 2) opts[rest[i].replace(/^--/, '')] = rest[i + 1];

const headers = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client(
  { name: 'node-v2-client', version: '2.4.0' },
  { versionNegotiation: { mode: opts.mode } },
);
try {
  await client.connect(transport);
  const { tools } = await client.listTools();
  const results = [];
  for (const [name, args] of JSON.parse(opts.calls)) {
    const result = await client.callTool({ name, arguments: args });
    results.push({
      name,
      isError: result.isError ?? false,
      text: result.content.map((block) => block.text ?? '').join(''),
      structuredContent: result.structuredContent ?? null,
    });
  }
  const out = {
    protocolVersion: client.getNegotiatedProtocolVersion(),
    serverInfo: client.getServerVersion() ?? null,
    sessionId: transport.sessionId ?? null,
    tools: tools.map(({ name, outputSchema }) => ({ name, outputSchema: outputSchema ?? null })),
    results,
  };
  await client.close();
  console.log(JSON.stringify(out));
  process.exit(0);
} catch (err) {
  console.error('MCP client failed:', err?.message ?? err);
  await client.close().catch(() => {});
  process.exit(2);
}
