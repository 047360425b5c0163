// The official MCP TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) against aletheia-server over
// Streamable HTTP: connect, list every tool page, call one tool, end the session.
//   node http_client.mjs URL [--token T] [--call NAME] [--args JSON]
// Prints one JSON object. Exit 0 ok, 1 when the called tool returned isError, 2 on any failure.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, ...rest] = process.argv.slice(2);
const opts = { args: '{}' };
for (let i = 0; i < rest.length; i += 2) opts[rest[i].replace(/^--/, '')] = rest[i + 1];

const headers = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
let negotiated = null;
const setVersion = transport.setProtocolVersion?.bind(transport);
transport.setProtocolVersion = (v) => { negotiated = v; setVersion?.(v); };

const client = new Client({ name: 'node-http-test', version: '1.0.0' });
try {
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  const out = {
    protocolVersion: negotiated,
    serverInfo: client.getServerVersion() ?? null,
    sessionId: transport.sessionId ?? null,
    tools: tools.map(({ name, annotations }) => ({ name, annotations })),
  };
  if (opts.call) out.call = await client.callTool({ name: opts.call, arguments: JSON.parse(opts.args) });
  if (transport.sessionId) await transport.terminateSession();
  out.sessionAfterTerminate = transport.sessionId ?? null;
  await client.close();
  console.log(JSON.stringify(out));
  process.exit(out.call?.isError ? 1 : 0);
} catch (err) {
  console.error('MCP client failed:', err?.message ?? err);
  await client.close().catch(() => {});
  process.exit(2);
}
