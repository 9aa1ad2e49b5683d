import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { status } from '../../src/commands/status.ts';
import { type Config, loadConfig } from '../../src/config/index.ts';
import { silentLogger } from '../../src/shared/logger.ts';
import type { StatusReport } from '../../src/shared/status.ts';
import type { Coordination } from '../../src/sync/coordination/coordination.ts';
import { connectRedisCoordination } from '../../src/sync/coordination/connect.ts';
import { manualClock } from '../helpers/clock.ts';
import { type RedisProbe, type RedisServer, startRedisServer } from '../helpers/redisServer.ts';
import { writeConfig } from '../helpers/server.ts';

const PASSWORD = 'redis-pass-status-4e1c9a';
/** A Redis user that may only read (and ask the time): `skillpin status` needs no more. */
const READER = { user: 'status-reader', password: 'reader-pass-8d20f7b3' };
const SHARED = 'coordination-secret-status-61f0c2';
const A_COMMIT = 'a'.repeat(40);
const B_COMMIT = 'b'.repeat(40);

/** A config with one followed branch (coordinated) and one pinned commit (not), Redis at `url`. */
function configFor(url: string): Config {
  const file = writeConfig({
    coordination: { redis: '${REDIS_URL}', secret: '${SKILLPIN_COORDINATION_SECRET}', connectTimeout: '1s' },
    sources: [
      { id: 'live', url: 'https://git.example.com/acme/skills.git', ref: 'main', poll: '1m' },
      { id: 'pinned', url: 'https://git.example.com/acme/skills.git', commit: 'c'.repeat(40) },
    ],
  });
  return loadConfig(file, { REDIS_URL: url, SKILLPIN_COORDINATION_SECRET: SHARED });
}

async function statusOf(config: Config, json: boolean): Promise<string> {
  let printed = '';
  await status(config, { json }, (text) => void (printed += text));
  return printed;
}

