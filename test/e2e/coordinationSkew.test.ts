import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/shared/status.ts';
import { type SkewedClock, skewedClock } from '../helpers/clock.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { waitReady } from '../helpers/ready.ts';
import { type RedisProbe, type RedisServer, startRedisServer } from '../helpers/redisServer.ts';
import { writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const SECRET = 'coordination-skew-webhook-secret';
const SHARED = 'coordination-skew-shared-secret-90b1e4';
const TEN_MINUTES = 600_000;
const LEASE_MS = 1_000;

interface Replica {
  name: string;
  server: InProcessServer;
  clock: SkewedClock;
  base: string;
}

// Real clocks 20 minutes apart: only Redis's decides who polls and whether a publication is fresh.
describe('two replicas whose clocks are 10 minutes off, either way', () => {
  let redis: RedisServer;
  let git: GitHttpServer;
  let repo: ReturnType<typeof pushableRepo>;
  let probe: RedisProbe;
  let behind: Replica;
  let ahead: Replica;
  const commits: string[] = [];

  const listings = () =>
    git.requests.filter((r) => r.method === 'POST' && r.path === '/skills.git/git-upload-pack' && !r.fetch)
      .length;
  const live = (replica: Replica) =>
    replica.server.serving.catalog.listed().find((ns) => ns.source === 'live')?.commit;
  const status = async (replica: Replica) =>
    (await (await fetch(`${replica.base}/status`)).json()) as StatusReport;
  const idOf = async (replica: Replica) => (await status(replica)).coordination!.replica!;
  const holder = async () => {
    const keys = await probe.keys('skillpin:lease:*');
    return keys.length === 1 ? ((await probe.hGet(keys[0]!, 'replica')) ?? undefined) : undefined;
  };
  const hook = (replica: Replica) =>
    fetch(`${replica.base}/hooks/git`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'live', ref: 'main' }),
    });
  const start = async (name: string, config: string, offsetMs: number): Promise<Replica> => {
    const clock = skewedClock(offsetMs);
    const env = {
      REDIS_URL: redis.url,
      SKILLPIN_WEBHOOK_SECRET: SECRET,
      SKILLPIN_COORDINATION_SECRET: SHARED,
    };
    const server = await serveInProcess(config, { dataDir: tempDir(`skillpin-${name}-`), clock, env });
    await waitReady(server.url);
    return { name, server, clock, base: server.url.replace(/\/mcp$/, '') };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    probe = await redis.probe();
    const root = tempDir('skillpin-coordination-skew-');
    repo = pushableRepo(root, 'skills');
    commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v1') }));
    git = await startGitHttpServer({ root });
    const config = writeConfig({
      webhook: { secret: '${SKILLPIN_WEBHOOK_SECRET}' },
      coordination: { redis: '${REDIS_URL}', secret: '${SKILLPIN_COORDINATION_SECRET}', lease: '1s' },
      sources: [{ id: 'live', url: git.urlFor('skills.git'), ref: 'main', poll: '1m' }],
    });
    behind = await start('behind', config, -TEN_MINUTES);
    ahead = await start('ahead', config, TEN_MINUTES);
  });
  afterAll(async () => {
    for (const replica of [behind, ahead]) await replica?.server.stop();
    await probe?.close().catch(() => undefined);
    await redis?.close();
    await git?.close();
  });

  it('leaves the lease of the replica behind to it, and takes what it publishes as fresh', async () => {
    const behindId = await idOf(behind);
    expect([live(behind), live(ahead), listings()]).toEqual([commits[0], commits[0], 1]);
    const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v2') });
    commits.push(pushed);
    expect((await hook(ahead)).status).toBe(202);
    await until('both to list the new commit', () => live(behind) === pushed && live(ahead) === pushed);
    expect({
      listings: listings(),
      holder: await holder(),
      refused: (await status(ahead)).coordination!.refused,
    }).toEqual({ listings: 2, holder: behindId, refused: [] });
  });

  it("has the replica ahead take the lease once the one behind stops renewing, within the lease on Redis's clock", async () => {
    const aheadId = await idOf(ahead);
    behind.clock.pause();
    const paused = performance.now();
    await until('the replica ahead to hold the lease', async () =>
      (await holder()) === aheadId ? true : undefined,
    );
    expect(performance.now() - paused).toBeLessThan(LEASE_MS + 2_000);
    // Back, the replica behind finds the lease lost at its next renewal, and keeps serving what both serve.
    behind.clock.resume();
    await until('the replica behind to see the lease lost', () =>
      behind.server.logs().includes('"msg":"lost the poll lease of this source to another replica"'),
    );
    expect([await holder(), live(behind), live(ahead)]).toEqual([aheadId, commits[1], commits[1]]);
  });
});
