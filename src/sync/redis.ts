import { createClient } from '@redis/client';
import type { CoordinationConfig } from '../config/index.ts';
import type { ResolvedRef } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import { COMMIT_PATTERN } from '../shared/patterns.ts';
import { redact, rememberSecret } from '../shared/redact.ts';
import { messageOf } from '../shared/text.ts';
import type { Clock } from './clock.ts';
import {
  type Coordination,
  type CoordinationEvents,
  type CoordinationStatus,
  coordinated,
  type PollVerdict,
  type ReplicaServing,
  type SourceReplicas,
  sharedKey,
} from './coordination.ts';
import { ACQUIRE, PUBLISH, RELEASE } from './redisScripts.ts';

/** How often a replica reports what it serves; a report older than REPORT_STALE_MS is a replica gone. */
export const REPORT_MS = 10_000;
export const REPORT_STALE_MS = 3 * REPORT_MS;
/** Status asked for reads what the replicas serve again, at most this often (in the background). */
const VIEW_REFRESH_MS = 1_000;
/** Published messages longer than this are not ours: ignored. */
const MAX_MESSAGE_BYTES = 1024;
/** How long Redis keeps a published commit, a lease, or the reports nobody refreshes (a cleanup, not a rule). */
const KEEP_MS = 7 * 86_400_000;

/** Who this replica is: what its leases and reports name. */
export interface ReplicaIdentity {
  host: string;
  pid: number;
  /** Tells two replicas of one host and pid apart (containers, tests in one process). */
  nonce: string;
}

export interface RedisCoordinationOptions {
  config: CoordinationConfig;
  replica: ReplicaIdentity;
  logger: Logger;
  clock: Clock;
}

interface Followed {
  id: string;
  key: string;
  leaseMs: number;
}

/** A source's keys: `<prefix>lease:<key>` and so on; one channel for every message. */
const keysOf = (prefix: string, key: string) => ({
  lease: `${prefix}lease:${key}`,
  fence: `${prefix}fence:${key}`,
  commit: `${prefix}commit:${key}`,
  served: `${prefix}served:${key}`,
  agreed: `${prefix}agreed:${key}`,
});

/** A published commit read back: a hint only when every field is what a commit and tag look like. */
function hintOf(fields: readonly (string | null)[]): { target: ResolvedRef; at: number } | undefined {
  const [commit, tag, ref, at] = fields;
  const when = Number(at);
  if (commit == null || !COMMIT_PATTERN.test(commit) || !Number.isSafeInteger(when)) return undefined;
  if (tag == null || tag === '') return { target: { commit }, at: when };
  if (!COMMIT_PATTERN.test(tag) || ref == null || ref === '' || ref.length > 1024) return undefined;
  return { target: { commit, tag, ref }, at: when };
}

/** A replica id as this code writes it (`host/pid/nonce`): anything else read from Redis is not shown. */
const REPLICA_ID = /^[A-Za-z0-9._-]{1,253}\/\d{1,10}\/[0-9A-Za-z]{1,64}$/;
const replicaOf = (text: string | null | undefined) =>
  text != null && REPLICA_ID.test(text) ? text : undefined;
/** Reports read per source at most (a hash that grew past this is not ours to show whole). */
const MAX_REPORTS = 1000;

/** One replica's report as stored: JSON with a commit (or null), since and at. */
function reportOf(replica: string, text: string): (ReplicaServing & { at: number }) | undefined {
  if (replicaOf(replica) === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<ReplicaServing> & { at?: unknown };
    const commit =
      parsed.commit === null || COMMIT_PATTERN.test(String(parsed.commit)) ? parsed.commit : undefined;
    if (commit === undefined || typeof parsed.at !== 'number' || typeof parsed.since !== 'string')
      return undefined;
    return {
      replica,
      host: replica.slice(0, replica.indexOf('/')),
      pid: Number(parsed.pid ?? 0),
      commit,
      since: parsed.since,
      at: parsed.at,
    };
  } catch {
    return undefined;
  }
}

/**
 * Coordination of replicas through Redis (the only module that speaks to it): a poll lease per source with expiry
 * and a fencing token, the commits the holder resolves published as hints, webhooks announced to every replica,
 * and what each replica serves. Every failure makes this replica follow on its own until Redis answers again;
 * nothing here throws at the sync worker. Resolves once connected, or after the connect timeout (down then).
 */
