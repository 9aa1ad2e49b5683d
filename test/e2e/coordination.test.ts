import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/index.ts';
import { sharedKey } from '../../src/sync/coordination/coordination.ts';
import { signPublication } from '../../src/sync/coordination/publication.ts';
import type { StatusReport } from '../../src/shared/status.ts';
import { manualClock, type ManualClock } from '../helpers/clock.ts';
import { git as runGit } from '../helpers/git.ts';
import { type GitHttpServer, startGitHttpServer } from '../helpers/gitHttpServer.ts';
import { pushableRepo, skillMd } from '../helpers/pushable.ts';
import { waitReady } from '../helpers/ready.ts';
import { type RedisServer, type RedisProbe, startRedisServer } from '../helpers/redisServer.ts';
import { connectHttp, writeConfig } from '../helpers/server.ts';
import { type InProcessServer, serveInProcess } from '../helpers/serving.ts';
import { tempDir } from '../helpers/temp.ts';
import { until } from '../helpers/until.ts';

const SECRET = 'coordination-webhook-secret';
const SHARED = 'coordination-shared-secret-5d1e83a0c4';
const POLL_MS = 60_000;
/** The lease lapses on Redis's clock, which the manual clocks do not move: a minute outlasts every test here. */
const LEASE_MS = 60_000;
/** The clocks move this much at a time, and the replicas settle between two moves. */
const STEP_MS = 5_000;
/**
 * How far the clocks move after a follower resolved alone, so that a later publication is newer on its clock (the
 * manual clocks stand still while Redis's runs: a hint's time on a follower's clock is its time on Redis's, moved
 * by how far apart they were at the follower's read).
 */
const HINT_MS = 1_000;
/** Poll intervals the listings are counted over. */
const TICKS = 5;

interface Replica {
  name: string;
  server: InProcessServer;
  clock: ManualClock;
  /** `http://127.0.0.1:<port>`. */
  base: string;
}

