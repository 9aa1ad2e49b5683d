/**
 * Indexing benchmark, side by side in one run (each measurement in its own child process, so peak RSS is its own),
 * on a synthetic repository (1000 skills × 5 files) and on one with a 250 MiB pack of history (bench/longhistory.ts).
 * Each child indexes WARM_UP_RUNS + MEASURED_RUNS times with nothing cached (a new repository handle and index
 * cache each time) and reports three figures, as issue 10 measured ("medians of 5, in-process, after start-up"):
 *   first five  the median of the first MEASURED_RUNS runs in the process;
 *   warm        the median of the MEASURED_RUNS runs after WARM_UP_RUNS more, when V8 has compiled our code (on a
 *               2-core machine its optimising compiler, running beside git, costs the first runs 20-40 ms each;
 *               the peer's work is mostly native);
 *   first run   the first alone.
 *   peer        `git ls-tree -r` + `git cat-file --batch` + sha256 of every blob of the same commit
 *   cli         walk the commit's tree and index it (find skills, hash every served blob, apply the rules) with
 *               the cli backend (one long-lived git cat-file --batch)
 *   isomorphic  the same with the isomorphic backend (our pack reader)
 *   reindex     the next commit (one file changed) with the digest cache of the first: only new blobs are hashed
 * Usage: npx tsx bench/index.ts [skills=1000] [filesPerSkill=5] [runs=3] (runs: child processes per measurement)
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { blobAccess, openLocalRepository, type TreeCache, walkCommit } from '../src/git/index.ts';
import { indexCommit, newIndexCache } from '../src/index/index.ts';
import { longHistoryRepo } from './longhistory.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const workDir = path.resolve(here, '..', '.skillpin', 'bench');

interface Sample {
  /** Median of the MEASURED_RUNS runs after WARM_UP_RUNS. */
  ms: number;
  /** Median of the first MEASURED_RUNS runs in the process. */
  coldMs: number;
  /** The first run in the process. */
  firstMs: number;
  rssMiB: number;
  detail: string;
}

const MEASURED_RUNS = 5;
const WARM_UP_RUNS = 3;

/** Runs `once` WARM_UP_RUNS + MEASURED_RUNS times in this process: the medians, the first, and peak RSS. */
async function inProcess(once: () => Promise<{ ms: number; detail: string }>): Promise<Sample> {
  const runs = [];
  for (let run = 0; run < WARM_UP_RUNS + MEASURED_RUNS; run++) runs.push(await once());
  const ms = runs.map((run) => run.ms);
  return {
    ms: median(ms.slice(WARM_UP_RUNS)),
    coldMs: median(ms.slice(0, MEASURED_RUNS)),
    firstMs: ms[0]!,
    rssMiB: process.resourceUsage().maxRSS / 1024,
    detail: runs[0]!.detail,
  };
}

async function skillpinIndex(
  gitdir: string,
  commit: string,
  backend: 'cli' | 'isomorphic',
  warmFrom?: string,
): Promise<{ ms: number; detail: string }> {
  const repo = await openLocalRepository(gitdir, { backend });
  const cache = newIndexCache();
  let trees: TreeCache | undefined;
  const index = async (oid: string) => {
    const tree = await walkCommit(repo, oid, trees);
    trees = tree.trees;
    // As sync indexes: sizes from the headers first (a skill over the limits is not read), blobs streamed.
    return indexCommit({ ...tree, ...blobAccess(repo), cache });
  };
  if (warmFrom !== undefined) await index(warmFrom);
  const hashedBefore = cache.blobs.size;
  const started = performance.now();
  const result = await index(commit);
  const ms = performance.now() - started;
  await repo.close();
  const files = result.skills.reduce((sum, s) => sum + s.files.length, 0);
  return {
    ms,
    detail: `${result.skills.length} skills, ${files} files, ${cache.blobs.size - hashedBefore} blobs hashed`,
  };
}

async function peerIndex(gitdir: string, commit: string): Promise<{ ms: number; detail: string }> {
  const started = performance.now();
  const listing = spawnSync('git', ['--git-dir', gitdir, 'ls-tree', '-r', commit], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const oids = listing.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(/\s+/)[2]!);
  const child = spawn('git', ['--git-dir', gitdir, 'cat-file', '--batch'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  child.stdin.end(`${oids.join('\n')}\n`);
  let pending = Buffer.alloc(0);
  let hashed = 0;
  for await (const chunk of child.stdout) {
    pending = Buffer.concat([pending, chunk as Buffer]);
    for (;;) {
      const newline = pending.indexOf(10);
      if (newline === -1) break;
      const size = Number(pending.subarray(0, newline).toString().split(' ')[2]);
      if (pending.length < newline + 1 + size + 1) break;
      createHash('sha256')
        .update(pending.subarray(newline + 1, newline + 1 + size))
        .digest('hex');
      hashed++;
      pending = pending.subarray(newline + 1 + size + 1);
    }
  }
  const ms = performance.now() - started;
  return {
    ms,
    detail: `${hashed} blobs hashed (git's own RSS not counted)`,
  };
}

/** Runs one measurement in a fresh process and returns what it printed. */
function measure(kind: string, args: string[]): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', kind, ...args],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Sample) : reject(new Error(`${kind} exited ${code}`)),
    );
  });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