describe('skillpin status with coordination', () => {
  let redis: RedisServer;
  let probe: RedisProbe;
  const replicas: Coordination[] = [];

  /** A replica of `config` named `name` that polls (takes the lease) when `polls`, and reports serving `commit`. */
  const replica = async (config: Config, name: string, commit: string, polls: boolean) => {
    const coordination = await connectRedisCoordination({
      config: config.coordination!,
      replica: { host: name, pid: 100 + replicas.length, nonce: name.replace('-', '') },
      logger: silentLogger(),
      clock: manualClock(),
    });
    replicas.push(coordination);
    coordination.follow(config.sources, { triggered: () => undefined });
    if (polls) expect((await coordination.poll('live')).kind).toBe('holder');
    coordination.report({ live: commit });
    return coordination;
  };

  beforeAll(async () => {
    redis = await startRedisServer({ password: PASSWORD });
    probe = await redis.probe();
    await probe.sendCommand([
      'ACL',
      'SETUSER',
      READER.user,
      'on',
      `>${READER.password}`,
      '~*',
      '+@read',
      '+time',
    ]);
  });
  afterAll(async () => {
    for (const coordination of replicas) await coordination.close();
    await probe?.close();
    await redis?.close();
  });

  it('shows who polls, what each replica serves and whether they agree, reading Redis as a read-only user', async () => {
    const config = configFor(redis.url.replace('//', `//:${PASSWORD}@`));
    await replica(config, 'host-a', A_COMMIT, true);
    const b = await replica(config, 'host-b', A_COMMIT, false);
    // b reported last: its report read both back.
    await expect.poll(() => b.replicas('live')?.agree, { timeout: 5_000 }).toBe(true);
    // What every replica and status see: written by the replicas alone.
    const keys = async () => (await probe.keys('skillpin:*')).sort();
    const before = await keys();

    const readOnly = configFor(redis.url.replace('//', `//${READER.user}:${READER.password}@`));
    const report = JSON.parse(await statusOf(readOnly, true)) as StatusReport;
    const [live, pinned] = report.sources;
    expect(pinned!.replicas).toBeUndefined();
    expect(live!.replicas).toEqual({
      leaseHolder: 'host-a/100/hosta',
      serving: [
        {
          replica: 'host-a/100/hosta',
          host: 'host-a',
          pid: 100,
          commit: A_COMMIT,
          since: expect.any(String),
        },
        {
          replica: 'host-b/101/hostb',
          host: 'host-b',
          pid: 101,
          commit: A_COMMIT,
          since: expect.any(String),
        },
      ],
      agree: true,
      lastAgreed: { commit: A_COMMIT, at: report.coordination!.since },
    });
    expect(report.coordination).toEqual({
      state: 'up',
      redis: new URL(redis.url).host,
      replica: null,
      since: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      error: null,
      refused: [],
    });
    expect(await keys()).toEqual(before);

    // host-b moves to another commit: they disagree, and the last agreement is the one the replicas recorded.
    b.report({ live: B_COMMIT });
    await expect
      .poll(() => b.replicas('live')?.serving.map((r) => r.commit), { timeout: 5_000 })
      .toEqual([A_COMMIT, B_COMMIT]);
    const text = await statusOf(readOnly, false);
    const again = JSON.parse(await statusOf(readOnly, true)) as StatusReport;
    const seen = again.sources[0]!.replicas!;
    expect(seen.agree).toBe(false);
    const [first, second] = seen.serving;
    const pad = (cells: string[], widths: number[]) =>
      cells
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd();
    const widths = [6, 16, 3, 12, 24, 5];
    expect(text.slice(text.indexOf('\ncoordination'))).toBe(
      [
        '',
        `coordination up: Redis at ${new URL(redis.url).host}`,
        pad(['SOURCE', 'REPLICA', 'PID', 'COMMIT', 'SINCE', 'POLLS'], widths),
        pad(['live', first!.replica, '100', A_COMMIT.slice(0, 12), first!.since, 'yes'], widths),
        pad(['live', second!.replica, '101', B_COMMIT.slice(0, 12), second!.since, '-'], widths),
        `live  replicas agree: no; polled by host-a/100/hosta; last agreed: ${A_COMMIT.slice(0, 12)} at ${seen.lastAgreed!.at}`,
        '',
      ].join('\n'),
    );
    expect(text.startsWith('SOURCE  COMMIT')).toBe(true);
  });

  it('says coordination is down and why (never the password), and still prints what dataDir holds', async () => {
    const wrong = 'wrong-password-5a1f90';
    const refused = configFor(redis.url.replace('//', `//:${wrong}@`));
    const report = JSON.parse(await statusOf(refused, true)) as StatusReport;
    expect(report.sources.map((s) => [s.id, s.current, s.replicas])).toEqual([
      ['live', null, undefined],
      ['pinned', null, undefined],
    ]);
    expect(report.coordination).toEqual({
      state: 'down',
      redis: new URL(redis.url).host,
      replica: null,
      since: expect.any(String),
      error: 'authentication failed: Redis refused the username or password of the URL (WRONGPASS)',
      refused: [],
    });
    const text = await statusOf(refused, false);
    expect(text.split('\n').slice(-3)).toEqual([
      '',
      `coordination down: Redis at ${new URL(redis.url).host}: authentication failed: Redis refused the username or password of the URL (WRONGPASS)`,
      '',
    ]);
    expect(text).toContain('live    -');
    expect(text + JSON.stringify(report)).not.toContain(wrong);

    // Nothing listens: the connection's own error, within the connect timeout.
    const gone = await startRedisServer();
    const url = gone.url.replace('//', `//:${wrong}@`);
    await gone.close();
    const started = Date.now();
    const down = JSON.parse(await statusOf(configFor(url), true)) as StatusReport;
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(down.coordination).toMatchObject({
      state: 'down',
      redis: new URL(gone.url).host,
      error: `connect ECONNREFUSED ${new URL(gone.url).host}`,
    });
    expect(JSON.stringify(down)).not.toContain(wrong);
  });
});
