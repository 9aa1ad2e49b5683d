/**
 * `npm start`: builds dist/ when a build input is newer than it, and the bundled fixture repositories (local git
 * repositories, no network) when theirs changed, and serves them as the example catalog over Streamable HTTP on loopback with the built
 * `skillpin` command, as an installed package runs. PORT and HOST override the address. The example's skills
 * that are broken on purpose are named once, not logged as errors of the start; every other line is passed on.
 */
import { spawn } from 'node:child_process';
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
if (newest([path.join(root, 'dist', 'cli.js')]) <= newest(inputs)) {
  process.stderr.write('skillpin example: building dist/ (a build input is newer than it)\n');
  await (await import('./build.ts')).bundle();
}
// The fixture repositories are deterministic: built again only when their sources changed.
if (newest([path.join(fixtures, 'fixtures.json')]) <= newest([path.join(root, 'fixtures-repos')]))
  await (await import('../fixtures-repos/build.ts')).buildFixtures(fixtures);
process.stderr.write(
  [
    `skillpin example: serving the fixture repositories in ${shown(fixtures)} (config ${shown(config)})`,
    `  Status page:   http://${host}:${port}/`,
    `  MCP endpoint:  http://${host}:${port}/mcp`,
    `  Inspector:     npx -y @modelcontextprotocol/inspector  → transport "Streamable HTTP", URL above`,
    `  Claude Code:   claude mcp add --transport http skillpin http://${host}:${port}/mcp`,
    '  Stop with Ctrl-C.',
    '',
  ].join('\n'),
);

// The child's logs come as JSON lines so that the example's skill problems can be told apart; they go out pretty on
// a terminal. The IPC channel is how the child notices this process is gone, even killed abruptly.
const child = spawn(
  process.execPath,
  [
    '--import',
    'data:text/javascript,process.on("disconnect",()=>process.kill(process.pid,"SIGTERM"))',
    path.join(root, 'bin', 'skillpin.js'),
    '--log-format',
    'json',
    'serve',
    '--config',
    config,
    '--http',
    `${host}:${port}`,
  ],
  { stdio: ['ignore', 'inherit', 'pipe', 'ipc'] },
);
// A signal to this process (npm's SIGTERM, a closed terminal's SIGHUP) is passed on; this process ends with the child.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => {
  process.exitCode = code ?? (signal === null ? 1 : 128);
});
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
let told = false;
for await (const line of createInterface({ input: child.stderr! })) {
  const entry = parsed(line);
  // A skill problem (it names a path and a reason) of this example's config is one of its fixtures, broken on purpose.
  if (typeof entry?.['path'] === 'string' && typeof entry['reason'] === 'string') {
    continue;
  }
  if (!told && String(entry?.['msg']).startsWith('serving')) {
    told = true;
    process.stderr.write(
      `skillpin example: the example includes broken skills on purpose: see them on the status page http://${host}:${port}/ or with \`node bin/skillpin.js status -c ${shown(config)}\`\n`,
    );
  }
  process.stderr.write(pretty(line));
}

function parsed(line: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