export async function connectRedisCoordination(options: RedisCoordinationOptions): Promise<Coordination> {
  const { config, logger, clock } = options;
  const replica = `${options.replica.host}/${options.replica.pid}/${options.replica.nonce}`;
  const url = new URL(config.redis);
  if (url.password !== '') rememberSecret(decodeURIComponent(url.password), decodeURIComponent(url.username));
  const channel = `${config.keyPrefix}events`;
  const timeout = config.commandTimeoutMs;
  const client = createClient({
    url: config.redis,
    socket: {
      connectTimeout: config.connectTimeoutMs,
      // Reconnects for as long as the replica runs: 100 ms, 200 ms, … at most 5 s apart.
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** Math.min(retries, 6), 5_000),
      ...(config.tls === undefined
        ? {}
        : { tls: true as const, ...(config.tls.ca === undefined ? {} : { ca: config.tls.ca }) }),
    },
    // A command while Redis is away fails at once: this replica goes on alone rather than wait.
    disableOfflineQueue: true,
    commandOptions: { timeout },
  });
  const subscriber = client.duplicate();

  let state: CoordinationStatus = {
    state: 'down',
    redis: config.endpoint,
    replica,
    since: new Date(clock.now()).toISOString(),
    error: 'connecting',
  };
  let closed = false;
  let everUp = false;
  const setState = (up: boolean, error?: unknown) => {
    if (closed) return;
    if (up === (state.state === 'up')) return;
    const detail = error === undefined ? null : redact(messageOf(error));
    state = {
      ...state,
      state: up ? 'up' : 'down',
      since: new Date(clock.now()).toISOString(),
      error: detail,
    };
    if (up) {
      logger.info(
        { redis: config.endpoint },
        everUp ? 'coordination resumed: Redis answers again' : 'coordination up',
      );
      everUp = true;
      reportNow();
    } else
      logger.warn(
        { redis: config.endpoint, err: detail },
        'coordination down: Redis does not answer; every source is followed by this replica on its own until it does',
      );
  };
  const bothReady = () => client.isReady && subscriber.isReady;
  for (const emitter of [client, subscriber]) {
    emitter.on('ready', () => setState(bothReady()));
    emitter.on('error', (error: unknown) => setState(false, error));
    emitter.on('end', () => setState(false, new Error('connection closed')));
  }

  /** One command; a failure marks coordination down and is the caller's `undefined`. */
  const command = async <T>(args: string[]): Promise<T | undefined> => {
    if (closed) return undefined;
    try {
      const answer = await client.sendCommand<T>(args, { timeout });
      // A command that timed out leaves the connection ready: the next answer brings coordination back.
      if (bothReady()) setState(true);
      return answer;
    } catch (error) {
      setState(false, error);
      return undefined;
    }
  };
  const script = <T>(source: string, keys: string[], args: string[]) =>
    command<T>(['EVAL', source, String(keys.length), ...keys, ...args]);

  let events: CoordinationEvents = { triggered: () => undefined };
  let followed = new Map<string, Followed>();
  const byKey = () => new Map([...followed.values()].map((f) => [f.key, f]));
  let keyed = byKey();
  /** Leases this replica holds: their renewal timers. */
  const renewing = new Map<string, () => void>();
  /** Sources whose lease another replica holds: a look when it lapses. */
  const watching = new Map<string, () => void>();
  const views = new Map<string, SourceReplicas>();
  let served: Readonly<Record<string, string | undefined>> = {};
  const since = new Map<string, { commit: string | null; since: string }>();

  const stopRenewing = (id: string) => {
    renewing.get(id)?.();
    renewing.delete(id);
  };
  const stopWatching = (id: string) => {
    watching.get(id)?.();
    watching.delete(id);
  };

  /** Takes or renews source `id`'s lease: `[ours, holder, expiresAt, token]`, or `undefined` when Redis failed. */
  const acquire = async (source: Followed) => {
    const keys = keysOf(config.keyPrefix, source.key);
    const now = clock.now();
    const answer = await script<[number, string, string, string]>(
      ACQUIRE,
      [keys.lease, keys.fence],
      [replica, String(now), String(source.leaseMs), String(source.leaseMs * 4)],
    );
    if (answer === undefined) return undefined;
    const [ours, holder, expires, token] = answer;
    return {
      ours: ours === 1,
      holder: replicaOf(holder) ?? 'another replica',
      expiresAt: Number(expires),
      token,
    };
  };

  /** The holder renews every third of the lease, so a renewal missed leaves two more before it lapses. */
  const keepRenewing = (source: Followed) => {
    stopWatching(source.id);
    if (renewing.has(source.id)) return;
    const renew = () => {
      renewing.set(
        source.id,
        clock.after(Math.max(1, Math.floor(source.leaseMs / 3)), () => {
          void acquire(source).then((lease) => {
            if (!renewing.has(source.id) || followed.get(source.id) !== source) return;
            if (lease === undefined || lease.ours) return renew();
            stopRenewing(source.id);
            logger.warn(
              { source: source.id, holder: lease.holder },
              'lost the poll lease of this source to another replica',
            );
            watchLapse(source, lease.expiresAt);
          });
        }),
      );
    };
    renew();
  };

  /** Another replica holds the lease until `expiresAt`: a sync then, which takes it if it was not renewed. */
  const watchLapse = (source: Followed, expiresAt: number) => {
    stopWatching(source.id);
    watching.set(
      source.id,
      // A lease is never longer than this replica's own: a look then at the latest, whatever Redis said.
      clock.after(Math.min(Math.max(0, expiresAt - clock.now()), source.leaseMs) + 1, () => {
        watching.delete(source.id);
        if (followed.get(source.id) === source) events.triggered(source.id, 'poll lease lapsed');
      }),
    );
  };

  const readHint = async (source: Followed) => {
    const keys = keysOf(config.keyPrefix, source.key);
    const fields = await command<Array<string | null>>(['HMGET', keys.commit, 'commit', 'tag', 'ref', 'at']);
    return fields === undefined ? undefined : hintOf(fields);
  };

  /** Reads what every replica reports for `source`, drops reports gone stale, and notes when they agreed. */
  const refreshView = async (source: Followed): Promise<void> => {
    const keys = keysOf(config.keyPrefix, source.key);
    const [fields, holder] = await Promise.all([
      command<Record<string, string> | string[]>(['HGETALL', keys.served]),
      command<string | null>(['HGET', keys.lease, 'replica']),
    ]);
    if (fields === undefined) return;
    const pairs = Array.isArray(fields)
      ? fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]!] as const] : []))
      : Object.entries(fields);
    const now = clock.now();
    const reports = pairs.slice(0, MAX_REPORTS).flatMap(([who, text]) => {
      const report = reportOf(who, text);
      return report === undefined ? [] : [report];
    });
    const stale = reports
      .filter((report) => now - report.at > REPORT_STALE_MS)
      .map((report) => report.replica);
    if (stale.length > 0) void command(['HDEL', keys.served, ...stale]);
    const live = reports
      .filter((report) => !stale.includes(report.replica))
      .sort((a, b) => (a.replica < b.replica ? -1 : 1))
      .map(({ at: _at, ...report }) => report);
    const commits = new Set(live.map((report) => report.commit));
    const agree = live.length > 0 && commits.size === 1 && !commits.has(null);
    let lastAgreed: SourceReplicas['lastAgreed'] = null;
    if (agree) {
      lastAgreed = { commit: live[0]!.commit!, at: new Date(now).toISOString() };
      void command(['SET', keys.agreed, JSON.stringify(lastAgreed), 'PX', String(KEEP_MS)]);
    } else {
      const text = await command<string | null>(['GET', keys.agreed]);
      try {
        const parsed = text == null ? null : (JSON.parse(text) as { commit?: unknown; at?: unknown });
        if (parsed !== null && COMMIT_PATTERN.test(String(parsed.commit)) && typeof parsed.at === 'string')
          lastAgreed = { commit: String(parsed.commit), at: parsed.at };
      } catch {
        // Not ours: no agreement known.
      }
    }
    views.set(source.id, { leaseHolder: replicaOf(holder) ?? null, serving: live, agree, lastAgreed });
  };

  /** Writes this replica's report of every followed source, then reads every replica's back. */
  const reportNow = () => {
    const at = clock.now();
    for (const source of followed.values()) {
      const commit = served[source.id] ?? null;
      const was = since.get(source.id);
      if (was === undefined || was.commit !== commit)
        since.set(source.id, { commit, since: new Date(at).toISOString() });
      const report = {
        host: options.replica.host,
        pid: options.replica.pid,
        commit,
        since: since.get(source.id)!.since,
        at,
      };
      const keys = keysOf(config.keyPrefix, source.key);
      void command(['HSET', keys.served, replica, JSON.stringify(report)])
        .then(() => command(['PEXPIRE', keys.served, String(KEEP_MS)]))
        .then(() => refreshView(source));
    }
  };
  let stopReporting = () => {};
  const reportLater = () => {
    stopReporting = clock.after(REPORT_MS, () => {
      reportNow();
      reportLater();
    });
  };
  let viewedAt = 0;

  const onMessage = (message: string) => {
    if (message.length > MAX_MESSAGE_BYTES) return;
    const [kind, key, from] = message.split(' ');
    const source = keyed.get(key ?? '');
    if (source === undefined) return;
    // What this replica announced or published, it has done already.
    if (from === replica) return;
    if (kind === 'sync') events.triggered(source.id, 'a webhook at another replica');
    if (kind === 'commit') events.triggered(source.id, 'a new commit published by the replica polling it');
  };

  void client.connect().catch(() => undefined);
  void subscriber
    .connect()
    .then(() => subscriber.subscribe(channel, onMessage))
    .catch(() => undefined);
  reportLater();
  // The first syncs wait for Redis a little (its connect timeout): a replica that starts alone lists its refs.
  await new Promise<void>((resolve) => {
    if (bothReady()) return resolve();
    const timer = setTimeout(resolve, config.connectTimeoutMs);
    timer.unref();
    const ready = () => {
      if (!bothReady()) return;
      clearTimeout(timer);
      resolve();
    };
    client.on('ready', ready);
    subscriber.on('ready', ready);
  });
  // The subscription is in place before anyone announces to us.
  for (let i = 0; i < 50 && bothReady() && !subscriber.isPubSubActive; i++)
    await new Promise((resolve) => setTimeout(resolve, 10));
  setState(bothReady());

  return {
    follow(sources, next) {
      events = next;
      const before = followed;
      followed = new Map(
        sources.filter(coordinated).map((source) => {
          const key = sharedKey(source);
          const leaseMs = Math.min(config.leaseMs, source.pollMs ?? config.leaseMs);
          const kept = before.get(source.id);
          return [
            source.id,
            kept?.key === key && kept.leaseMs === leaseMs ? kept : { id: source.id, key, leaseMs },
          ];
        }),
      );
      keyed = byKey();
      for (const [id, source] of before)
        if (followed.get(id) !== source) {
          stopRenewing(id);
          stopWatching(id);
          views.delete(id);
          void script(RELEASE, [keysOf(config.keyPrefix, source.key).lease], [replica]);
        }
    },
    async poll(id): Promise<PollVerdict> {
      const source = followed.get(id);
      if (source === undefined) return { kind: 'alone' };
      const lease = await acquire(source);
      if (lease === undefined) return { kind: 'alone' };
      if (lease.ours) {
        keepRenewing(source);
        return { kind: 'holder', token: lease.token };
      }
      stopRenewing(id);
      watchLapse(source, lease.expiresAt);
      const hint = await readHint(source);
      if (state.state === 'down') return { kind: 'alone' };
      return { kind: 'follower', holder: lease.holder, ...(hint === undefined ? {} : { hint }) };
    },
    async publish(id, token, target) {
      const source = followed.get(id);
      if (source === undefined) return;
      const keys = keysOf(config.keyPrefix, source.key);
      const written = await script<number>(
        PUBLISH,
        [keys.lease, keys.commit],
        [
          replica,
          token,
          String(clock.now()),
          target.commit,
          target.tag ?? '',
          target.tag === undefined ? '' : (target.ref ?? ''),
          channel,
          `commit ${source.key} ${replica}`,
          String(KEEP_MS),
        ],
      );
      if (written === 0) {
        stopRenewing(id);
        logger.warn(
          { source: id, commit: target.commit },
          'did not publish: the poll lease passed to another replica',
        );
      } else if (written === 2)
        logger.info({ source: id, commit: target.commit }, 'published a new commit to the replicas');
    },
    announce(id, why) {
      const source = followed.get(id);
      if (source === undefined) return;
      void command(['PUBLISH', channel, `sync ${source.key} ${replica}`]).then((heard) => {
        if (heard !== undefined)
          logger.debug({ source: id, why, replicas: heard }, 'asked every replica to sync');
      });
    },
    report(next) {
      served = next;
      reportNow();
    },
    status: () => state,
    replicas(id) {
      const source = followed.get(id);
      if (source === undefined) return undefined;
      // Status reads what was last read; reading again happens behind it, never while a request waits.
      if (Date.now() - viewedAt >= VIEW_REFRESH_MS) {
        viewedAt = Date.now();
        for (const each of followed.values()) void refreshView(each);
      }
      return views.get(id) ?? { leaseHolder: null, serving: [], agree: false, lastAgreed: null };
    },
    async close() {
      stopReporting();
      for (const id of [...watching.keys()]) stopWatching(id);
      const held = [...renewing.keys()];
      for (const id of held) stopRenewing(id);
      if (state.state === 'up') {
        const releases = held.flatMap((id) => {
          const source = followed.get(id);
          return source === undefined
            ? []
            : [script(RELEASE, [keysOf(config.keyPrefix, source.key).lease], [replica])];
        });
        const reports = [...followed.values()].map((source) =>
          command(['HDEL', keysOf(config.keyPrefix, source.key).served, replica]),
        );
        await Promise.all([...releases, ...reports]);
      }
      closed = true;
      for (const connection of [subscriber, client]) {
        try {
          if (connection.isReady) await connection.close();
          else connection.destroy();
        } catch {
          connection.destroy();
        }
      }
    },
  };
}
