/**
 * skill_run benchmark, side by side in one run:
 *   start, cold   confirmed run → the script's process spawned, for a skill not materialised yet (its files
 *                 written from verified blobs, read back and checked)
 *   start, warm   the same with the folder in place (checked byte for byte against the manifest first)
 *   empty run     a whole confirmed skill_run call (MCP client in memory → result) of an empty node script,
 *                 against the peer `node -e ''` spawned and waited for; pairs alternate, the ratio is per pair
 * On the scripts fixture's `bounds` skill (8 files) and a synthetic skill of 200 files (2 MiB).
 * Usage: npx tsx bench/run.ts [rounds=20]
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { buildFixtures } from '../fixtures-repos/build.ts';
import { createCatalog, type Namespace } from '../src/catalog/index.ts';
import { defaultRunSettings, type RunGrants } from '../src/config/index.ts';
import { openLocalRepository, readBlob, walkCommit } from '../src/git/index.ts';
import { indexCommit } from '../src/index/index.ts';
import { buildNamespace } from '../src/catalog/index.ts';
import { verifiedReader } from '../src/mcp/read.ts';
import { scriptEnvironment } from '../src/run/environment.ts';
import { createRunner, type RunnerOptions } from '../src/run/runner.ts';
import { createServerFactory } from '../src/mcp/server.ts';
import { buildSnapshot } from '../src/mcp/snapshot.ts';
import { silentLogger } from '../src/shared/logger.ts';
import { cachePolicy } from '../src/mcp/cache.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const workDir = path.join(here, '..', '.skillpin', 'bench', 'run');
const rounds = Number(process.argv[2] ?? 20);
const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  HOME: '/nonexistent',
};

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const ms = (value: number) => `${value.toFixed(2)} ms`;

/** A repository with one skill of `files` files (10 KiB each) that declares an empty node script. */
function bigSkillRepo(dir: string, files: number): string {
  const work = path.join(dir, 'big');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(path.join(work, 'skills', 'big', 'references'), { recursive: true });
  mkdirSync(path.join(work, 'skills', 'big', 'scripts'));
  writeFileSync(
    path.join(work, 'skills', 'big', 'SKILL.md'),
    '---\nname: big\ndescription: A skill of many files.\nmcp-host:\n  version: 1\n  run:\n    - script: scripts/empty.js\n      interpreter: node\n---\nBody.\n',
  );
  writeFileSync(path.join(work, 'skills', 'big', 'scripts', 'empty.js'), '');
  for (let i = 0; i < files - 2; i++)
    writeFileSync(
      path.join(work, 'skills', 'big', 'references', `f${i}.md`),
      `${i} `.repeat(10 * 256).slice(0, 10240),
    );
  const git = (args: string[]) =>
    execFileSync('git', ['-C', work, ...args], { env: GIT_ENV, encoding: 'utf8' });
  git(['init', '--quiet', '--initial-branch=main']);
  git(['add', '--all']);
  git(['-c', 'user.name=bench', '-c', 'user.email=bench@skillpin.invalid', 'commit', '--quiet', '-m', 'big']);
  return work;
}

async function namespaceOf(source: string, gitdir: string, ref: string): Promise<Namespace> {
  const repo = await openLocalRepository(gitdir);
  const commit = execFileSync('git', ['-C', gitdir, 'rev-parse', ref], {
    env: GIT_ENV,
    encoding: 'utf8',
  }).trim();
  const tree = await walkCommit(repo, commit);
  const index = await indexCommit({ ...tree, readBlob: (id) => readBlob(repo, id) });
  return buildNamespace(source, index, { repository: 'local:bench' }, (blob) => readBlob(repo, blob));
}

/** Removes a materialised folder (read-only) so the next run is cold. */
function unmaterialise(dir: string): void {
  if (!existsSync(dir)) return;
  const open = (folder: string) => {
    chmodSync(folder, 0o700);
    for (const entry of readdirSync(folder, { withFileTypes: true }))
      if (entry.isDirectory()) open(path.join(folder, entry.name));
  };
  open(dir);
  rmSync(dir, { recursive: true, force: true });
}

