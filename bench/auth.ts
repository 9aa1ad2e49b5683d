/**
 * Authentication and replicas benchmark, side by side in one run, over Streamable HTTP (2026-07-28):
 *   auth      the same catalog served three ways, each server in its own process: no auth, a static bearer
 *             token, OAuth JWTs (ES256, a loopback issuer's JWKS, fetched once and cached). Added latency per
 *             request (p50, mean) and server CPU per request, against no auth.
 *   replicas  resources/read throughput of three replicas behind a round-robin proxy (its own process) against
 *             one server direct and one server behind the same proxy (which separates the proxy's cost from
 *             the replicas' gain). Every process shares this machine's cores: the ratio says what more
 *             replicas buy here, not on a cluster.
 *   gate      the authentication step alone, in this process: microseconds per request for a static token (1 and
 *             50 configured: every one is compared) and a JWT, against the no-auth p50 measured above. This is
 *             the figure to read on a busy machine: end-to-end differences of a few percent drown in its noise.
 * Then the RSS of each server, for deploy/kubernetes resource requests.
 * Usage: npx tsx bench/auth.ts [skills=772] [filesPerSkill=4] [seconds=4]
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { type AuthGate, createAuthGate } from '../src/http/auth/gate.ts';
import { silentLogger } from '../src/shared/logger.ts';
import { signingKey, signToken, startIssuer } from '../test/helpers/issuer.ts';
import { startRoundRobinProxy } from '../test/helpers/roundRobinProxy.ts';
import { call, cpuMs, inventory, type McpTarget, random, rssMiB, startChild } from './mcpHttp.ts';
import { syntheticRepo } from './synthetic.ts';

const here = path.dirname(fileURLToPath(import.meta.url));
const projectRoot = path.resolve(here, '..');
const workDir = path.join(projectRoot, '.skillpin', 'bench');
const ROUNDS = 4;
const STATIC_TOKEN = 'bench-static-token-0123456789abcdef';
const AUDIENCE = 'https://skills.bench.invalid/mcp';

interface Target extends McpTarget {
  /** The processes whose CPU a request costs (the server, or the proxy and the replicas behind it). */
  pids: number[];
}

const children: ChildProcess[] = [];

/** A child of this bench (stopped at its end), found by the URL it reports. */
async function start(args: string[], env: Record<string, string> = {}) {
  const started = await startChild(args, { cwd: projectRoot, env });
  children.push(started.child);
  return started;
}

interface Sample {
  latencies: number[];
  seconds: number;
  cpuMs: number;
}

/** `clients` loops reading random files for `seconds`. */
async function measure(target: Target, clients: number, seconds: number, files: string[]): Promise<Sample> {
  const latencies: number[] = [];
  const cpu = () => target.pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const cpuBefore = cpu();
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, index) => {
      const next = random(1 + index);
      while (performance.now() < deadline) {
        const sent = performance.now();
        await call(target, 'resources/read', { uri: files[Math.floor(next() * files.length)]! });
        latencies.push(performance.now() - sent);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000, cpuMs: cpu() - cpuBefore };
}

interface Cell {
  rps: number;
  p50: number;
  mean: number;
  cpuPerRequest: number;
}

function cellOf(samples: readonly Sample[]): Cell {
  const latencies = samples.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const seconds = samples.reduce((sum, s) => sum + s.seconds, 0);
  return {
    rps: latencies.length / seconds,
    p50: latencies[Math.floor(latencies.length / 2)]!,
    mean: latencies.reduce((sum, l) => sum + l, 0) / latencies.length,
    cpuPerRequest: samples.reduce((sum, s) => sum + s.cpuMs, 0) / latencies.length,
  };
}

/** Rounds alternating the order of the targets, so load from elsewhere on the machine falls on all of them. */
async function compare(
  targets: Target[],
  clients: number,
  seconds: number,
  files: string[],
): Promise<Cell[]> {
  const samples = targets.map((): Sample[] => []);
  for (const target of targets) await measure(target, clients, 0.5, files);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order)
      samples[targets.indexOf(target)]!.push(await measure(target, clients, seconds / ROUNDS, files));
  }
  return samples.map(cellOf);
}

