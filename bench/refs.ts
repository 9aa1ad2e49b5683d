/**
 * Versions side by side (`refs:`), over loopback against the real server and CLI:
 *  1. tag-push-to-listing latency of a `refs: ["v*"]` source (1-second poll, and a webhook), beside a branch
 *     push reaching a `ref: main` source the same way, in the same run;
 *  2. following 50 matching tags with one `refs:` source against 50 sources configured by hand (`ref: v1.<i>.0`):
 *     requests to the remote, wall time, peak RSS of `skillpin sync`, dataDir size; first sync, then a second
 *     sync (a poll with nothing new).
 * Usage: npm run build && npx tsx bench/refs.ts [pushes=5]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { stringify } from 'yaml';
import { PROJECT_ROOT } from '../test/helpers/fixtures.ts';
import { git as run } from '../test/helpers/git.ts';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../test/helpers/pushable.ts';
import { connectHttp, startHttp, writeConfig } from '../test/helpers/server.ts';

const pushes = Number(process.argv[2] ?? '5');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const range = (values: number[]) =>
  `${median(values).toFixed(0)} ms (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)})`;

async function latency(): Promise<void> {
  const secret = 'bench-secret';
  const root = mkdtempSync(path.join(tmpdir(), 'skillpin-refs-bench-'));
  const repo = pushableRepo(root, 'skills');
  const tag = (name: string, commit: string) =>
    run(['--git-dir', repo.bare, 'update-ref', `refs/tags/${name}`, commit]);
  tag('v0.0.0', repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v0') }));
  const remote = await startGitHttpServer({ root });
  const url = remote.urlFor('skills.git');
  const server = await startHttp(
    writeConfig({
      webhook: { secret: '${BENCH_SECRET}' },
      sources: [
        { id: 'tags-polled', url, refs: ['v*'], poll: '1s' },
        { id: 'tags-hooked', url, refs: ['v*'], poll: '1h' },
        { id: 'branch-polled', url, ref: 'main', poll: '1s' },
        { id: 'branch-hooked', url, ref: 'main', poll: '1h' },
      ],
    }),
    [],
    { BENCH_SECRET: secret },
  );
  const { client, close } = await connectHttp(server.url, 'modern');
  const skills = new SkillsClient(client);
  const listedUris = async () => (await skills.list()).skills.map((s) => s.uri);
  const hook = (source: string) =>
    fetch(server.url.replace('/mcp', '/hooks/git'), {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source }),
    });
  const waitFor = async (prefix: string, started: number) => {
    while (!(await listedUris()).some((uri) => uri.startsWith(prefix)))
      await new Promise((resolve) => setTimeout(resolve, 10));
    return performance.now() - started;
  };
  const times: Record<string, number[]> = { tagPoll: [], tagHook: [], branchPoll: [], branchHook: [] };
  for (let i = 1; i <= pushes; i++) {
    const commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', `v${i}`) });
    tag(`v${i}.0.0`, commit);
    const started = performance.now();
    const hooked = Promise.all([hook('tags-hooked'), hook('branch-hooked')]).then(() => undefined);
    const [tagPoll, tagHook, branchPoll, branchHook] = await Promise.all([
      waitFor(`skill://tags-polled.v${i}.0.0/${commit}/`, started),
      hooked.then(() => waitFor(`skill://tags-hooked.v${i}.0.0/${commit}/`, started)),
      waitFor(`skill://branch-polled/${commit}/`, started),
      hooked.then(() => waitFor(`skill://branch-hooked/${commit}/`, started)),
    ]);
    times['tagPoll']!.push(tagPoll);
    times['tagHook']!.push(tagHook);
    times['branchPoll']!.push(branchPoll);
    times['branchHook']!.push(branchHook);
  }
  console.log(`push-to-listing latency over loopback, ${pushes} pushes (median, min-max):`);
  console.log(`  new tag, refs: ["v*"], poll 1s:  ${range(times['tagPoll']!)}`);
  console.log(`  new tag, refs: ["v*"], webhook:  ${range(times['tagHook']!)}`);
  console.log(`  branch push, ref: main, poll 1s: ${range(times['branchPoll']!)}   (peer)`);
  console.log(`  branch push, ref: main, webhook: ${range(times['branchHook']!)}   (peer)`);
  await close();
  await server.stop();
  await remote.close();
}

/** `skillpin sync -c <config>` once, as a child (the remote answers from this process meanwhile): wall ms, peak RSS. */
function syncOnce(config: string): Promise<{ ms: number; rssKiB: number; ok: boolean }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(
      '/usr/bin/time',
      ['-f', '%M', process.execPath, path.join(PROJECT_ROOT, 'bin', 'skillpin.js'), 'sync', '-c', config],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-4096);
    });
    child.on('close', (code) => {
      const rssKiB = Number(stderr.trim().split('\n').at(-1));
      resolve({ ms: performance.now() - started, rssKiB, ok: code === 0 });
    });
  });
}

async function fiftyTags(): Promise<void> {
  const count = 50;
  const root = mkdtempSync(path.join(tmpdir(), 'skillpin-refs-fifty-'));
  const repo = pushableRepo(root, 'policies');
  for (let i = 0; i < count; i++) {
    const commit = repo.push({
      'refunds/SKILL.md': skillMd('refunds', `policy ${i}`),
      'returns/SKILL.md': skillMd('returns', 'unchanged'),
    });
    run(['--git-dir', repo.bare, 'update-ref', `refs/tags/v1.${i}.0`, commit]);
  }
  const remote = await startGitHttpServer({ root });
  const url = remote.urlFor('policies.git');
  const configOf = (name: string, sources: unknown[]) => {
    const dir = mkdtempSync(path.join(tmpdir(), `skillpin-refs-${name}-`));
    const file = path.join(dir, 'skillpin.yaml');
    writeFileSync(file, stringify({ dataDir: path.join(dir, 'data'), sources }));
    return { file, dataDir: path.join(dir, 'data') };
  };
  const setups = {
    'one refs: ["v*"] source': configOf('group', [{ id: 'policies', url, refs: ['v*'] }]),
    '50 sources by hand': configOf(
      'hand',
      Array.from({ length: count }, (_, i) => ({ id: `policies-${i}`, url, ref: `v1.${i}.0` })),
    ),
  };
  console.log(
    `\nfollowing ${count} matching tags (skillpin sync, a child process; load: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}):`,
  );
  for (const [name, { file, dataDir }] of Object.entries(setups)) {
    for (const pass of ['first sync', 'second sync (nothing new)']) {
      const before = remote.requests.length;
      const { ms, rssKiB, ok } = await syncOnce(file);
      const requests = remote.requests.slice(before);
      const listings = requests.filter((r) => r.path.endsWith('/info/refs')).length;
      const fetches = requests.filter((r) => r.fetch).length;
      const size = execFileSync('du', ['-sk', dataDir], { encoding: 'utf8' }).split('\t')[0];
      console.log(
        `  ${name.padEnd(26)} ${pass.padEnd(26)} ${ok ? 'ok  ' : 'FAIL'} ${ms.toFixed(0).padStart(6)} ms  ` +
          `${String(requests.length).padStart(4)} requests (${listings} ref listings, ${fetches} fetches)  ` +
          `peak RSS ${(rssKiB / 1024).toFixed(0)} MiB  dataDir ${size} KiB`,
      );
    }
  }
  await remote.close();
}

await latency();
await fiftyTags();
