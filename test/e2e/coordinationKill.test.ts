import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/shared/status.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { waitReady } from '../helpers/ready.ts';
import { type RedisServer, type RedisProbe, startRedisServer } from '../helpers/redisServer.ts';
import { type HttpServerProcess, startHttp, writeConfig } from '../helpers/server.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const POLL_MS = 60_000;

// The process is the subject: a lease holder killed with SIGKILL releases nothing and closes nothing.
describe('a lease holder killed with -9', () => {
  let redis: RedisServer;
  let git: GitHttpServer;
  let repo: ReturnType<typeof pushableRepo>;
  let probe: RedisProbe;
  const servers: HttpServerProcess[] = [];

  const status = async (server: HttpServerProcess) =>
    (await (await fetch(server.url.replace(/\/mcp$/, '/status'))).json()) as StatusReport;
  const leaseHolder = async () => {
    const keys = await probe.keys('skillpin:lease:*');
    return keys.length === 1 ? ((await probe.hGet(keys[0]!, 'replica')) ?? undefined) : undefined;
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    probe = await redis.probe();
    const root = tempDir('skillpin-coordination-kill-');
    repo = pushableRepo(root, 'skills');
    repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v1') });
    git = await startGitHttpServer({ root });
    // Two replicas of one source, each with its own dataDir: a minute's poll, a 2 s lease.
    for (let i = 0; i < 2; i++) {
      const config = writeConfig({
        coordination: { redis: '${REDIS_URL}', secret: '${SKILLPIN_COORDINATION_SECRET}', lease: '2s' },
        sources: [{ id: 'live', url: git.urlFor('skills.git'), ref: 'main', poll: '1m' }],
      });
      const server = await startHttp(config, [], {
        REDIS_URL: redis.url,
        SKILLPIN_COORDINATION_SECRET: 'coordination-kill-secret-0123456789',
        SKILLPIN_LOG_LEVEL: 'info',
      });
      servers.push(server);
      await waitReady(server.url);
    }
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await probe?.close().catch(() => undefined);
    await redis?.close();
    await git?.close();
  });

  it('is replaced by the other replica once its lease lapses, well within one poll interval', async () => {
    const [first, second] = servers as [HttpServerProcess, HttpServerProcess];
    const holder = await until('the first replica to hold the lease', leaseHolder);
    expect(holder.split('/')[1]).toBe(String(first.child.pid));
    const killed = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await killed;
    const diedAt = performance.now();
    const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v2') });
    await until('the second replica to list the push', async () =>
      (await status(second)).sources[0]!.current?.commit === pushed ? true : undefined,
    );
    const elapsed = performance.now() - diedAt;
    expect((await leaseHolder())?.split('/')[1]).toBe(String(second.child.pid));
    // Only the lapse of the lease explains it: the second replica's own poll is a minute away.
    const updated = second
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"msg":"source updated"'))
      .map((line) => (JSON.parse(line) as { why: string }).why);
    expect(updated.at(-1)).toBe('poll lease lapsed');
    expect(elapsed).toBeLessThan(POLL_MS);
  });
});
