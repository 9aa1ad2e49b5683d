/**
 * Start-up benchmark: whole processes of the built package (`node bin/skillpin.js`; `npm run build` first), each
 * beside its peer in the same run, taking turns (A B A B …) after one warm-up each, medians of `runs`:
 *   version   `skillpin --version` against `node -e ''` (target ≤ 2×)
 *   list      a host's first complete skills/list over stdio, from starting the server to the last page, with a
 *             warm dataDir, against the SDK's folder server (`loadSkills()` + `serveStdio`, bench/peers/sdkStdio.mjs)
 *             on a checkout of the same commit, each driven by the same SDK client (target ≤ 0.8×, issue 39)
 *             (and the server process's own CPU time by then, steadier than wall time on a loaded machine); skillpin
 *             compiles with the code cache its warm-up run left (bin/compileCache.js, in a folder of the bench's own),
 *             and the same start with SKILLPIN_COMPILE_CACHE=off is printed beside it (a host's first window ever)
 *   idle RSS  of each stdio server, one second after it answered that listing (target ≤ 1.2×)
 *   check     `skillpin check` of the synthetic repository (`checkSkills` skills × 5 files) against the git
 *             pipeline (git ls-tree -r + git cat-file --batch + sha256 of every blob, bench/peers/gitPipeline.mjs)
 *             as one node process (target ≤ 2×)
 * Every run's time is wall time from spawning the process to its exit (to its listing for `list`); the machine's
 * load average is printed with the figures.
 * Usage: npm run build && npx tsx bench/start.ts [runs=7] [listSkills=17] [checkSkills=1000]
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { stringify } from 'yaml';
import { cpuMs, rssMiB } from './mcpHttp.ts';
import { syntheticRepo, type SyntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(here, '..');
const workDir = path.join(projectRoot, '.skillpin', 'bench');
const skillpin = path.join(projectRoot, 'bin', 'skillpin.js');
/** How long a server stays idle after its first listing before its RSS is read. */
const IDLE_MS = 1000;

type Command = [string, ...string[]];

