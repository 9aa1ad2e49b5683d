/**
 * Replicas coordinated through Redis (a real redis-server on a loopback port), in this process, real clocks:
 * - the remote's ref listings per minute with 1, 3 and 5 replicas following one source (1 s poll, so a lease of 1 s);
 * - the time from a webhook at one replica (never the lease holder) to the new commit listed at all three, over
 *   `pushes` pushes (p50, max);
 * - requests (skills/list, /status, /readyz) that failed while Redis was killed and started again under them.
 * Usage: npx tsx bench/coordination.ts [pushes=20] [idleSeconds=20]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import type { StatusReport } from '../src/shared/status.ts';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../test/helpers/pushable.ts';
import { waitReady } from '../test/helpers/ready.ts';
import { startRedisServer } from '../test/helpers/redisServer.ts';
import { connectHttp, writeConfig } from '../test/helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../test/helpers/serving.ts';

const pushes = Number(process.argv[2] ?? '20');
const idleSeconds = Number(process.argv[3] ?? '20');
const SECRET = 'bench-secret';
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const root = mkdtempSync(path.join(tmpdir(), 'skillpin-coordination-bench-'));
const repo = pushableRepo(root, 'skills');
repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v0') });
const git = await startGitHttpServer({ root });
const redis = await startRedisServer();
const env = {
  REDIS_URL: redis.url,
  BENCH_SECRET: SECRET,
  BENCH_COORDINATION: 'bench-coordination-secret-0123456789',
};

const listings = () =>
  git.requests.filter((r) => r.method === 'POST' && r.path === '/skills.git/git-upload-pack' && !r.fetch)
    .length;
const live = (server: InProcessServer) =>
  server.serving.catalog.listed().find((ns) => ns.source === 'live')?.commit;
const statusOf = async (server: InProcessServer) =>
  (await (await fetch(server.url.replace(/\/mcp$/, '/status'))).json()) as StatusReport;

/** `count` replicas of one config (its own key prefix), each with its own dataDir, ready. */
async function replicas(count: number, prefix: string, poll: string): Promise<InProcessServer[]> {
  const config = writeConfig({
    webhook: { secret: '${BENCH_SECRET}' },
    coordination: { redis: '${REDIS_URL}', secret: '${BENCH_COORDINATION}', keyPrefix: prefix, lease: '1s' },
    sources: [{ id: 'live', url: git.urlFor('skills.git'), ref: 'main', poll }],
  });
  const started: InProcessServer[] = [];
  for (let i = 0; i < count; i++) {
    const server = await serveInProcess(config, {
      dataDir: mkdtempSync(path.join(tmpdir(), 'skillpin-coordination-replica-')),
      env,
      logLevel: 'warn',
    });
    await waitReady(server.url);
    started.push(server);
  }
  return started;
}

/** Ref listings per minute with `count` replicas polling every second, nothing pushed. */
async function listingsPerMinute(count: number): Promise<number> {
  const servers = await replicas(count, `bench-${count}:`, '1s');
  await pause(2000);
  const before = listings();
  await pause(idleSeconds * 1000);
  const perMinute = ((listings() - before) * 60) / idleSeconds;
  for (const server of servers) await server.stop();
  return perMinute;
}

const perMinute: Record<number, number> = {};
for (const count of [1, 3, 5]) perMinute[count] = await listingsPerMinute(count);

// Webhook to all three: a source that polls once an hour, so only the webhook moves it.
const three = await replicas(3, 'bench-hook:', '1h');
const holderOf = async () => (await statusOf(three[0]!)).sources[0]!.replicas!.leaseHolder;
const latencies: number[] = [];
for (let i = 0; i < pushes; i++) {
  const holder = await holderOf();
  const ids = await Promise.all(three.map(async (server) => (await statusOf(server)).coordination!.replica));
  const target = three[ids.findIndex((id) => id !== holder)]!;
  const commit = repo.push({ 'alpha/SKILL.md': skillMd('alpha', `push ${i}`) });
  const started = performance.now();
  const answer = await fetch(target.url.replace(/\/mcp$/, '/hooks/git'), {
    method: 'POST',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'live' }),
  });
  if (answer.status !== 202) throw new Error(`webhook answered ${answer.status}`);
  while (!three.every((server) => live(server) === commit)) await pause(5);
  latencies.push(performance.now() - started);
}
const sorted = [...latencies].sort((a, b) => a - b);

// Redis killed and started again while every replica is asked, again and again.
let requests = 0;
const failures: string[] = [];
const clients = await Promise.all(three.map((server) => connectHttp(server.url, 'modern')));
let asking = true;
const askLoop = (async () => {
  while (asking) {
    for (const [i, server] of three.entries()) {
      const base = server.url.replace(/\/mcp$/, '');
      for (const request of [
        () => fetch(`${base}/status`),
        () => fetch(`${base}/readyz`),
        async () => {
          await new SkillsClient(clients[i]!.client).list();
          return new Response(null, { status: 200 });
        },
      ]) {
        requests++;
        try {
          const answer = await request();
          if (!answer.ok) failures.push(`${answer.status}`);
        } catch (error) {
          failures.push(String(error));
        }
      }
    }
  }
})();
await pause(1000);
await redis.kill();
while ((await Promise.all(three.map(statusOf))).some((s) => s.coordination!.state !== 'down'))
  await pause(20);
const downAt = performance.now();
await pause(3000);
await redis.start();
while ((await Promise.all(three.map(statusOf))).some((s) => s.coordination!.state !== 'up')) await pause(20);
const backMs = performance.now() - downAt;
await pause(1000);
asking = false;
await askLoop;
for (const client of clients) await client.close();
for (const server of three) await server.stop();
await redis.close();
await git.close();

const ms = (value: number) => `${Math.round(value)} ms`;
console.log(
  JSON.stringify(
    {
      refListingsPerMinute: { replicas1: perMinute[1], replicas3: perMinute[3], replicas5: perMinute[5] },
      webhookToAllThree: {
        pushes,
        p50: ms(sorted[Math.floor((sorted.length - 1) / 2)]!),
        max: ms(sorted.at(-1)!),
      },
      redisOutage: {
        requests,
        failed: failures.length,
        downToUpMs: Math.round(backMs),
        failures: failures.slice(0, 5),
      },
    },
    null,
    2,
  ),
);
