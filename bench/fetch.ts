/**
 * Fetch benchmark, side by side in one run, over a loopback smart-HTTP server (git http-backend):
 *   skillpin cold   fetchCommit of a pinned commit into an empty store (isomorphic-git, depth 1, one want)
 *   git cold        `git fetch --depth 1 <url> <sha>` into an empty bare repository (the peer)
 *   skillpin incr.  fetchCommit of the next commit (one file changed) into the store holding the first
 * Each measurement runs in its own process: wall time and peak RSS (git's via /usr/bin/time).
 * Usage: npx tsx bench/fetch.ts [skills=1000] [filesPerSkill=5] [runs=3]
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchCommit, openStore } from '../src/git/index.ts';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const workDir = path.resolve(here, '..', '.skillpin', 'bench');
interface Sample {
  ms: number;
  rssMiB: number;
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

async function main(): Promise<void> {
  const [skills = '1000', perSkill = '5', runs = '3'] = process.argv.slice(2);
  const repo = syntheticRepo(workDir, Number(skills), Number(perSkill));
  const server = await startGitHttpServer({
    root: path.dirname(repo.gitdir),
    config: { 'uploadpack.allowAnySHA1InWant': 'true' },
  });
  const url = server.urlFor(path.basename(repo.gitdir));
  const samples: Record<string, Sample[]> = { ours: [], git: [], incremental: [] };
  try {
    for (let run = 0; run < Number(runs); run++) {
      samples['git']!.push(await gitFetch(url, repo.base));
      samples['ours']!.push(await child(['cold', url, repo.base]));
      samples['incremental']!.push(await child(['incremental', url, repo.changed, repo.base]));
    }
  } finally {
    await server.close();
  }
  const pick = (key: string) => ({
    ms: median(samples[key]!.map((s) => s.ms)),
    rssMiB: median(samples[key]!.map((s) => s.rssMiB)),
  });
  const git = pick('git');
  const ours = pick('ours');
  const incremental = pick('incremental');
  console.log(`fetch bench: ${repo.files} files, loopback git http-backend, median of ${runs} runs`);
  console.log(
    `  git fetch --depth 1 (peer):        ${git.ms.toFixed(0)} ms, peak RSS ${git.rssMiB.toFixed(0)} MiB`,
  );
  console.log(
    `  skillpin cold fetch:               ${ours.ms.toFixed(0)} ms, peak RSS ${ours.rssMiB.toFixed(0)} MiB`,
  );
  console.log(
    `  skillpin incremental (one file):   ${incremental.ms.toFixed(0)} ms, peak RSS ${incremental.rssMiB.toFixed(0)} MiB`,
  );
  console.log(
    `  ratio cold / git:                  ${(ours.ms / git.ms).toFixed(2)}x time, ${(ours.rssMiB / git.rssMiB).toFixed(2)}x peak RSS`,
  );
  console.log(`  ratio incremental / cold:          ${(incremental.ms / ours.ms).toFixed(2)}x time`);
}

if (process.argv[2] === '--child') {
  const [, , , kind, url, commit, have] = process.argv;
  const store = await openStore(path.join(mkdtempSync(path.join(tmpdir(), 'bench-store-')), 'store.git'));
  // The store's current commit, and its trees as the sync worker keeps them from the previous walk.
  const trees = kind === 'incremental' ? await fetchCommit(store, { url: url! }, have!) : undefined;
  const started = performance.now();
  await fetchCommit(
    store,
    { url: url! },
    commit!,
    kind === 'incremental' ? { have: have!, trees: trees! } : {},
  );
  const ms = performance.now() - started;
  process.stdout.write(JSON.stringify({ ms, rssMiB: process.resourceUsage().maxRSS / 1024 }));
  rmSync(path.dirname(store.gitdir), { recursive: true, force: true });
} else {
  await main();
}
