/**
 * `npm start`: builds the bundled fixture repositories (local git repositories, no network) and serves them
 * as the example catalog over Streamable HTTP on loopback. PORT and HOST override the address.
 */
import path from 'node:path';
import { buildFixtures, DEFAULT_OUT_DIR } from '../fixtures-repos/build.ts';
import { program } from '../src/cli.ts';

const host = process.env['HOST'] ?? '127.0.0.1';
const port = process.env['PORT'] ?? '3917';
const config = path.resolve(import.meta.dirname, '..', 'examples', 'skillpin.yaml');

await buildFixtures(DEFAULT_OUT_DIR);
process.stderr.write(
  [
    `skillpin example: serving the fixture repositories in ${path.relative(process.cwd(), DEFAULT_OUT_DIR)} (config ${path.relative(process.cwd(), config)})`,
    `  MCP endpoint:  http://${host}:${port}/mcp   (health: http://${host}:${port}/healthz)`,
    `  Inspector:     npx @modelcontextprotocol/inspector  → transport "Streamable HTTP", URL above`,
    `  Claude Code:   claude mcp add --transport http skillpin http://${host}:${port}/mcp`,
    '  Stop with Ctrl-C.',
    '',
  ].join('\n'),
);
await program().parseAsync(['node', 'skillpin', 'serve', '--config', config, '--http', `${host}:${port}`]);
