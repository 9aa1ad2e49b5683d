/**
 * Indexing benchmark, side by side in one run (each measurement in its own child process, so peak RSS is its own):
 *   skillpin  walk the commit's tree with isomorphic-git, find skills, hash every served blob (sha256), apply the rules
 *   peer      `git ls-tree -r` + `git cat-file --batch` + sha256 of every blob of the same commit
 *   reindex   the next commit (one file changed) with the digest cache of the first: only new blobs are hashed
 * Usage: npx tsx bench/index.ts [skills=1000] [filesPerSkill=5] [runs=3]
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openLocalRepository, readBlob, walkCommit, type TreeCache } from '../src/git/index.ts';
import { indexCommit, newIndexCache } from '../src/index/index.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const workDir = path.resolve(here, '..', '.skillpin', 'bench');

interface Sample {
  ms: number;
  rssMiB: number;
  detail: string;
}

async function skillpinIndex(gitdir: string, commit: string, warmFrom?: string): Promise<Sample> {
  const repo = await openLocalRepository(gitdir);
  const cache = newIndexCache();
  let trees: TreeCache | undefined;
  const index = async (oid: string) => {
    const tree = await walkCommit(repo, oid, trees);
    trees = tree.trees;
    return indexCommit({ ...tree, readBlob: (id) => readBlob(repo, id), cache });
  };
  if (warmFrom !== undefined) await index(warmFrom);
  const hashedBefore = cache.blobs.size;
  const started = performance.now();
  const result = await index(commit);
  const ms = performance.now() - started;
  const files = result.skills.reduce((sum, s) => sum + s.files.length, 0);
  return {
    ms,
    rssMiB: process.resourceUsage().maxRSS / 1024,
    detail: `${result.skills.length} skills, ${files} files, ${cache.blobs.size - hashedBefore} blobs hashed`,
  };
}

async function peerIndex(gitdir: string, commit: string): Promise<Sample> {
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
    rssMiB: process.resourceUsage().maxRSS / 1024,
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

async function main(): Promise<void> {
  const [skills = '1000', perSkill = '5', runs = '3'] = process.argv.slice(2);
  const repo = syntheticRepo(workDir, Number(skills), Number(perSkill));
  const kinds: Array<[string, string[]]> = [
    ['peer', [repo.gitdir, repo.base]],
    ['skillpin', [repo.gitdir, repo.base]],
    ['reindex', [repo.gitdir, repo.changed, repo.base]],
  ];
  const results = new Map<string, Sample[]>();
  for (let run = 0; run < Number(runs); run++) {
    for (const [kind, args] of kinds)
      results.set(kind, [...(results.get(kind) ?? []), await measure(kind, args)]);
  }
  const summary = (kind: string) => {
    const samples = results.get(kind)!;
    return {
      ms: median(samples.map((s) => s.ms)),
      rssMiB: median(samples.map((s) => s.rssMiB)),
      detail: samples[0]!.detail,
    };
  };
  const peer = summary('peer');
  const ours = summary('skillpin');
  const re = summary('reindex');
  console.log(
    `index bench: ${skills} skills x ${perSkill} files (${repo.files} files), median of ${runs} runs, each in its own process`,
  );
  console.log(
    `  peer     git ls-tree -r + cat-file --batch + sha256: ${peer.ms.toFixed(0)} ms, peak RSS ${peer.rssMiB.toFixed(0)} MiB (${peer.detail})`,
  );
  console.log(
    `  skillpin cold index:                               ${ours.ms.toFixed(0)} ms, peak RSS ${ours.rssMiB.toFixed(0)} MiB (${ours.detail})`,
  );
  console.log(`  skillpin re-index after a one-file change:         ${re.ms.toFixed(0)} ms (${re.detail})`);
  console.log(`  ratio cold index / peer:          ${(ours.ms / peer.ms).toFixed(2)}x time`);
  console.log(`  ratio re-index / cold index:      ${(re.ms / ours.ms).toFixed(2)}x time`);
}

if (process.argv[2] === '--child') {
  const [, , , kind, gitdir, commit, warm] = process.argv;
  const sample =
    kind === 'peer'
      ? await peerIndex(gitdir!, commit!)
      : await skillpinIndex(gitdir!, commit!, kind === 'reindex' ? warm : undefined);
  process.stdout.write(JSON.stringify(sample));
} else {
  await main();
}
