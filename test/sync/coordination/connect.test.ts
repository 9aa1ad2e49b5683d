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

  const config = (url: string, leaseMs = LEASE_MS): CoordinationConfig => ({
    redis: url,
    endpoint: new URL(url).host,
    secret: SHARED,
    keyPrefix: 'test:',
    connectTimeoutMs: 2000,
    commandTimeoutMs: 1000,
    leaseMs,
  });
  const replica = async (
    name: string,
    clock: ManualClock,
    url = redis.url.replace('//', `//:${PASSWORD}@`),
    leaseMs = LEASE_MS,
  ) => {
    const logger = createLogger({
      level: 'debug',
      format: 'json',
      destination: { write: (line) => void logged.push(line) },
    });
    const coordination = await connectRedisCoordination({
      config: config(url, leaseMs),
      replica: { host: name, pid: 1, nonce: name },
      logger,
      clock,
    });
    opened.push(coordination);
    coordination.follow([source], { triggered: () => undefined });
    return coordination;
  };
  const key = (what: string) => `test:${what}:${sharedKey(source)}`;
  /** Redis's clock now (ms). */
  const redisNow = async () => {
    const [seconds, micros] = await probe.sendCommand<[string, string]>(['TIME']);
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  /** A hint taken, read by a replica whose clock stood at `local`: its time on that clock, at most `ms` before it. */
  const hinted = (commit: string, local: number, ms = 2_000) => ({
    published: { target: { commit } },
    at: expect.toSatisfy((at: number) => at <= local && at >= local - ms),
  });

  beforeAll(async () => {
    redis = await startRedisServer({ password: PASSWORD });
    probe = await redis.probe();
  });
  afterAll(async () => {
    for (const coordination of opened) await coordination.close();
    await probe?.close();
    await redis?.close();
  });

  it("lets replicas 10 minutes ahead and behind neither steal a live lease nor keep a lapsed one, nor refuse a fresh publication: Redis's clock decides", async () => {
    const shortMs = 400;
    const skewed: SourceConfig = { ...source, id: 'skewed' };
    const leaseKey = `test:lease:${sharedKey(skewed)}`;
    // a's clock is 10 minutes behind, b's 10 minutes ahead; neither moves: a stops renewing as a paused process.
    const clockA = manualClock(Date.now() - 600_000);
    const clockB = manualClock(Date.now() + 600_000);
    const a = await replica('a', clockA, undefined, shortMs);
    const b = await replica('b', clockB, undefined, shortMs);
    for (const each of [a, b]) each.follow([skewed], { triggered: () => undefined });
    const started = performance.now();
    expect(await a.poll('skewed')).toEqual({ kind: 'holder', token: '1' });
    expect(await b.poll('skewed')).toEqual({ kind: 'follower', holder: 'a/1/a' });
    // b looks again when the lease may lapse: after what Redis says is left of it, never from its own clock.
    expect(clockB.pending()[0]).toBeGreaterThan(shortMs - 300);
    expect(clockB.pending()[0]).toBeLessThanOrEqual(shortMs + 1);
    await a.publish('skewed', '1', { target: { commit: A_COMMIT } });
    // Signed with Redis's time, fresh for b 20 minutes of clocks away; its time told on b's clock.
    expect(await b.poll('skewed')).toEqual({
      kind: 'follower',
      holder: 'a/1/a',
      hint: hinted(A_COMMIT, clockB.now()),
    });
    const at = Number(await probe.hGet(`test:commit:${sharedKey(skewed)}`, 'at'));
    expect(Math.abs(at - (await redisNow()))).toBeLessThan(2_000);
    expect(Number(await probe.hGet(leaseKey, 'expiresAt'))).toBeLessThanOrEqual((await redisNow()) + shortMs);

    // The lease key expires on Redis's clock: b takes it then, not before, under a new token.
    let taken: Awaited<ReturnType<Coordination['poll']>> | undefined;
    while ((taken = await b.poll('skewed')).kind !== 'holder')
      expect(performance.now() - started).toBeLessThan(5_000);
    expect(taken).toEqual({ kind: 'holder', token: '2' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(shortMs - 1);
    // a, paused past its lease, resolves and publishes late: refused by the fence; it holds the lease no more.
    await b.publish('skewed', '2', { target: { commit: B_COMMIT } });
    await a.publish('skewed', '1', { target: { commit: A_COMMIT } });
    expect(await probe.hGet(`test:commit:${sharedKey(skewed)}`, 'commit')).toBe(B_COMMIT);
    expect(logged.join('')).toContain('"msg":"did not publish: the poll lease passed to another replica"');
    expect(await a.poll('skewed')).toEqual({
      kind: 'follower',
      holder: 'b/1/b',
      hint: hinted(B_COMMIT, clockA.now()),
    });

    // Each reports what it serves with Redis's time: neither is dropped as a replica gone, and they agree.
    a.report({ skewed: B_COMMIT });
    b.report({ skewed: B_COMMIT });
    await expect
      .poll(() => a.replicas('skewed'))
      .toMatchObject({
        leaseHolder: 'b/1/b',
        agree: true,
        serving: [{ replica: 'a/1/a' }, { replica: 'b/1/b' }],
      });
    const since = Date.parse(a.replicas('skewed')!.serving[0]!.since);
    expect(Math.abs(since - (await redisNow()))).toBeLessThan(5_000);
    // b, 10 minutes ahead, stops renewing: a takes the lease once it lapses on Redis's clock, not 20 minutes later.
    const lapsing = performance.now();
    while ((taken = await a.poll('skewed')).kind !== 'holder')
      expect(performance.now() - lapsing).toBeLessThan(shortMs + 2_000);
    expect(taken).toEqual({ kind: 'holder', token: '3' });
  });

  it('fences the publication of a holder that lost its lease, and hints the others', async () => {
    const clockA = manualClock();
    const clockB = manualClock();
    const a = await replica('a2', clockA);
    const b = await replica('b2', clockB);
    const first = await a.poll('live');
    expect(first).toEqual({ kind: 'holder', token: '1' });
    // Renewing keeps the token; the other replica follows, with no hint until one is published.
    expect(await a.poll('live')).toEqual({ kind: 'holder', token: '1' });
    expect(await b.poll('live')).toEqual({ kind: 'follower', holder: 'a2/1/a2' });
    await a.publish('live', '1', { target: { commit: A_COMMIT } });
    expect(await b.poll('live')).toEqual({
      kind: 'follower',
      holder: 'a2/1/a2',
      hint: hinted(A_COMMIT, clockB.now()),
    });
    // The lease given up (a replica stopping): b takes it at once, under a new token.
    await a.close();
    expect(await b.poll('live')).toEqual({ kind: 'holder', token: '2' });
    expect(await probe.hGet(key('commit'), 'commit')).toBe(A_COMMIT);
  });

  it('does not publish a refs: listing past the bytes a follower reads, whatever its count: the followers list themselves', async () => {
    const group: SourceConfig = {
      ...source,
      id: 'group',
      target: { kind: 'refs', patterns: ['v*'], maxRefs: 10_000 },
    };
    const clock = manualClock();
    const holder = await replica('k', clock);
    const follower = await replica('l', clock);
    for (const each of [holder, follower]) each.follow([group], { triggered: () => undefined });
    expect(await holder.poll('group')).toEqual({ kind: 'holder', token: '1' });
    // 5,000 refs (under the 10,000 a publication holds) of 1,000-byte names: about 5.2 MB, past 4 MiB.
    const refs = Array.from({ length: 5_000 }, (_, i) => ({
      name: `refs/tags/v${String(i).padStart(990, '0')}`,
      oid: A_COMMIT,
    }));
    logged.length = 0;
    await holder.publish('group', '1', { refs });
    expect(await probe.exists(`test:commit:${sharedKey(group)}`)).toBe(0);
    const refusedHere =
      'did not publish: the listing is past the refs or bytes a publication holds, or names a ref it refuses; the other replicas list the refs themselves';
    expect(logged.map((line) => JSON.parse(line).msg)).toEqual([refusedHere]);
    // A remote's ref name no follower takes (past 1,000 characters after refs/tags/) is not published either.
    await holder.publish('group', '1', { refs: [{ name: `refs/tags/v${'1'.repeat(1000)}`, oid: A_COMMIT }] });
    expect(await probe.exists(`test:commit:${sharedKey(group)}`)).toBe(0);
    expect(logged.map((line) => JSON.parse(line).msg)).toEqual([refusedHere, refusedHere]);
    // Nothing written: nothing refused as forged, no hint.
    expect(await follower.poll('group')).toEqual({ kind: 'follower', holder: 'k/1/k' });
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
    const g = await replica('g', clock);
    const h = await replica('h', clock);
    for (const each of [g, h]) each.follow([other], { triggered: () => undefined });
    expect(await g.poll('other')).toEqual({ kind: 'holder', token: '1' });
    await g.publish('other', '1', { target: { commit: A_COMMIT } });
    /** What the holder writes: HMAC-SHA256 over the source's key and every field, with the shared secret. */
    const signed = (commit: string, at: number, secret = SHARED) => ({
      commit,
      tag: '',
      ref: '',
      refs: '',
      what: commit,
      token: '1',
      by: 'g/1/g',
      at: String(at),
      mac: createHmac('sha256', secret)
        .update(
          JSON.stringify(['skillpin-publication/1', sharedKey(other), commit, '', '', '1', 'g/1/g', at]),
        )
        .digest('hex'),
    });
    // Its time is Redis's when it published.
    const published = Number(await probe.hGet(commitKey, 'at'));
    const now = await redisNow();
    expect(now - published).toBeGreaterThanOrEqual(0);
    expect(now - published).toBeLessThan(2_000);
    expect(await probe.hGetAll(commitKey)).toEqual(signed(A_COMMIT, published));
    const hint = (commit: string) => ({
      kind: 'follower',
      holder: 'g/1/g',
      hint: { published: { target: { commit } }, at: expect.any(Number) },
    });
    expect(await h.poll('other')).toEqual(hint(A_COMMIT));
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
    // Stale: further than the poll (60 s) and the lease (30 s) from Redis's clock, either way (publication.test.ts
    // has the exact bound); this replica's clock (a manual one, years behind Redis's) has no say.
    expect(await read(signed(A_COMMIT, now - 88_000))).toEqual(hint(A_COMMIT));
    expect(await read(signed(B_COMMIT, now - 92_000))).toEqual(
      refused(
        'publication-stale',
        'the publication in Redis is 92 s old (at most 90 s: the poll interval and the lease)',
      ),
    );
    expect(await read(signed(B_COMMIT, now + 92_400))).toEqual(
      refused(
        'publication-stale',
        "the publication in Redis is 92 s ahead of Redis's clock (at most 90 s: the poll interval and the lease)",
      ),
    );
    // Once B is read, an older publication naming another commit is a replay (a rollback); of B itself, harmless.
    expect(await read(signed(B_COMMIT, now + 10))).toEqual(hint(B_COMMIT));
    expect(await read(signed(A_COMMIT, now + 9))).toEqual(
      refused(
        'publication-replayed',
        `the publication in Redis (commit ${A_COMMIT}) is older than one read before (commit ${B_COMMIT}): replayed`,
      ),
    );
    expect(await read(signed(B_COMMIT, now + 9))).toEqual(hint(B_COMMIT));
    expect(await read(signed(A_COMMIT, now + 11))).toEqual(hint(A_COMMIT));
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
