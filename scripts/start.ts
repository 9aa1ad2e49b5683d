/**
 * `npm start` (after `npm run build`): builds the bundled fixture repositories (local git repositories, no
 * network) and serves them as the example catalog over Streamable HTTP on loopback with the built `skillpin`
 * command, as an installed package runs. PORT and HOST override the address.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { buildFixtures, DEFAULT_OUT_DIR } from '../fixtures-repos/build.ts';

const host = process.env['HOST'] ?? '127.0.0.1';
const port = process.env['PORT'] ?? '3917';
const root = path.resolve(import.meta.dirname, '..');
const config = path.join(root, 'examples', 'skillpin.yaml');

await buildFixtures(DEFAULT_OUT_DIR);
process.stderr.write(
  [
    `skillpin example: serving the fixture repositories in ${path.relative(process.cwd(), DEFAULT_OUT_DIR)} (config ${path.relative(process.cwd(), config)})`,
    `  Status page:   http://${host}:${port}/`,
    `  MCP endpoint:  http://${host}:${port}/mcp`,
    `  Inspector:     npx @modelcontextprotocol/inspector  → transport "Streamable HTTP", URL above`,
    `  Claude Code:   claude mcp add --transport http skillpin http://${host}:${port}/mcp`,
    '  Stop with Ctrl-C.',
    '',
  ].join('\n'),
);
const child = spawn(
  process.execPath,
  [path.join(root, 'bin', 'skillpin.js'), 'serve', '--config', config, '--http', `${host}:${port}`],
  { stdio: 'inherit' },
);
// Ctrl-C reaches the whole process group; a plain kill of this process is passed on.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
