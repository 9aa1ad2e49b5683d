/**
 * Open at once: time from `skillpin serve --http` starting to the port answering and to skills/list showing the
 * healthy sources, (a) beside a remote that never answers and one that drips a byte every 500 ms, and (b) the
 * same healthy sources alone (the peer), in the same run. Fresh dataDir each time (nothing to restore).
 * Usage: npx tsx bench/open.ts [runs=5]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { PROJECT_ROOT } from '../test/helpers/fixtures.ts';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../test/helpers/pushable.ts';
import { makeRepo } from '../test/helpers/repo.ts';
import { CLI_ARGS, writeConfig } from '../test/helpers/server.ts';
import { drippingRemote, silentRemote } from '../test/helpers/slowRemotes.ts';

const runs = Number(process.argv[2] ?? '5');
const root = mkdtempSync(path.join(tmpdir(), 'skillpin-open-bench-'));
pushableRepo(root, 'skills').push({ 'alpha/SKILL.md': skillMd('alpha', 'healthy') });
const git = await startGitHttpServer({ root });
const silent = await silentRemote();
const drip = await drippingRemote();
const local = makeRepo({ 'beta/SKILL.md': skillMd('beta', 'local') });
const healthy = [
  { id: 'healthy', url: git.urlFor('skills.git'), ref: 'main' },
  { id: 'local', path: local.dir, commit: local.commit },
];
const slow = [
  { id: 'silent', url: silent.url, ref: 'main' },
  { id: 'drip', url: drip.url, ref: 'main' },
];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 5));

/** Milliseconds from spawn to the port answering, and to skills/list showing both healthy sources. */
async function measure(sources: object[]): Promise<{ port: number; listed: number }> {
  const port = await freePort();
  const config = writeConfig({ sync: { timeout: '10m' }, sources });
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [...CLI_ARGS, 'serve', '--config', config, '--http', `127.0.0.1:${port}`],
    {
      cwd: PROJECT_ROOT,
      stdio: 'ignore',
    },
  );
  const base = `http://127.0.0.1:${port}`;
  while (
    !(await fetch(`${base}/readyz`).then(
      () => true,
      () => false,
    ))
  )
    await pause();
  const answered = performance.now() - started;
  const client = new Client(
    { name: 'bench', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  const skills = new SkillsClient(client);
  while ((await skills.list()).skills.length < 2) await pause();
  const listed = performance.now() - started;
  await client.close();
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  return { port: answered, listed };
}

/** The floor: the same CLI starting and exiting (`--version`), without serving anything. */
async function startup(): Promise<number> {
  const started = performance.now();
  const child = spawn(process.execPath, [...CLI_ARGS, '--version'], { cwd: PROJECT_ROOT, stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return performance.now() - started;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const withSlow: Array<{ port: number; listed: number }> = [];
const alone: Array<{ port: number; listed: number }> = [];
const floor: number[] = [];
for (let i = 0; i < runs; i++) {
  withSlow.push(await measure([...slow, ...healthy]));
  alone.push(await measure(healthy));
  floor.push(await startup());
}
const row = (what: string, key: 'port' | 'listed') => {
  const a = median(withSlow.map((m) => m[key]));
  const b = median(alone.map((m) => m[key]));
  console.log(
    `  ${what.padEnd(34)} ${a.toFixed(0).padStart(6)} ms  ${b.toFixed(0).padStart(6)} ms  ${(a / b).toFixed(2)}×`,
  );
};
console.log(`serve --http, fresh dataDir, median of ${runs} (process start included):`);
console.log(`  ${''.padEnd(34)} ${'+silent+drip'.padStart(9)}  ${'peer: alone'.padStart(9)}  ratio`);
row('port answers (GET /readyz)', 'port');
row('skills/list shows healthy sources', 'listed');
console.log(`  ${'floor: skillpin --version exits'.padEnd(34)} ${median(floor).toFixed(0).padStart(6)} ms`);
await Promise.all([git.close(), silent.close(), drip.close()]);