describe('three replicas coordinated through a real Redis', () => {
  let redis: RedisServer;
  let git: GitHttpServer;
  let repo: ReturnType<typeof pushableRepo>;
  let soloRepo: ReturnType<typeof pushableRepo>;
  let probe: RedisProbe;
  let leaseKey: string;
  const replicas: Replica[] = [];
  /** One replica alone (no coordination) following another repository: what one replica costs the remote. */
  let alone: Replica;
  const commits: string[] = [];

  /** Ref listings (protocol v2 ls-refs) the remote answered for a repository. */
  const listings = (name: string) =>
    git.requests.filter((r) => r.method === 'POST' && r.path === `/${name}/git-upload-pack` && !r.fetch)
      .length;
  const live = (replica: Replica) =>
    replica.server.serving.catalog.listed().find((ns) => ns.source === 'live')?.commit;
  const status = async (replica: Replica) =>
    (await (await fetch(`${replica.base}/status`)).json()) as StatusReport;
  const idOf = async (replica: Replica) => (await status(replica)).coordination?.replica ?? replica.name;
  const hook = (replica: Replica) =>
    fetch(`${replica.base}/hooks/git`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
      body: JSON.stringify({ source: 'live', ref: 'main' }),
    });
  const allList = (commit: string, who = replicas) =>
    until(`${who.map((r) => r.name).join(', ')} to list ${commit.slice(0, 8)}`, () =>
      who.every((replica) => live(replica) === commit),
    );
  /** No sync runs on `who`. */
  const settle = (who: Replica[]) =>
    until('the syncs to settle', async () => {
      for (const replica of who) if ((await status(replica)).sources.some((s) => s.syncing)) return false;
      return true;
    });
  /** Redis's clock now (ms): what publications are timed by. */
  const redisNow = async () => {
    const [seconds, micros] = await probe.sendCommand<[string, string]>(['TIME']);
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };
  /** Moves the clocks of `who` by `ms`, a step at a time, letting the replicas settle after each. */
  const advance = async (ms: number, who: Replica[]) => {
    for (let moved = 0; moved < ms; moved += STEP_MS) {
      for (const replica of who) replica.clock.advance(STEP_MS);
      await settle(who);
    }
  };
  const start = async (name: string, config: string, env: Record<string, string>): Promise<Replica> => {
    const clock = manualClock();
    const server = await serveInProcess(config, { dataDir: tempDir(`skillpin-${name}-`), clock, env });
    await waitReady(server.url);
    return { name, server, clock, base: server.url.replace(/\/mcp$/, '') };
  };

  beforeAll(async () => {
    redis = await startRedisServer();
    probe = await redis.probe();
    const root = tempDir('skillpin-coordination-');
    repo = pushableRepo(root, 'skills');
    soloRepo = pushableRepo(root, 'solo');
    commits.push(repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v1') }));
    soloRepo.push({ 'alpha/SKILL.md': skillMd('alpha', 'solo') });
    git = await startGitHttpServer({ root });
    const env = {
      REDIS_URL: redis.url,
      SKILLPIN_WEBHOOK_SECRET: SECRET,
      SKILLPIN_COORDINATION_SECRET: SHARED,
    };
    vi.stubEnv('SKILLPIN_WEBHOOK_SECRET', SECRET);
    const config = writeConfig({
      webhook: { secret: '${SKILLPIN_WEBHOOK_SECRET}' },
      http: { metrics: true },
      coordination: { redis: '${REDIS_URL}', secret: '${SKILLPIN_COORDINATION_SECRET}', lease: '1m' },
      sources: [{ id: 'live', url: git.urlFor('skills.git'), ref: 'main', poll: '1m' }],
    });
    leaseKey = `skillpin:lease:${sharedKey(loadConfig(config, { ...process.env, ...env }).sources[0]!)}`;
    // The first to start takes the lease and publishes; the others start from what it published.
    for (const name of ['replica-0', 'replica-1', 'replica-2']) replicas.push(await start(name, config, env));
    alone = await start(
      'alone',
      writeConfig({ sources: [{ id: 'live', url: git.urlFor('solo.git'), ref: 'main', poll: '1m' }] }),
      {},
    );
  });
  afterAll(async () => {
    for (const replica of [...replicas, alone]) await replica?.server.stop();
    await probe?.close().catch(() => undefined);
    await redis?.close();
    await git?.close();
    vi.unstubAllEnvs();
  });

  it('starts with one ref listing for three replicas: the first polls, the others fetch what it published', async () => {
    expect(replicas.map(live)).toEqual([commits[0], commits[0], commits[0]]);
    expect(listings('skills.git')).toBe(1);
    const report = await status(replicas[2]!);
    expect(report.coordination).toMatchObject({
      state: 'up',
      redis: redis.url.slice('redis://'.length),
      error: null,
    });
    expect(report.sources[0]!.replicas!.leaseHolder).toBe(await idOf(replicas[0]!));
  });

  it('takes a webhook at one replica: every replica lists the new commit, and only the lease holder lists refs', async () => {
    const before = listings('skills.git');
    const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v2') });
    commits.push(pushed);
    const answer = await hook(replicas[2]!);
    expect([answer.status, await answer.json()]).toEqual([202, { triggered: ['live'] }]);
    await allList(pushed);
    expect(listings('skills.git') - before).toBe(1);
    // The holder synced because the webhook at replica-2 was announced to it.
    const updated = replicas[0]!.server
      .logs()
      .split('\n')
      .filter((line) => line.includes('"msg":"source updated"'))
      .map((line) => (JSON.parse(line) as { why: string }).why);
    expect(updated).toEqual(['start', 'a webhook at another replica']);
  });

  it('costs the remote the ref listings of one replica: one per poll interval, from three replicas as from one', async () => {
    const three = listings('skills.git');
    const one = listings('solo.git');
    await advance(TICKS * POLL_MS, [...replicas, alone]);
    expect({ three: listings('skills.git') - three, one: listings('solo.git') - one }).toEqual({
      three: TICKS,
      one: TICKS,
    });
  });

  it('shows in /status the commit each replica serves, who polls, and when they agreed', async () => {
    const ids = await Promise.all(replicas.map(idOf));
    const report = await until('every replica reported', async () => {
      const seen = (await status(replicas[1]!)).sources[0]!.replicas!;
      return seen.serving.length === 3 && seen.agree ? seen : undefined;
    });
    expect(report.serving.map((r) => [r.replica, r.commit])).toEqual(
      [...ids].sort().map((id) => [id, commits[1]]),
    );
    expect(report.leaseHolder).toBe(ids[0]);
    expect(report.lastAgreed?.commit).toBe(commits[1]);
    const page = await (await fetch(`${replicas[1]!.base}/`)).text();
    expect(page).toContain('<dt>replicas agree</dt><dd>yes; last on');
    expect(page).toContain(' polls: <code class="sha"');
  });

  it('takes a published commit as a hint only: a replayed message changes nothing', async () => {
    const serving = commits.at(-1)!;
    const holder = await until('a lease holder', async () => (await probe.hGetAll(leaseKey))['replica']);
    const [followerA, followerB] = await Promise.all(
      replicas.map(async (replica) => ((await idOf(replica)) === holder ? [] : [replica])),
    ).then((found) => found.flat());
    const before = listings('skills.git');
    // The holder's own message, sent again: the others sync (their last sync moves to the clocks' new time),
    // find what they serve, and list nothing.
    for (const replica of replicas) replica.clock.advance(1);
    await probe.publish('skillpin:events', `commit ${leaseKey.slice('skillpin:lease:'.length)} ${holder}`);
    for (const replica of [followerA!, followerB!])
      await until(
        `${replica.name} to sync on the replayed message`,
        async () =>
          (await status(replica)).sources[0]!.lastSync === new Date(replica.clock.now()).toISOString(),
      );
    await settle(replicas);
    expect({ listings: listings('skills.git') - before, serving: replicas.map(live) }).toEqual({
      listings: 0,
      serving: [serving, serving, serving],
    });
  });

  it('refuses what a Redis writer publishes (unsigned, forged, stale, replayed, backward), logged and counted; follows what the holder signs, and a real force-push back', async () => {
    const commitKey = leaseKey.replace(':lease:', ':commit:');
    const key = leaseKey.slice('skillpin:lease:'.length);
    const holder = await until(
      'a lease holder',
      async () => (await probe.hGet(leaseKey, 'replica')) ?? undefined,
    );
    const ids = await Promise.all(replicas.map(idOf));
    const followers = replicas.filter((_, i) => ids[i] !== holder);
    const token = async () => (await probe.hGet(leaseKey, 'token'))!;
    const refusedOf = async (replica: Replica) =>
      Object.fromEntries((await status(replica)).coordination!.refused.map((r) => [r.reason, r.count]));
    const reasonsLogged = (replica: Replica) =>
      replica.server
        .logs()
        .split('\n')
        .filter((line) => line.includes('this replica resolves the ref itself'))
        .map((line) => (JSON.parse(line) as { reason: string }).reason);
    /**
     * Writes `fields` as the publication and announces it under the holder's id (so only the followers sync); once
     * both refused it, puts the holder's own publication back.
     */
    const forge = async (fields: Record<string, string>, reason: string, counts: Record<string, number>) => {
      const authentic = await probe.hGetAll(commitKey);
      await probe.del(commitKey);
      await probe.hSet(commitKey, fields);
      await probe.publish('skillpin:events', `commit ${key} ${holder}`);
      for (const replica of followers)
        await until(`${replica.name} to refuse it (${reason})`, async () =>
          (await refusedOf(replica))[reason] === counts[reason] ? true : undefined,
        );
      await settle(replicas);
      await probe.del(commitKey);
      await probe.hSet(commitKey, authentic);
    };
    const signed = (commit: string, at: number, secret = SHARED) => ({
      commit,
      tag: '',
      ref: '',
      token: '',
      by: holder,
      at: String(at),
      mac: signPublication(secret, key, { published: { target: { commit } }, token: '', by: holder, at }),
    });

    // C3 exists only on another branch; the forger knows the lease's holder and token, and writes a fresh time.
    const serving = commits.at(-1)!;
    const other = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'other branch') }, 'elsewhere', 'other');
    const counts: Record<string, number> = {};
    const refuse = async (fields: Record<string, string>, reason: string) => {
      counts[reason] = (counts[reason] ?? 0) + 1;
      await forge(fields, reason, counts);
      expect(replicas.map(live)).toEqual([serving, serving, serving]);
    };
    // Times are Redis's: the replicas' manual clocks have no say in a publication's freshness.
    const now = await redisNow();
    const unsigned = { ...signed(other, now), token: await token() };
    delete (unsigned as Partial<typeof unsigned>).mac;
    await refuse(unsigned, 'publication-unsigned');
    await refuse(signed(other, now, 'not-the-shared-secret-0000'), 'publication-forged');
    // Signed, then its commit changed.
    await refuse({ ...signed(serving, now), commit: other }, 'publication-forged');
    await refuse(signed(other, (await redisNow()) - POLL_MS - LEASE_MS - 1), 'publication-stale');
    await refuse(signed(other, (await redisNow()) + POLL_MS + LEASE_MS + 5_000), 'publication-stale');

    // An authentic publication read back, then a newer one: replayed, the older one moves nobody back. The clocks
    // move on past the refusals (after which each follower resolved alone): the holder's next publication is newer.
    const before = commits.at(-1)!;
    for (const replica of replicas) replica.clock.advance(HINT_MS);
    const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v5') });
    commits.push(pushed);
    expect((await hook(followers[0]!)).status).toBe(202);
    await allList(pushed);
    await settle(replicas);
    const older = await probe.hGetAll(commitKey);
    expect(older['commit']).toBe(pushed);
    for (const replica of replicas) replica.clock.advance(HINT_MS);
    const newest = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v6') });
    commits.push(newest);
    expect((await hook(followers[1]!)).status).toBe(202);
    await allList(newest);
    await settle(replicas);
    counts['publication-replayed'] = 1;
    await forge(older, 'publication-replayed', counts);
    expect(replicas.map(live)).toEqual([newest, newest, newest]);
    // Signed and fresh (as the holder's last), but a commit the followers moved away from: only their own listing
    // may move them back.
    counts['publication-backward'] = 1;
    await forge(signed(pushed, Number(await probe.hGet(commitKey, 'at'))), 'publication-backward', counts);
    expect(replicas.map(live)).toEqual([newest, newest, newest]);

    // The branch really moved back (a force-push to the older commit): the holder lists and publishes it, each
    // follower refuses it as a hint, lists the refs itself, and follows.
    for (const replica of replicas) replica.clock.advance(HINT_MS);
    runGit(['-C', repo.bare, 'update-ref', 'refs/heads/main', before]);
    counts['publication-backward'] = 2;
    expect((await hook(followers[0]!)).status).toBe(202);
    await allList(before);
    for (const replica of followers) {
      await until(`${replica.name} to count it`, async () =>
        (await refusedOf(replica))['publication-backward'] === 2 ? true : undefined,
      );
      expect(await refusedOf(replica)).toEqual(counts);
      expect(reasonsLogged(replica)).toEqual([
        'publication-unsigned',
        'publication-forged',
        'publication-forged',
        'publication-stale',
        'publication-stale',
        'publication-replayed',
        'publication-backward',
        'publication-backward',
      ]);
    }
    const metrics = await (await fetch(`${followers[0]!.base}/metrics`)).text();
    expect(
      metrics
        .split('\n')
        .filter((line) => line.startsWith('skillpin_coordination_publications_refused_total{')),
    ).toEqual([
      'skillpin_coordination_publications_refused_total{source="live",reason="publication-unsigned"} 1',
      'skillpin_coordination_publications_refused_total{source="live",reason="publication-forged"} 2',
      'skillpin_coordination_publications_refused_total{source="live",reason="publication-stale"} 2',
      'skillpin_coordination_publications_refused_total{source="live",reason="publication-replayed"} 1',
      'skillpin_coordination_publications_refused_total{source="live",reason="publication-backward"} 2',
    ]);
    // The secret itself is nowhere a replica shows.
    for (const replica of replicas) {
      expect(replica.server.logs()).not.toContain(SHARED);
      expect(JSON.stringify(await status(replica))).not.toContain(SHARED);
    }
  });

  it('answers every request while Redis is down, each replica following alone, and converges when it is back', async () => {
    const failed: string[] = [];
    const ask = async (what: string, request: () => Promise<Response>) => {
      try {
        const answer = await request();
        if (!answer.ok) failed.push(`${what}: ${answer.status}`);
        return answer;
      } catch (error) {
        failed.push(`${what}: ${String(error)}`);
        return undefined;
      }
    };
    const gauge = async (replica: Replica) =>
      /^skillpin_coordination_up (\d)$/m.exec(
        (await (await ask('metrics', () => fetch(`${replica.base}/metrics`)))?.text()) ?? '',
      )?.[1];
    await redis.kill();
    for (const replica of replicas)
      await until(`${replica.name} to see Redis down`, async () =>
        (await status(replica)).coordination!.state === 'down' ? true : undefined,
      );
    const pushed = repo.push({ 'alpha/SKILL.md': skillMd('alpha', 'v4') });
    commits.push(pushed);
    const hooked = await ask('webhook', () => hook(replicas[1]!));
    expect(hooked?.status).toBe(202);
    await allList(pushed, [replicas[1]!]);
    for (const replica of replicas) {
      expect(await gauge(replica)).toBe('0');
      for (const path of ['/status', '/healthz', '/readyz', '/'])
        await ask(`${replica.name} ${path}`, () => fetch(`${replica.base}${path}`));
      const { client, close } = await connectHttp(replica.server.url, 'modern');
      try {
        const listed = await new SkillsClient(client).list();
        expect(listed.skills.length).toBe(1);
      } catch (error) {
        failed.push(`${replica.name} skills/list: ${String(error)}`);
      } finally {
        await close();
      }
    }
    const page = await (await fetch(`${replicas[0]!.base}/`)).text();
    expect(page).toContain('Coordination: <span class="reason">down</span>');

    await redis.start();
    for (const replica of replicas)
      await until(
        `${replica.name} to see Redis back`,
        async () => ((await status(replica)).coordination!.state === 'up' ? true : undefined),
        20_000,
      );
    // Redis came back empty: the replica the next webhook reaches takes the lease, and the others follow it.
    const again = await ask('webhook', () => hook(replicas[2]!));
    expect(again?.status).toBe(202);
    await allList(pushed);
    for (const replica of replicas) expect(await gauge(replica)).toBe('1');
    await until('the replicas to agree again', async () =>
      (await status(replicas[0]!)).sources[0]!.replicas!.agree ? true : undefined,
    );
    expect(failed).toEqual([]);
  });
});
