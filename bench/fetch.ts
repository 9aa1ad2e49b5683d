/**
 * Fetch benchmark, side by side in one run, over a loopback smart-HTTP server (git http-backend):
 *   git cold        `git fetch --depth 1 <url> <sha>` into an empty bare repository (the peer)
 *   <backend> cold  fetchCommit of a pinned commit into an empty store (depth 1, one want), cli and isomorphic
 *   <backend> incr. fetchCommit of the next commit (one file changed) into the store holding the first
 *   partial         bytes a source with `paths: [skills]` brings from the long-history repository (1 MiB asset
 *                   outside skills/ at its tip), against a pack of exactly the commit, its trees and the blobs
 *                   under skills/ (git pack-objects)
 * Each measurement runs in its own process: wall time and peak RSS (git's via /usr/bin/time).
 * Usage: npx tsx bench/fetch.ts [skills=1000] [filesPerSkill=5] [runs=3]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchCommit, openStore } from '../src/git/index.ts';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { longHistoryRepo } from './longhistory.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const workDir = path.resolve(here, '..', '.skillpin', 'bench');
interface Sample {
  ms: number;
  rssMiB: number;
  /** Bytes of the packs in the store afterwards. */
  bytes?: number;
}

async function child(args: string[]): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', ...args],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Sample) : reject(new Error(`child exited ${code}`)),
    );
  });
}

/** `git fetch --depth 1` of one commit into an empty bare repository; async, since the server runs in this process. */
async function gitFetch(url: string, commit: string): Promise<Sample> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-git-'));
  execFileSync('git', ['init', '--quiet', '--bare', dir]);
  const started = performance.now();
  const stderr = await new Promise<string>((resolve, reject) => {
    const proc = spawn(
      '/usr/bin/time',
      ['-f', '%M', 'git', '--git-dir', dir, 'fetch', '--quiet', '--depth', '1', url, commit],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      },
    );
    let text = '';
    proc.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
    proc.once('exit', (code) =>
      code === 0 ? resolve(text) : reject(new Error(`git fetch exited ${code}: ${text}`)),
    );
  });
  const ms = performance.now() - started;
  rmSync(dir, { recursive: true, force: true });
  return { ms, rssMiB: Number(stderr.trim().split('\n').at(-1)) / 1024 };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Bytes of a pack holding exactly `commit`, every tree of it and the blobs under `dir`. */
function idealPackBytes(gitdir: string, commit: string, dir: string): number {
  const listing = execFileSync('git', ['--git-dir', gitdir, 'ls-tree', '-r', '-t', commit], {
    encoding: 'utf8',
  });
  const oids = [
    commit,
    execFileSync('git', ['--git-dir', gitdir, 'rev-parse', `${commit}^{tree}`], { encoding: 'utf8' }).trim(),
  ];
  for (const line of listing.trim().split('\n')) {
    const [meta, file] = line.split('\t') as [string, string];
    const [, type, oid] = meta.split(' ') as [string, string, string];
    if (type === 'tree' || file.startsWith(`${dir}/`)) oids.push(oid);
  }
  return execFileSync('git', ['--git-dir', gitdir, 'pack-objects', '--stdout', '-q'], {
    input: `${oids.join('\n')}\n`,
    maxBuffer: 1 << 30,
  }).length;
}

