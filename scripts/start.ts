/**
 * `npm start`: builds dist/ when a build input is newer than it, and the bundled fixture repositories (local git
 * repositories, no network) when theirs changed, and serves them as the example catalog over Streamable HTTP on loopback with the built
 * `skillpin` command, as an installed package runs. PORT and HOST override the address. The example's skills
 * that are broken on purpose are named once, not logged as errors of the start; every other line is passed on.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

const host = process.env['HOST'] ?? '127.0.0.1';
const port = process.env['PORT'] ?? '3917';
const root = path.resolve(import.meta.dirname, '..');
const config = path.join(root, 'examples', 'skillpin.yaml');
// fixtures-repos/build.ts's DEFAULT_OUT_DIR, without loading that module when nothing is to be built.
const fixtures = path.join(root, '.skillpin', 'fixtures');
const shown = (file: string) => path.relative(process.cwd(), file) || '.';

/** Newest modification time (ms) of the files under `entries` (folders walked), 0 when none exists. */
function newest(entries: string[]): number {
  let latest = 0;
  for (const entry of entries) {
    const stat = statSync(entry, { throwIfNoEntry: false });
    if (stat === undefined) continue;
    const files = stat.isDirectory()
      ? readdirSync(entry, { recursive: true, withFileTypes: true })
          .filter((d) => d.isFile())
          .map((d) => path.join(d.parentPath, d.name))
      : [entry];
    for (const file of files) latest = Math.max(latest, statSync(file).mtimeMs);
  }
  return latest;
}

const inputs = ['src', 'scripts/build.ts', 'package.json', 'package-lock.json'].map((p) =>
  path.join(root, p),
);
if (newest([path.join(root, 'dist', 'cli.cjs')]) <= newest(inputs)) {
  process.stderr.write('skillpin example: building dist/ (a build input is newer than it)\n');
  await (await import('./build.ts')).bundle();
}
// The fixture repositories are deterministic: built again only when their sources changed.
if (newest([path.join(fixtures, 'fixtures.json')]) <= newest([path.join(root, 'fixtures-repos')]))
  await (await import('../fixtures-repos/build.ts')).buildFixtures(fixtures);
/** What the example serves and how to reach it: said once the port is listening (the child logged it serves). */
const banner = [
  `skillpin example: serving the fixture repositories in ${shown(fixtures)} (config ${shown(config)})`,
  `  Status page:   http://${host}:${port}/`,
  `  MCP endpoint:  http://${host}:${port}/mcp`,
  `  Inspector:     npx -y @modelcontextprotocol/inspector  → transport "Streamable HTTP", URL above`,
  `  Claude Code:   claude mcp add --transport http skillpin http://${host}:${port}/mcp`,
  '  Stop with Ctrl-C.',
  `skillpin example: the example includes broken skills on purpose: see them on the status page http://${host}:${port}/ or with \`node bin/skillpin.js status -c ${shown(config)}\``,
  '',
].join('\n');

// The child's logs come as JSON lines so that the example's skill problems can be told apart; they go out pretty on
// a terminal. The child's stdin is a pipe from this process: its end is how the child notices this process is gone,
// even killed abruptly. Unreferenced, it does not keep alive a child that cannot serve (a port in use): that one ends
// with its own message and status. (An IPC channel, unreferenced, stops telling its end.)
const child = spawn(
  process.execPath,
  [
    '--import',
    'data:text/javascript,process.stdin.on("end",()=>process.kill(process.pid,"SIGTERM")).resume().unref()',
    path.join(root, 'bin', 'skillpin.js'),
    '--log-format',
    'json',
    'serve',
    '--config',
    config,
    '--http',
    `${host}:${port}`,
  ],
  { stdio: ['pipe', 'inherit', 'pipe'] },
);
// A signal to this process (npm's SIGTERM, a closed terminal's SIGHUP) is passed on; this process ends with the child.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
// npm, killed abruptly, sends nothing: this process, then reparented, notices and ends the child with it.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) child.kill('SIGTERM');
}, 500).unref();
const pretty = process.stderr.isTTY
  ? (await import('pino-pretty')).prettyFactory({
      colorize: true,
      singleLine: true,
      translateTime: 'SYS:HH:MM:ss.l',
    })
  : (line: string) => `${line}\n`;
let serving = false;
for await (const line of createInterface({ input: child.stderr! })) {
  const entry = parsed(line);
  // A skill problem (it names a path and a reason) of this example's config is one of its fixtures, broken on purpose.
  if (typeof entry?.['path'] === 'string' && typeof entry['reason'] === 'string') {
    continue;
  }
  process.stderr.write(pretty(line));
  if (!serving && String(entry?.['msg']).startsWith('serving')) {
    serving = true;
    process.stderr.write(banner);
  }
}
const [code, signal] = await exited;
process.exitCode = code ?? (signal === null ? 1 : 128);
// Its own message (a port in use, a config it cannot use) is above; this says the example did not start.
if (!serving)
  process.stderr.write(
    `skillpin example: not serving: skillpin exited with status ${code ?? signal} (docs/exit-codes.md)${code === 69 ? '; PORT=<port> npm start serves on another port' : ''}\n`,
  );

function parsed(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
