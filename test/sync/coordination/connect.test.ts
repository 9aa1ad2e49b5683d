import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CoordinationConfig, SourceConfig } from '../../../src/config/index.ts';
import { createLogger } from '../../../src/shared/logger.ts';
import type { Coordination } from '../../../src/sync/coordination/coordination.ts';
import { sharedKey } from '../../../src/sync/coordination/coordination.ts';
import { connectRedisCoordination } from '../../../src/sync/coordination/connect.ts';
import { manualClock, type ManualClock } from '../../helpers/clock.ts';
import { type RedisServer, type RedisProbe, startRedisServer } from '../../helpers/redisServer.ts';

const PASSWORD = 'redis-pass-7f3a9c1e';
const SHARED = 'coordination-secret-2b9e41d07c';
const LEASE_MS = 30_000;
const A_COMMIT = 'a'.repeat(40);
const B_COMMIT = 'b'.repeat(40);

const source: SourceConfig = {
  id: 'live',
  location: { kind: 'remote', url: 'https://git.example.com/acme/skills.git' },
  target: { kind: 'ref', ref: 'main' },
  paths: [],
  strictNames: false,
  pollMs: 60_000,
  keep: 2,
  timeoutMs: 30_000,
};

describe('Redis coordination: leases, fencing, hints', () => {
  let redis: RedisServer;
  let probe: RedisProbe;
  const opened: Coordination[] = [];
  const logged: string[] = [];

  const config = (url: string): CoordinationConfig => ({
    redis: url,
    endpoint: new URL(url).host,
    secret: SHARED,
    keyPrefix: 'test:',
    connectTimeoutMs: 2000,
    commandTimeoutMs: 1000,
    leaseMs: LEASE_MS,
  });
  const replica = async (
    name: string,
    clock: ManualClock,
    url = redis.url.replace('//', `//:${PASSWORD}@`),
  ) => {
    const logger = createLogger({
      level: 'debug',
      format: 'json',
      destination: { write: (line) => void logged.push(line) },
    });
    const coordination = await connectRedisCoordination({
      config: config(url),
      replica: { host: name, pid: 1, nonce: name },
      logger,
      clock,
    });
    opened.push(coordination);
    coordination.follow([source], { triggered: () => undefined });
    return coordination;
  };
  const key = (what: string) => `test:${what}:${sharedKey(source)}`;

  beforeAll(async () => {
    redis = await startRedisServer({ password: PASSWORD });
    probe = await redis.probe();
  });
  afterAll(async () => {
    for (const coordination of opened) await coordination.close();
    await probe?.close();
    await redis?.close();
  });

  it('gives one replica the lease, fences the publication of a holder that lost it, and hints the others', async () => {
    const clockA = manualClock();
    const clockB = manualClock();
    const a = await replica('a', clockA);
    const b = await replica('b', clockB);
    const first = await a.poll('live');
    expect(first).toEqual({ kind: 'holder', token: '1' });
    // Renewing keeps the token; the other replica follows, with no hint until one is published.
    expect(await a.poll('live')).toEqual({ kind: 'holder', token: '1' });
    expect(await b.poll('live')).toEqual({ kind: 'follower', holder: 'a/1/a' });
    await a.publish('live', '1', { commit: A_COMMIT });
    expect(await b.poll('live')).toEqual({
      kind: 'follower',
      holder: 'a/1/a',
      hint: { target: { commit: A_COMMIT }, at: clockA.now() },
    });

    // a stops renewing (its clock stops): once the lease lapses on b's clock, b takes it under a new token.
    clockB.advance(LEASE_MS - 1);
    expect((await b.poll('live')).kind).toBe('follower');
    clockB.advance(2);
    expect(await b.poll('live')).toEqual({ kind: 'holder', token: '2' });
    // a, paused past its lease, resolves and publishes late: refused by the fence, the hint stays b's.
    await b.publish('live', '2', { commit: B_COMMIT });
    await a.publish('live', '1', { commit: A_COMMIT });
    expect(await probe.hGet(key('commit'), 'commit')).toBe(B_COMMIT);
    expect(logged.join('')).toContain('"msg":"did not publish: the poll lease passed to another replica"');
  });

  it('takes no hint that is not a commit id, and tells each replica what another asked', async () => {
    const clock = manualClock();
    const heard: string[] = [];
    const c = await replica('c', clock);
    const d = await replica('d', clock);
    d.follow([source], { triggered: (id, why) => heard.push(`${id}: ${why}`) });
    await probe.hSet(key('commit'), { commit: 'not-a-commit', at: String(clock.now()), mac: 'a'.repeat(64) });
    expect(await d.poll('live')).toMatchObject({
      kind: 'follower',
      refused: { reason: 'publication-forged' },
    });
    expect((await d.poll('live')) as object).not.toHaveProperty('hint');
    c.announce('live', 'webhook (generic)');
    await expect.poll(() => heard).toEqual(['live: a webhook at another replica']);
    // A message about a source nobody follows, or too long, is ignored.
    await probe.publish('test:events', `sync other:0123 x`);
    await probe.publish('test:events', `sync ${sharedKey(source)} ${'x'.repeat(2000)}`);
    c.announce('live', 'again');
    await expect.poll(() => heard.length).toBe(2);
    expect(heard).toEqual(['live: a webhook at another replica', 'live: a webhook at another replica']);
  });

  it("refuses a publication unsigned, signed otherwise, stale or older than one read before; takes the holder's", async () => {
    const other: SourceConfig = { ...source, id: 'other' };
    const commitKey = `test:commit:${sharedKey(other)}`;
    const clock = manualClock();
    const now = clock.now();
    const g = await replica('g', clock);
    const h = await replica('h', clock);
    for (const each of [g, h]) each.follow([other], { triggered: () => undefined });
    expect(await g.poll('other')).toEqual({ kind: 'holder', token: '1' });
    await g.publish('other', '1', { commit: A_COMMIT });
    /** What the holder writes: HMAC-SHA256 over the source's key and every field, with the shared secret. */
    const signed = (commit: string, at: number, secret = SHARED) => ({
      commit,
      tag: '',
      ref: '',
      token: '1',
      by: 'g/1/g',
      at: String(at),
      mac: createHmac('sha256', secret)
        .update(
          JSON.stringify(['skillpin-publication/1', sharedKey(other), commit, '', '', '1', 'g/1/g', at]),
        )
        .digest('hex'),
    });
    expect(await probe.hGetAll(commitKey)).toEqual(signed(A_COMMIT, now));
    const hint = (commit: string, at: number) => ({
      kind: 'follower',
      holder: 'g/1/g',
      hint: { target: { commit }, at },
    });
    expect(await h.poll('other')).toEqual(hint(A_COMMIT, now));
    const read = async (fields: Record<string, string>) => {
      await probe.del(commitKey);
      await probe.hSet(commitKey, fields);
      return h.poll('other');
    };
    const refused = (reason: string, detail: string) => ({
      kind: 'follower',
      holder: 'g/1/g',
      refused: { reason, detail },
    });
    const { mac: _mac, ...unsigned } = signed(B_COMMIT, now);
    expect(await read(unsigned)).toEqual(
      refused('publication-unsigned', 'the publication in Redis is not signed'),
    );
    const forged = refused(
      'publication-forged',
      "the publication in Redis is not signed with this replica's coordination.secret",
    );
    expect(await read(signed(B_COMMIT, now, 'another-secret-0123456789'))).toEqual(forged);
    expect(await read({ ...signed(A_COMMIT, now), commit: B_COMMIT })).toEqual(forged);
    expect(await read({ ...signed(A_COMMIT, now), by: 'x/1/x' })).toEqual(forged);
    expect(await read({ ...signed(A_COMMIT, now), mac: signed(A_COMMIT, now).mac.slice(1) })).toEqual(forged);
    // Stale: further than the poll (60 s) and the lease (30 s) from this replica's clock, either way.
    expect(await read(signed(A_COMMIT, now - 90_000))).toEqual(hint(A_COMMIT, now - 90_000));
    expect(await read(signed(B_COMMIT, now - 90_001))).toEqual(
      refused(
        'publication-stale',
        'the publication in Redis is 90 s old (at most 90 s: the poll interval and the lease)',
      ),
    );
    expect(await read(signed(B_COMMIT, now + 90_001))).toEqual(
      refused(
        'publication-stale',
        'the publication in Redis is 90 s ahead of this replica (at most 90 s: the poll interval and the lease)',
      ),
    );
    // Once B is read, an older publication naming another commit is a replay (a rollback); of B itself, harmless.
    expect(await read(signed(B_COMMIT, now + 10))).toEqual(hint(B_COMMIT, now + 10));
    expect(await read(signed(A_COMMIT, now + 9))).toEqual(
      refused(
        'publication-replayed',
        `the publication in Redis (commit ${A_COMMIT}) is older than one read before (commit ${B_COMMIT}): replayed`,
      ),
    );
    expect(await read(signed(B_COMMIT, now + 9))).toEqual(hint(B_COMMIT, now + 9));
    expect(await read(signed(A_COMMIT, now + 11))).toEqual(hint(A_COMMIT, now + 11));
  });

  it('with a wrong password stays down, alone, says authentication failed, and never shows the password', async () => {
    const wrong = 'wrong-password-91c2e7';
    const coordination = await replica('e', manualClock(), redis.url.replace('//', `//:${wrong}@`));
    expect(coordination.status()).toMatchObject({
      state: 'down',
      redis: new URL(redis.url).host,
      error: 'authentication failed: Redis refused the username or password of the URL (WRONGPASS)',
      refused: [],
    });
    const none = await replica('f', manualClock(), redis.url);
    expect(none.status().error).toBe(
      'authentication failed: Redis requires a password and the URL gives none (NOAUTH)',
    );
    expect(await coordination.poll('live')).toEqual({ kind: 'alone' });
    const shown = JSON.stringify(coordination.status()) + logged.join('');
    expect(shown).not.toContain(wrong);
    expect(shown).not.toContain(PASSWORD);
  });
});
