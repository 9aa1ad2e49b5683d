/**
 * Serving benchmark, side by side in one run, both over Streamable HTTP (2026-07-28, stateless requests):
 *   skillpin  the built package, `node bin/skillpin.js serve --http` (`npm run build` first), one local source
 *             pinned to the synthetic repository's commit
 *   sdk       the SDK's own folder server: `loadSkills()` + `createMcpHandler` (bench/peers/sdkHttp.mjs), the same
 *             skills checked out
 * Both run as plain JavaScript under `node`, as they ship: a TypeScript loader (tsx) in either process would be
 * measured with it (its hooks thread and each module it compiles: about 90 MiB of skillpin's RSS, 50 of the SDK's).
 * Each server runs in its own process; its CPU time and RSS are read from /proc/<pid>. For skills/list (full
 * paging, every client walks the whole listing again and again) and resources/read (random files, seeded), at 1,
 * 8 and 32 concurrent clients: requests per second, p50/p99 latency and server CPU per request, with ratios
 * skillpin/sdk; then RSS after 1,000, 10,000 and 20,000 reads (the last shows where it levels off).
 * Usage: npm run build && npx tsx bench/serve.ts [--rss-only] [skills=772] [filesPerSkill=4] [seconds=4]
 * `--rss-only` measures only the RSS curve (about a minute), for iterating on memory.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { call, cpuMs, inventory, type McpTarget, PROTOCOL, random, rssMiB, startChild } from './mcpHttp.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(here, '..');
const workDir = path.join(projectRoot, '.skillpin', 'bench');
const CONCURRENCY = [1, 8, 32];
const RSS_CHECKPOINTS = [1_000, 10_000, 20_000];
const ROUNDS = 4;

interface Server extends McpTarget {
  child: ChildProcess;
  /** Response bytes received so far. */
  received: number;
}

/** Starts a child process and resolves with the URL it reports (skillpin in its log line, the SDK on stdout). */
async function start(name: string, args: string[]): Promise<Server> {
  const { url, child } = await startChild(args, { cwd: projectRoot, timeoutMs: 60_000 });
  return { name, url, child, agent: new Agent({ keepAlive: true, maxSockets: 64 }), received: 0 };
}

type Operation = 'skills/list' | 'resources/read';

/** A client loop: each call makes one request and returns when it is answered. */
function clientLoop(
  server: Server,
  operation: Operation,
  files: string[],
  seed: number,
): () => Promise<void> {
  if (operation === 'resources/read') {
    const next = random(seed);
    return async () => {
      await call(server, 'resources/read', { uri: files[Math.floor(next() * files.length)]! });
    };
  }
  let cursor: string | undefined;
  return async () => {
    const page = await call(server, 'skills/list', cursor === undefined ? {} : { cursor });
    cursor = page['nextCursor'] as string | undefined;
  };
}

interface Cell {
  bytesPerResponse: number;
  rps: number;
  p50: number;
  p99: number;
  cpuPerRequest: number;
}

interface Sample {
  bytes: number;
  latencies: number[];
  seconds: number;
  cpuMs: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;

/** `clients` loops for `seconds`, all against one server. */
async function measure(
  server: Server,
  operation: Operation,
  clients: number,
  seconds: number,
  files: string[],
): Promise<Sample> {
  const latencies: number[] = [];
  const cpuBefore = cpuMs(server.child.pid!);
  const bytesBefore = server.received;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, index) => {
      const once = clientLoop(server, operation, files, 1 + index);
      while (performance.now() < deadline) {
        const sent = performance.now();
        await once();
        latencies.push(performance.now() - sent);
      }
    }),
  );
  return {
    bytes: server.received - bytesBefore,
    latencies,
    seconds: (performance.now() - started) / 1000,
    cpuMs: cpuMs(server.child.pid!) - cpuBefore,
  };
}

function cellOf(samples: readonly Sample[]): Cell {
  const latencies = samples.flatMap((sample) => sample.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, sample) => sum + sample.seconds, 0);
  const cpu = samples.reduce((sum, sample) => sum + sample.cpuMs, 0);
  return {
    bytesPerResponse: samples.reduce((sum, sample) => sum + sample.bytes, 0) / latencies.length,
    rps: latencies.length / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuPerRequest: cpu / latencies.length,
  };
}

/** RSS after each checkpoint's number of reads, counted from a fresh server, 8 clients at once. */
async function rssCurve(server: Server, files: string[]): Promise<number[]> {
  const rss: number[] = [];
  let done = 0;
  for (const checkpoint of RSS_CHECKPOINTS) {
    await Promise.all(
      Array.from({ length: 8 }, async (_, index) => {
        const once = clientLoop(server, 'resources/read', files, 100 + index);
        while (done < checkpoint) {
          done++;
          await once();
        }
      }),
    );
    rss.push(rssMiB(server.child.pid!));
  }
  return rss;
}