function nodeEmpty(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    // The environment a script gets, so the two processes start alike.
    const child = spawn(process.execPath, ['-e', ''], {
      stdio: 'ignore',
      env: scriptEnvironment([], process.env).env,
    });
    child.once('error', reject);
    child.once('exit', () => resolve(performance.now() - started));
  });
}

async function main(): Promise<void> {
  mkdirSync(workDir, { recursive: true });
  const fixtures = await buildFixtures(path.join(workDir, 'fixtures'));
  const scripts = fixtures['scripts']!;
  const small = await namespaceOf('scripts', scripts.gitdir, 'refs/heads/main');
  const big = await namespaceOf('big', bigSkillRepo(workDir, 200), 'HEAD');
  const catalog = createCatalog({
    sources: [small, big].map((ns) => ({ id: ns.source, current: ns, retained: [] })),
    failures: [],
  });
  const logger = silentLogger();
  const options: RunnerOptions = {
    grants: new Map<string, RunGrants>([
      ['scripts', [{ skill: 'skills/bounds', script: 'scripts/empty.js', env: [] }]],
      ['big', 'all-declared'],
    ]),
    settings: defaultRunSettings(),
    dir: path.join(workDir, 'materialised'),
    environ: { state: 'scrubbed' },
  };
  const runner = createRunner(options, { catalog, read: verifiedReader(logger), logger });
  const cases = [
    {
      name: 'bounds (8 files)',
      served: buildSnapshot(small).ordered.find((s) => s.skill.dir === 'skills/bounds')!,
    },
    { name: 'big (200 files, 2 MiB)', served: buildSnapshot(big).ordered[0]! },
  ];
  console.log(`skill_run, ${rounds} rounds each (medians; the machine is shared, so read the ratios)`);
  for (const { name, served } of cases) {
    const prepared = runner.prepare(served, 'scripts/empty.js', []);
    if (!prepared.ok) throw new Error(prepared.refusal.detail);
    const cold: number[] = [];
    const warm: number[] = [];
    for (let round = 0; round < rounds; round++) {
      unmaterialise(prepared.prepared.willRun.cwd);
      for (const into of [cold, warm]) {
        const result = await runner.run(
          prepared.prepared,
          runner.issue(prepared.prepared, 'bench').token,
          'bench',
        );
        if (!result.ok) throw new Error(result.refusal.detail);
        into.push(result.outcome.startMs);
      }
    }
    console.log(
      `  ${name.padEnd(24)} start cold ${ms(median(cold))}   start warm ${ms(median(warm))}   cold/warm ${(median(cold) / median(warm)).toFixed(2)}`,
    );
  }

  // The whole call through MCP against the peer, pair by pair.
  const factory = createServerFactory({
    catalog,
    logger,
    cache: cachePolicy({ listTtlMs: 1000, pinnedTtlMs: 1000 }),
    run: options,
  });
  const client = new Client({ name: 'bench', version: '1' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await factory().connect(serverSide);
  await client.connect(clientSide);
  const args = { uri: cases[0]!.served.uri, script: 'scripts/empty.js', args: [] };
  const call = async () => {
    const first = (await client.callTool({ name: 'skill_run', arguments: args })) as {
      structuredContent: { confirmToken: string };
    };
    const started = performance.now();
    const ran = (await client.callTool({
      name: 'skill_run',
      arguments: { ...args, confirmToken: first.structuredContent.confirmToken },
    })) as { structuredContent: { status: string } };
    if (ran.structuredContent.status !== 'ran') throw new Error(JSON.stringify(ran));
    return performance.now() - started;
  };
  await call();
  await nodeEmpty();
  const runs: number[] = [];
  const peers: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const a = await call();
    const b = await nodeEmpty();
    runs.push(a);
    peers.push(b);
    ratios.push(a / b);
  }
  console.log(
    `  empty node script: skill_run (confirmed, warm) ${ms(median(runs))}   node -e '' ${ms(median(peers))}   ratio ${median(ratios).toFixed(2)} (overhead ${ms(median(runs) - median(peers))})`,
  );
  await client.close();
}

await main();
