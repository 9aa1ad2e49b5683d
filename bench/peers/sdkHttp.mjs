// The SDK's own folder server over Streamable HTTP: `loadSkills()` over the folder given and `createMcpHandler`, one
// server per request (bench/serve.ts's peer). Plain JavaScript, so `node` runs it as it runs skillpin's dist/: neither
// process carries a TypeScript loader. Prints {"url": …} on stdout once listening.
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';

const catalog = await loadSkills(process.argv[2]);
const handler = createMcpHandler(() => {
  const mcp = new McpServer({ name: 'sdk-folder', version: '1.0.0' });
  catalog.attach(mcp);
  return mcp;
});
const node = toNodeHandler(handler);
const server = createServer((req, res) => void node(req, res));
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/mcp` })}\n`);
});
