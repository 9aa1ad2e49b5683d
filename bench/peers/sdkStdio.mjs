// The SDK's own folder server over stdio, started as a host starts a server: `loadSkills()` over the folder given,
// one server per connection (bench/start.ts's peer). Plain JavaScript, so `node` runs it as it runs skillpin's dist/.
import { McpServer } from '@modelcontextprotocol/server';
import { loadSkills } from '@modelcontextprotocol/server/ext/skills/node';
import { serveStdio } from '@modelcontextprotocol/server/stdio';

const catalog = await loadSkills(process.argv[2]);
serveStdio(() => {
  const mcp = new McpServer({ name: 'sdk-folder', version: '1.0.0' });
  catalog.attach(mcp);
  return mcp;
});
