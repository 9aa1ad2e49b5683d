/**
 * Hostile remotes bench: peak RSS of one fetch that the pack guard refuses, per backend, each in its own process:
 *   endless  a pack that never ends (a fault proxy in front of a loopback server), sync.maxFetchBytes 64 MiB
 *   bomb     one commit holding 1 GiB of zeros in a pack of about 1 MB
 * Printed: the reason and the peak RSS of skillpin's process and of its whole tree (git children included, under the
 * cli backend), MiB.
 * Usage: npx tsx bench/hostile.ts
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fetchCommit, GitError, openStore } from '../src/git/index.ts';
import { startFaultProxy } from '../test/helpers/faultProxy.ts';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { bombRepo } from '../test/helpers/hostilePacks.ts';
import { TEST_FIXTURES_DIR } from '../test/helpers/fixtures.ts';

const MAX_FETCH_BYTES = 64 * 1024 * 1024;

interface Sample {
  reason: string;
  ms: number;
  selfMiB: number;
  treeMiB: number;
}

/** One fetch in a process of its own under /usr/bin/time: its own peak, and its tree's (the largest process). */
function child(backend: string, url: string, commit: string): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const proc = spawn(
      '/usr/bin/time',
      [
        '-f',
        '%M',
        process.execPath,
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--child',
        backend,
        url,
        commit,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    proc.once('exit', (code) => {
      if (code !== 0) return reject(new Error(`child exited ${code}: ${err}`));
      const treeKiB = Number(err.trim().split('\n').at(-1));
      resolve({ ...(JSON.parse(out) as Omit<Sample, 'treeMiB'>), treeMiB: treeKiB / 1024 });
    });
  });
}

async function main(): Promise<void> {
  const bomb = await bombRepo();
  const server = await startGitHttpServer({ root: TEST_FIXTURES_DIR });
  const proxy = await startFaultProxy(server.url);
  proxy.setFault({ kind: 'endless-pack' });
  try {
    for (const backend of ['cli', 'isomorphic'])
      for (const [kind, url] of [
        ['endless', `${proxy.url}/bomb.git`],
        ['bomb', server.urlFor('bomb.git')],
      ] as const) {
        const s = await child(backend, url, bomb.commit);
        console.log(
          `${backend.padEnd(10)} ${kind.padEnd(8)} ${s.reason.padEnd(16)} ${s.ms.toFixed(0).padStart(6)} ms  peak RSS ${s.selfMiB.toFixed(0)} MiB (process), ${s.treeMiB.toFixed(0)} MiB (largest of its tree)`,
        );
      }
  } finally {
    await proxy.close();
    await server.close();
  }
}

if (process.argv[2] === '--child') {
  const [, , , backend, url, commit] = process.argv;
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-hostile-'));
  const store = await openStore(path.join(dir, 'store.git'), { backend: backend as 'cli' | 'isomorphic' });
  const started = performance.now();
  const reason = await fetchCommit(store, { url: url!, maxFetchBytes: MAX_FETCH_BYTES }, commit!).then(
    () => 'fetched',
    (error: unknown) => (error instanceof GitError ? error.code : String(error)),
  );
  const ms = performance.now() - started;
  await store.close();
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify({ reason, ms, selfMiB: process.resourceUsage().maxRSS / 1024 }));
} else {
  await main();
}
