/**
 * Whoever can write to the replicas' Redis, against what they serve (issue 35's reproduction): two coordinated
 * replicas (a real redis-server on a loopback port, real clocks) follow `main` (C1 then C2); a third party that is
 * no replica reads the lease's holder and token from Redis and, every 0.5 s, writes the publication hash and
 * announces it. Three phases of `seconds` each, the follower's listed commit sampled every 0.5 s:
 * - C3, a commit only on another branch, written as the publication;
 * - C1, an older commit of main (a rollback), written with a fresh time;
 * - the holder's own authentic publication of C1, read back before C2 was pushed, replayed as it was.
 * Prints how many samples the follower listed the forged commit in, per phase.
 * Usage: npx tsx bench/forgery.ts [seconds=14] (BENCH_NO_SECRET=1 against a build from before coordination.secret)
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/index.ts';
import type { StatusReport } from '../src/shared/status.ts';
import { sharedKey } from '../src/sync/coordination/coordination.ts';
import { startGitHttpServer } from '../test/helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../test/helpers/pushable.ts';
import { waitReady } from '../test/helpers/ready.ts';
import { startRedisServer } from '../test/helpers/redisServer.ts';
import { writeConfig } from '../test/helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../test/helpers/serving.ts';

const seconds = Number(process.argv[2] ?? '14');
const SAMPLE_MS = 500;
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const root = mkdtempSync(path.join(tmpdir(), 'skillpin-forgery-bench-'));
const repo = pushableRepo(root, 'skills');
const c1 = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'c1') });
const git = await startGitHttpServer({ root });
const redis = await startRedisServer();
const probe = await redis.probe();
const env = {
  REDIS_URL: redis.url,
  BENCH_WEBHOOK: 'bench-webhook-secret',
  BENCH_COORDINATION: 'bench-coordination-secret-0123456789',
};
const coordination: Record<string, string> = { redis: '${REDIS_URL}' };
// The config key this reproduction is about: only given where the schema knows it (before issue 35 it did not).
if (process.env['BENCH_NO_SECRET'] === undefined) coordination['secret'] = '${BENCH_COORDINATION}';
const config = writeConfig({
  webhook: { secret: '${BENCH_WEBHOOK}' },
  coordination,
  sources: [{ id: 'live', url: git.urlFor('skills.git'), ref: 'main', poll: '1m' }],
});
const key = sharedKey(loadConfig(config, { ...process.env, ...env }).sources[0]!);
const keys = { lease: `skillpin:lease:${key}`, commit: `skillpin:commit:${key}` };

const live = (server: InProcessServer) =>
  server.serving.catalog.listed().find((ns) => ns.source === 'live')?.commit;
const statusOf = async (server: InProcessServer) =>
  (await (await fetch(server.url.replace(/\/mcp$/, '/status'))).json()) as StatusReport;
const until = async (what: string, ok: () => boolean | Promise<boolean>) => {
  const deadline = Date.now() + 20_000;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(20);
  }
};

const servers: InProcessServer[] = [];
for (let i = 0; i < 2; i++) {
  const server = await serveInProcess(config, {
    dataDir: mkdtempSync(path.join(tmpdir(), 'skillpin-forgery-replica-')),
    env,
    logLevel: 'error',
  });
  await waitReady(server.url);
  servers.push(server);
}
await until('both replicas on C1', () => servers.every((server) => live(server) === c1));
const authenticC1 = await probe.hGetAll(keys.commit);
const c2 = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'c2') });
const c3 = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'c3') }, 'only on another branch', 'other');
const hooked = await fetch(servers[1]!.url.replace(/\/mcp$/, '/hooks/git'), {
  method: 'POST',
  headers: { authorization: `Bearer ${env.BENCH_WEBHOOK}`, 'content-type': 'application/json' },
  body: JSON.stringify({ source: 'live' }),
});
if (hooked.status !== 202) throw new Error(`webhook answered ${hooked.status}`);
await until('both replicas on C2', () => servers.every((server) => live(server) === c2));
const holder = (await statusOf(servers[0]!)).sources[0]!.replicas!.leaseHolder;
const ids = await Promise.all(servers.map(async (server) => (await statusOf(server)).coordination!.replica));
const follower = servers[ids.findIndex((id) => id !== holder)]!;

/** Writes `fields` as the publication every 0.5 s and announces it; samples the follower as often. */
async function forge(fields: () => Promise<Record<string, string>>, forged: string) {
  let served = 0;
  let samples = 0;
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    await probe.hSet(keys.commit, await fields());
    await probe.publish('skillpin:events', `commit ${key} forger`);
    await pause(SAMPLE_MS);
    samples++;
    if (live(follower) === forged) served++;
  }
  return `${served} of ${samples}`;
}

/** What a Redis writer can read and write without any secret: the lease's holder and token, a fresh time. */
const written = (commit: string) => async () => {
  const [token, by] = await Promise.all([probe.hGet(keys.lease, 'token'), probe.hGet(keys.lease, 'replica')]);
  return { commit, tag: '', ref: '', token: token ?? '', by: by ?? '', at: String(Date.now()) };
};
const otherBranch = await forge(written(c3), c3);
const rollback = await forge(written(c1), c1);
const replayed = await forge(async () => authenticC1, c1);
const after = live(follower);
const refused = (await statusOf(follower)).coordination?.refused;

for (const server of servers) await server.stop();
await probe.close();
await redis.close();
await git.close();
console.log(
  JSON.stringify(
    {
      forgedCommitServed: { otherBranch, rollback, replayedAuthentic: replayed },
      followerAtEnd: after === c2 ? 'C2 (main)' : after,
      refusedByFollower: refused,
    },
    null,
    2,
  ),
);