/** One run of a process to its exit: milliseconds from spawn. */
function timed([command, ...args]: Command): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { cwd: projectRoot, stdio: ['ignore', 'ignore', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0
        ? resolve(performance.now() - started)
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}`)),
    );
  });
}

interface Listed {
  ms: number;
  /** The server's own CPU time (user + system) when the listing was complete: less swayed by a loaded machine. */
  cpuMs: number;
  rssMiB: number;
}

/** A host's start: the server spawned over stdio, connected and its whole listing walked; then its idle RSS. */
async function firstListing(
  [command, ...args]: Command,
  skills: number,
  env: Record<string, string> = {},
): Promise<Listed> {
  const client = new Client({ name: 'bench-host', version: '1.0.0' });
  const transport = new StdioClientTransport({
    command,
    args,
    cwd: projectRoot,
    stderr: 'ignore',
    env: { ...(process.env as Record<string, string>), ...env },
  });
  const started = performance.now();
  await client.connect(transport);
  const { skills: entries } = await new SkillsClient(client).list();
  const ms = performance.now() - started;
  const cpu = cpuMs(transport.pid!);
  try {
    if (entries.length !== skills) throw new Error(`${command} ${args[0]}: ${entries.length} skills listed`);
    await sleep(IDLE_MS);
    return { ms, cpuMs: cpu, rssMiB: rssMiB(transport.pid!) };
  } finally {
    await client.close();
  }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** `runs` turns of A then B after one warm-up each: every sample of both. */
async function paired<T>(runs: number, a: () => Promise<T>, b: () => Promise<T>): Promise<[T[], T[]]> {
  await a();
  await b();
  const samples: [T[], T[]] = [[], []];
  for (let run = 0; run < runs; run++) {
    samples[0].push(await a());
    samples[1].push(await b());
  }
  return samples;
}

const range = (values: number[], digits = 0) =>
  `${median(values).toFixed(digits).padStart(6)} (${Math.min(...values).toFixed(digits)}-${Math.max(...values).toFixed(digits)})`;
const row = (label: string, ours: number[], peer: number[], unit: string, target: string, digits = 0) =>
  `  ${label.padEnd(10)} skillpin ${range(ours, digits)} ${unit}   peer ${range(peer, digits)} ${unit}   ${(median(ours) / median(peer)).toFixed(2)}x (target ${target})`;
const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' ');

/** The servers of the `list` figure: skillpin over a warm dataDir, the SDK over a checkout of the same commit. */
function listingServers(repo: SyntheticRepo): { skillpin: Command; sdk: Command } {
  const runDir = path.join(workDir, 'start');
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(path.join(runDir, 'folder'), { recursive: true });
  execFileSync('sh', [
    '-c',
    `git --git-dir "${repo.gitdir}" archive ${repo.base} skills | tar -x -C "${path.join(runDir, 'folder')}"`,
  ]);
  const config = path.join(runDir, 'skillpin.yaml');
  writeFileSync(
    config,
    stringify({
      dataDir: path.join(runDir, 'data'),
      sources: [{ id: 'bench', path: repo.gitdir, commit: repo.base, paths: ['skills'] }],
    }),
  );
  return {
    skillpin: [process.execPath, skillpin, 'serve', '--config', config],
    sdk: [process.execPath, path.join(here, 'peers', 'sdkStdio.mjs'), path.join(runDir, 'folder', 'skills')],
  };
}

async function main(): Promise<void> {
  const [runs = '7', listSkills = '17', checkSkills = '1000'] = process.argv.slice(2);
  if (!existsSync(path.join(projectRoot, 'dist', 'cli.cjs')))
    throw new Error('dist/ is missing: npm run build');
  const n = Number(runs);
  // skillpin's code cache (bin/compileCache.js) in a folder of the bench's own, new each run: the warm-up run of
  // each figure leaves it.
  process.env['SKILLPIN_COMPILE_CACHE'] = path.join(workDir, 'compile');
  rmSync(process.env['SKILLPIN_COMPILE_CACHE'], { recursive: true, force: true });
  console.log(
    `start bench: whole processes, median (min-max) of ${n} runs each, taking turns; load ${load()}`,
  );

  const version = await paired(
    n,
    () => timed([process.execPath, skillpin, '--version']),
    () => timed([process.execPath, '-e', '']),
  );
  console.log(row('--version', ...version, 'ms', "<= 2x node -e ''"));

  const small = syntheticRepo(workDir, Number(listSkills), 4);
  const servers = listingServers(small);
  // The warm-up run of skillpin fills its dataDir (every measured run starts from the persisted index) and leaves
  // the code cache the measured runs compile with.
  const [ours, sdk] = await paired(
    n,
    () => firstListing(servers.skillpin, Number(listSkills)),
    () => firstListing(servers.sdk, Number(listSkills)),
  );
  const [cold, sdkAgain] = await paired(
    n,
    () => firstListing(servers.skillpin, Number(listSkills), { SKILLPIN_COMPILE_CACHE: 'off' }),
    () => firstListing(servers.sdk, Number(listSkills)),
  );
  const figure = (samples: Listed[], key: keyof Listed) => samples.map((sample) => sample[key]);
  console.log(`  ${listSkills} skills x 4 files over stdio, against the SDK's loadSkills folder server:`);
  console.log(row('list', figure(ours, 'ms'), figure(sdk, 'ms'), 'ms', '<= 0.8x'));
  console.log(row('list CPU', figure(ours, 'cpuMs'), figure(sdk, 'cpuMs'), 'ms', 'the server process alone'));
  console.log(row('idle RSS', figure(ours, 'rssMiB'), figure(sdk, 'rssMiB'), 'MiB', '<= 1.2x', 1));
  console.log(
    row('no cache', figure(cold, 'ms'), figure(sdkAgain, 'ms'), 'ms', 'SKILLPIN_COMPILE_CACHE=off'),
  );
  console.log(
    row('CPU', figure(cold, 'cpuMs'), figure(sdkAgain, 'cpuMs'), 'ms', 'SKILLPIN_COMPILE_CACHE=off'),
  );

  const large = syntheticRepo(workDir, Number(checkSkills), 5);
  const check = await paired(
    n,
    () => timed([process.execPath, skillpin, 'check', large.gitdir, '--commit', large.base]),
    () => timed([process.execPath, path.join(here, 'peers', 'gitPipeline.mjs'), large.gitdir, large.base]),
  );
  console.log(
    `  ${checkSkills} skills x 5 files, against git ls-tree + cat-file + sha256 in one node process:`,
  );
  console.log(row('check', ...check, 'ms', '<= 2x'));
  console.log(`  load ${load()}`);
}

await main();