const fmt = (n: number, digits = 2) => n.toFixed(digits).padStart(9);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`.padStart(9);

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const rssOnly = args[0] === '--rss-only';
  const [skillCount = '772', perSkill = '4', seconds = '4'] = rssOnly ? args.slice(1) : args;
  const repo = syntheticRepo(workDir, Number(skillCount), Number(perSkill));
  const runDir = path.join(workDir, 'serve');
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(path.join(runDir, 'folder'), { recursive: true });
  // The SDK serves a checkout of the same commit: same skills, same bytes.
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
  const cli = path.join(projectRoot, 'bin', 'skillpin.js');
  const servers = [
    await start('skillpin', [cli, 'serve', '--config', config, '--http', '127.0.0.1:0']),
    await start('sdk', [path.join(here, 'peers', 'sdkHttp.mjs'), path.join(runDir, 'folder', 'skills')]),
  ];
  try {
    const files = new Map<Server, string[]>();
    for (const server of servers) {
      const found = await inventory(server);
      if (found.skills !== Number(skillCount))
        throw new Error(`${server.name} lists ${found.skills} skills, not ${skillCount}`);
      files.set(server, found.files);
    }
    const [ours, peer] = servers as [Server, Server];
    if (files.get(ours)!.length !== files.get(peer)!.length)
      throw new Error('the servers list different files');

    const rss = new Map<Server, number[]>();
    for (const server of servers) rss.set(server, await rssCurve(server, files.get(server)!));

    console.log(
      `serve bench: ${skillCount} skills x ${perSkill} files, Streamable HTTP ${PROTOCOL}, ${seconds} s per ` +
        `server and cell in ${ROUNDS} alternating rounds, each server in its own process; ratios skillpin/sdk ` +
        '(req/s: higher is better; the rest: lower is better)',
    );
    console.log('  operation        clients  server        req/s   p50 ms   p99 ms  CPU ms/req  KiB/resp');
    for (const operation of rssOnly ? [] : (['skills/list', 'resources/read'] as const)) {
      for (const clients of CONCURRENCY) {
        // Short rounds, alternating which server goes first, so a burst of load from elsewhere on the
        // machine falls on both.
        const samples = new Map<Server, Sample[]>(servers.map((server) => [server, []]));
        for (const server of servers) await measure(server, operation, clients, 0.5, files.get(server)!);
        for (let round = 0; round < ROUNDS; round++) {
          for (const server of round % 2 === 0 ? servers : [...servers].reverse())
            samples
              .get(server)!
              .push(await measure(server, operation, clients, Number(seconds) / ROUNDS, files.get(server)!));
        }
        const cells = new Map([...samples].map(([server, taken]) => [server, cellOf(taken)]));
        const a = cells.get(ours)!;
        const b = cells.get(peer)!;
        const lead = `  ${operation.padEnd(15)}  ${String(clients).padStart(7)}`;
        const row = (name: string, c: Cell) =>
          `${name.padEnd(8)} ${fmt(c.rps, 0)} ${fmt(c.p50)} ${fmt(c.p99)} ${fmt(c.cpuPerRequest, 3)}   ` +
          fmt(c.bytesPerResponse / 1024, 1);
        console.log(`${lead}  ${row('skillpin', a)}`);
        console.log(`${' '.repeat(lead.length)}  ${row('sdk', b)}`);
        console.log(
          `${' '.repeat(lead.length)}  ${'ratio'.padEnd(8)} ${ratio(a.rps, b.rps)} ${ratio(a.p50, b.p50)} ${ratio(a.p99, b.p99)} ${ratio(a.cpuPerRequest, b.cpuPerRequest)}   ${ratio(a.bytesPerResponse, b.bytesPerResponse)}`,
        );
      }
    }
    console.log(
      `  RSS after ${RSS_CHECKPOINTS.map((n) => n.toLocaleString('en')).join(' / ')} reads ` +
        '(8 clients, fresh server), and each step against the one before:',
    );
    for (const server of servers) {
      const curve = rss.get(server)!;
      const steps = curve.slice(1).map((value, index) => `${(value / curve[index]!).toFixed(2)}x`);
      console.log(
        `    ${server.name.padEnd(8)} ${curve.map((value) => value.toFixed(0)).join(' / ')} MiB (${steps.join(', ')})`,
      );
    }
    const at = RSS_CHECKPOINTS.length - 1;
    console.log(
      `    ratio skillpin/sdk after ${RSS_CHECKPOINTS[at]!.toLocaleString('en')}: ` +
        `${(rss.get(ours)![at]! / rss.get(peer)![at]!).toFixed(2)}x`,
    );
  } finally {
    for (const server of servers) {
      server.agent.destroy();
      server.child.kill('SIGTERM');
    }
  }
}

await main();