async function main(): Promise<void> {
  const [skills = '1000', perSkill = '5', runs = '3'] = process.argv.slice(2);
  const repo = syntheticRepo(workDir, Number(skills), Number(perSkill));
  const long = await longHistoryRepo(workDir);
  const server = await startGitHttpServer({
    root: path.dirname(repo.gitdir),
    config: { 'uploadpack.allowAnySHA1InWant': 'true', 'uploadpack.allowFilter': 'true' },
  });
  const url = server.urlFor(path.basename(repo.gitdir));
  const kinds = ['cli', 'isomorphic'];
  const samples: Record<string, Sample[]> = { git: [] };
  const partial: Record<string, Sample> = {};
  try {
    for (let run = 0; run < Number(runs); run++) {
      samples['git']!.push(await gitFetch(url, repo.base));
      for (const kind of kinds) {
        (samples[kind] ??= []).push(await child(['cold', kind, url, repo.base]));
        (samples[`${kind}-incremental`] ??= []).push(
          await child(['incremental', kind, url, repo.changed, repo.base]),
        );
      }
    }
    const longUrl = server.urlFor(path.basename(long.gitdir));
    for (const kind of kinds) partial[kind] = await child(['partial', kind, longUrl, long.tip]);
  } finally {
    await server.close();
  }
  const pick = (key: string) => ({
    ms: median(samples[key]!.map((s) => s.ms)),
    rssMiB: median(samples[key]!.map((s) => s.rssMiB)),
  });
  const git = pick('git');
  console.log(`fetch bench: ${repo.files} files, loopback git http-backend, median of ${runs} runs`);
  console.log(
    `  git fetch --depth 1 (peer):        ${git.ms.toFixed(0)} ms, peak RSS ${git.rssMiB.toFixed(0)} MiB`,
  );
  for (const kind of kinds) {
    const cold = pick(kind);
    const incremental = pick(`${kind}-incremental`);
    console.log(
      `  ${kind} cold fetch:`.padEnd(37) + `${cold.ms.toFixed(0)} ms, peak RSS ${cold.rssMiB.toFixed(0)} MiB`,
    );
    console.log(
      `  ${kind} incremental (one file):`.padEnd(37) +
        `${incremental.ms.toFixed(0)} ms, peak RSS ${incremental.rssMiB.toFixed(0)} MiB`,
    );
    console.log(
      `  ratio ${kind} cold / git:`.padEnd(37) +
        `${(cold.ms / git.ms).toFixed(2)}x time, ${(cold.rssMiB / git.rssMiB).toFixed(2)}x peak RSS; incremental / cold ${(incremental.ms / cold.ms).toFixed(2)}x`,
    );
  }
  const ideal = idealPackBytes(long.gitdir, long.tip, 'skills');
  console.log(
    `partial fetch: paths [skills] of the long-history tip (${long.packMiB.toFixed(0)} MiB pack, a 1 MiB asset outside skills/)`,
  );
  console.log(`  ideal: commit + trees + blobs under skills/: ${(ideal / 1024).toFixed(0)} KiB`);
  for (const kind of kinds)
    console.log(
      `  ${kind}: ${(partial[kind]!.bytes! / 1024).toFixed(0)} KiB received, ${(partial[kind]!.bytes! / ideal).toFixed(2)}x ideal, ${partial[kind]!.ms.toFixed(0)} ms`,
    );
}

if (process.argv[2] === '--child') {
  const [, , , kind, backend, url, commit, have] = process.argv;
  const settings = { backend: backend as 'cli' | 'isomorphic' };
  const store = await openStore(
    path.join(mkdtempSync(path.join(tmpdir(), 'bench-store-')), 'store.git'),
    settings,
  );
  // The store's current commit, and its trees as the sync worker keeps them from the previous walk.
  const trees = kind === 'incremental' ? await fetchCommit(store, { url: url! }, have!) : undefined;
  const started = performance.now();
  await fetchCommit(
    store,
    { url: url! },
    commit!,
    kind === 'incremental' ? { have: have!, trees: trees! } : kind === 'partial' ? { paths: ['skills'] } : {},
  );
  const ms = performance.now() - started;
  await store.close();
  const packs = path.join(store.gitdir, 'objects', 'pack');
  const bytes = readdirSync(packs)
    .filter((file) => file.endsWith('.pack'))
    .reduce((sum, file) => sum + statSync(path.join(packs, file)).size, 0);
  process.stdout.write(JSON.stringify({ ms, rssMiB: process.resourceUsage().maxRSS / 1024, bytes }));
  rmSync(path.dirname(store.gitdir), { recursive: true, force: true });
} else {
  await main();
}