const fmt = (n: number, digits = 3) => n.toFixed(digits).padStart(9);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`.padStart(7);

type Gated = { gate?: AuthGate; authorization: () => string };

/**
 * Microseconds per call for each gate, in alternating rounds of `count` calls: a web Request is made and its
 * Authorization header read, then (with a gate) authenticated. The entry without a gate is the baseline.
 */
async function gateCost(gates: Gated[], count: number): Promise<number[]> {
  const url = 'http://127.0.0.1/mcp';
  const once = async ({ gate, authorization }: Gated) => {
    const request = new Request(url, { headers: { authorization: authorization() } });
    if (gate === undefined) return void request.headers.get('authorization');
    const verdict = await gate.authenticate(request, 'bench');
    if (verdict instanceof Response) throw new Error(`refused: ${await verdict.text()}`);
  };
  const totals = gates.map(() => 0);
  for (const entry of gates) for (let i = 0; i < 500; i++) await once(entry);
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? gates : [...gates].reverse();
    for (const entry of order) {
      const started = performance.now();
      for (let i = 0; i < count / ROUNDS; i++) await once(entry);
      totals[gates.indexOf(entry)]! += performance.now() - started;
    }
  }
  return totals.map((ms) => (ms * 1000) / count);
}

async function proxyMain(upstreams: string[]): Promise<void> {
  const proxy = await startRoundRobinProxy(upstreams);
  process.stdout.write(`${JSON.stringify({ url: `${proxy.url}/mcp` })}\n`);
}

async function main(): Promise<void> {
  const [skillCount = '772', perSkill = '4', seconds = '4'] = process.argv.slice(2);
  const repo = syntheticRepo(workDir, Number(skillCount), Number(perSkill));
  const runDir = path.join(workDir, 'auth');
  rmSync(runDir, { recursive: true, force: true });
  mkdirSync(runDir, { recursive: true });
  const issuer = await startIssuer();
  const key = await signingKey('bench');
  issuer.keys = [key];
  const now = Math.floor(Date.now() / 1000);
  const jwt = await signToken(key, {
    iss: issuer.issuer,
    aud: AUDIENCE,
    sub: 'bench',
    scope: 'skills:read',
    iat: now,
    exp: now + 3600,
  });
  const cli = path.join(projectRoot, 'src', 'cli.ts');
  const source = { id: 'bench', path: repo.gitdir, commit: repo.base, paths: ['skills'] };
  const serveWith = async (name: string, extra: Record<string, unknown> = {}, authorization?: string) => {
    const config = path.join(runDir, `${name}.yaml`);
    writeFileSync(
      config,
      stringify({ dataDir: path.join(runDir, `data-${name}`), ...extra, sources: [source] }),
    );
    const { url, child } = await start(
      ['--import', 'tsx', cli, 'serve', '--config', config, '--http', '127.0.0.1:0'],
      { BENCH_TOKEN: STATIC_TOKEN },
    );
    const target: Target = {
      name,
      url,
      pids: [child.pid!],
      agent: new Agent({ keepAlive: true, maxSockets: 64 }),
      ...(authorization === undefined ? {} : { authorization }),
    };
    return target;
  };
  const targets: Target[] = [];
  try {
    const none = await serveWith('none');
    const token = await serveWith(
      'token',
      { auth: { tokens: [{ name: 'bench', token: '${BENCH_TOKEN}' }] } },
      `Bearer ${STATIC_TOKEN}`,
    );
    const oauth = await serveWith(
      'jwt',
      {
        auth: {
          oauth: {
            issuer: issuer.issuer,
            audience: AUDIENCE,
            jwksUrl: issuer.jwksUrl,
            scopes: { 'skills:read': '*' },
          },
        },
      },
      `Bearer ${jwt}`,
    );
    targets.push(none, token, oauth);
    const files = (await inventory(none)).files;
    for (const target of [token, oauth])
      if ((await inventory(target)).files.length !== files.length)
        throw new Error(`${target.name} lists other files`);

    console.log(
      `auth bench: ${skillCount} skills x ${perSkill} files, resources/read of random files, ${seconds} s per ` +
        `server and cell in ${ROUNDS} alternating rounds, each server in its own process (2 shared cores: noisy)`,
    );
    console.log('  clients  auth       req/s   p50 ms  mean ms  CPU ms/req   +p50 ms  +mean ms  p50 ratio');
    for (const clients of [1, 8]) {
      const cells = await compare([none, token, oauth], clients, Number(seconds), files);
      const base = cells[0]!;
      for (const [index, target] of [none, token, oauth].entries()) {
        const c = cells[index]!;
        console.log(
          `  ${String(clients).padStart(7)}  ${target.name.padEnd(6)} ${fmt(c.rps, 0)} ${fmt(c.p50)} ${fmt(c.mean)} ` +
            `${fmt(c.cpuPerRequest)}  ${fmt(c.p50 - base.p50)} ${fmt(c.mean - base.mean)}  ${ratio(c.p50, base.p50)}`,
        );
      }
    }

    const noneP50 = (await compare([none], 1, Number(seconds) / 2, files))[0]!.p50;
    const logger = silentLogger();
    const many = Array.from({ length: 50 }, (_, i) => ({ name: `t${i}`, token: `${STATIC_TOKEN}-${i}` }));
    const oauthConfig = {
      issuer: issuer.issuer,
      audience: AUDIENCE,
      jwksUrl: issuer.jwksUrl,
      scopes: { 'skills:read': '*' as const },
    };
    // More distinct tokens than the gate remembers, taken in turn: each call is a signature check.
    const fresh = await Promise.all(
      Array.from({ length: 1500 }, (_, i) =>
        signToken(key, {
          iss: issuer.issuer,
          aud: AUDIENCE,
          sub: `bench-${i}`,
          scope: 'skills:read',
          exp: now + 3600,
        }),
      ),
    );
    let turn = 0;
    const jwtGate = () => createAuthGate({ tokens: [], oauth: oauthConfig }, { logger, mcpPath: '/mcp' });
    const costs = await gateCost(
      [
        { authorization: () => `Bearer ${STATIC_TOKEN}` },
        {
          gate: createAuthGate({ tokens: [{ name: 'b', token: STATIC_TOKEN }] }, { logger, mcpPath: '/mcp' }),
          authorization: () => `Bearer ${STATIC_TOKEN}`,
        },
        {
          gate: createAuthGate({ tokens: many }, { logger, mcpPath: '/mcp' }),
          authorization: () => `Bearer ${STATIC_TOKEN}-49`,
        },
        { gate: jwtGate(), authorization: () => `Bearer ${jwt}` },
        { gate: jwtGate(), authorization: () => `Bearer ${fresh[turn++ % fresh.length]}` },
      ],
      20_000,
    );
    console.log(
      `\ngate bench: the authentication step alone, in this process, 20,000 calls each in ${ROUNDS} alternating ` +
        `rounds, against the no-auth resources/read p50 of ${noneP50.toFixed(3)} ms measured now (1 client)`,
    );
    console.log('  gate                          us/call  added us  added / no-auth p50');
    const labels = [
      'none (baseline)',
      'static, 1 token',
      'static, 50 tokens',
      'JWT, same token (remembered)',
      'JWT, new token (ES256 check)',
    ];
    for (const [index, label] of labels.entries()) {
      const added = costs[index]! - costs[0]!;
      console.log(
        `  ${label.padEnd(28)} ${costs[index]!.toFixed(1).padStart(8)} ${added.toFixed(1).padStart(9)} ` +
          `${((added / 1000 / noneP50) * 100).toFixed(2).padStart(12)} %`,
      );
    }

    const replicas = [none, await serveWith('replica-2'), await serveWith('replica-3')];
    targets.push(...replicas.slice(1));
    const startProxy = async (name: string, upstreams: Target[]) => {
      const { url, child } = await start([
        '--import',
        'tsx',
        fileURLToPath(import.meta.url),
        '--proxy',
        ...upstreams.map((t) => t.url),
      ]);
      const target: Target = {
        name,
        url,
        pids: [child.pid!, ...upstreams.flatMap((t) => t.pids)],
        agent: new Agent({ keepAlive: true, maxSockets: 64 }),
      };
      targets.push(target);
      return target;
    };
    const one = await startProxy('1 via proxy', [none]);
    const three = await startProxy('3 via proxy', replicas);
    console.log(
      '\nreplicas bench: resources/read throughput; CPU counts every process a request passes (proxy included)',
    );
    console.log('  clients  target           req/s   p50 ms  CPU ms/req   req/s vs 1 direct  vs 1 via proxy');
    for (const clients of [8, 32]) {
      const cells = await compare([none, one, three], clients, Number(seconds), files);
      for (const [index, target] of [none, one, three].entries()) {
        const c = cells[index]!;
        const label = index === 0 ? '1 direct' : target.name;
        console.log(
          `  ${String(clients).padStart(7)}  ${label.padEnd(13)} ${fmt(c.rps, 0)} ${fmt(c.p50)} ${fmt(c.cpuPerRequest)}` +
            `   ${ratio(c.rps, cells[0]!.rps).padStart(17)}  ${ratio(c.rps, cells[1]!.rps).padStart(14)}`,
        );
      }
    }
    console.log('\n  RSS after the runs (MiB):');
    for (const target of [none, token, oauth, ...replicas.slice(1)])
      console.log(`    ${target.name.padEnd(10)} ${rssMiB(target.pids[0]!).toFixed(0)}`);
  } finally {
    for (const target of targets) target.agent.destroy();
    for (const child of children) child.kill('SIGTERM');
    await issuer.close();
  }
}

if (process.argv[2] === '--proxy') await proxyMain(process.argv.slice(3));
else await main();