function summary(samples: Sample[]): Sample {
  return {
    ms: median(samples.map((s) => s.ms)),
    coldMs: median(samples.map((s) => s.coldMs)),
    firstMs: median(samples.map((s) => s.firstMs)),
    rssMiB: median(samples.map((s) => s.rssMiB)),
    detail: samples[0]!.detail,
  };
}

async function runAll(kinds: Array<[string, string[]]>, runs: number): Promise<Map<string, Sample>> {
  const results = new Map<string, Sample[]>();
  for (let run = 0; run < runs; run++)
    for (const [kind, args] of kinds)
      results.set(kind, [...(results.get(kind) ?? []), await measure(kind, args)]);
  return new Map([...results].map(([kind, samples]) => [kind, summary(samples)]));
}

const line = (label: string, s: Sample) =>
  `  ${label.padEnd(34)} ${s.ms.toFixed(0).padStart(6)} ms warm (first five ${s.coldMs.toFixed(0).padStart(4)} ms, first run ${s.firstMs.toFixed(0).padStart(4)} ms), peak RSS ${s.rssMiB.toFixed(0).padStart(4)} MiB (${s.detail})`;
const ratio = (ours: Sample, peer: Sample) =>
  `${(ours.ms / peer.ms).toFixed(2)}x time warm (first five ${(ours.coldMs / peer.coldMs).toFixed(2)}x, first runs ${(ours.firstMs / peer.firstMs).toFixed(2)}x)`;

async function main(): Promise<void> {
  const [skills = '1000', perSkill = '5', runs = '3'] = process.argv.slice(2);
  const repo = syntheticRepo(workDir, Number(skills), Number(perSkill));
  const r = await runAll(
    [
      ['peer', [repo.gitdir, repo.base]],
      ['cli', [repo.gitdir, repo.base]],
      ['isomorphic', [repo.gitdir, repo.base]],
      ['reindex-cli', [repo.gitdir, repo.changed, repo.base]],
      ['reindex-isomorphic', [repo.gitdir, repo.changed, repo.base]],
    ],
    Number(runs),
  );
  const peer = r.get('peer')!;
  console.log(
    `index bench: ${skills} skills x ${perSkill} files (${repo.files} files), median of ${runs} runs, each in its own process`,
  );
  console.log(line('peer: git ls-tree + cat-file + sha256', peer));
  for (const backend of ['cli', 'isomorphic']) {
    const cold = r.get(backend)!;
    const re = r.get(`reindex-${backend}`)!;
    console.log(line(`${backend} cold index`, cold));
    console.log(line(`${backend} re-index after one change`, re));
    console.log(
      `  ratio ${backend} cold / peer: ${ratio(cold, peer)}; re-index / cold: ${(re.ms / cold.ms).toFixed(2)}x`,
    );
  }
  const long = await longHistoryRepo(workDir);
  const l = await runAll(
    [
      ['peer', [long.gitdir, long.tip]],
      ['cli', [long.gitdir, long.tip]],
      ['isomorphic', [long.gitdir, long.tip]],
    ],
    Number(runs),
  );
  console.log(
    `index bench: a commit of 401 blobs in a repository with a ${long.packMiB.toFixed(0)} MiB pack`,
  );
  console.log(line('peer: git ls-tree + cat-file + sha256', l.get('peer')!));
  for (const backend of ['cli', 'isomorphic']) {
    const s = l.get(backend)!;
    console.log(line(`${backend} cold index`, s));
    console.log(
      `  ratio ${backend} / peer: ${ratio(s, l.get('peer')!)}; peak RSS of the whole Node process ${s.rssMiB.toFixed(0)} MiB (target ${backend === 'cli' ? 150 : 250} MiB)`,
    );
  }
}

if (process.argv[2] === '--child') {
  const [, , , kind, gitdir, commit, warm] = process.argv;
  const backend = kind!.endsWith('isomorphic') ? 'isomorphic' : 'cli';
  const sample = await inProcess(() =>
    kind === 'peer'
      ? peerIndex(gitdir!, commit!)
      : skillpinIndex(gitdir!, commit!, backend, kind!.startsWith('reindex') ? warm : undefined),
  );
  process.stdout.write(JSON.stringify(sample));
} else {
  await main();
}
