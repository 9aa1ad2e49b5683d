import type { CoordinationConfig, SourceConfig } from '../../config/index.ts';
import type { Logger } from '../../shared/log.ts';
import type { Clock } from '../../shared/clock.ts';
import { rememberSecret } from '../../shared/redact.ts';
import { type Coordination, type CoordinationEvents, coordinated, sharedKey } from './coordination.ts';
import { connectRedis } from './redis.ts';
import { createLeases, type SharedSource } from './leases.ts';
import { createReports, REPORT_MS } from './reports.ts';

/** Status asked for reads what the replicas serve again, at most this often (in the background). */
const VIEW_REFRESH_MS = 1_000;

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

/**
 * The shared sources of `sources` (remote sources tracking a ref), each lease as long as its poll at most; one
 * whose key and lease are as `before` stays the same object (its lease and reports carry on).
 */
function sharedSources(
  sources: readonly SourceConfig[],
  before: ReadonlyMap<string, SharedSource>,
  leaseMs: number,
): Map<string, SharedSource> {
  return new Map(
    sources.filter(coordinated).map((source) => {
      const key = sharedKey(source);
      const ms = Math.min(leaseMs, source.pollMs ?? leaseMs);
      const pollMs = source.pollMs ?? leaseMs;
      const kept = before.get(source.id);
      const same = kept?.key === key && kept.leaseMs === ms && kept.pollMs === pollMs;
      return [source.id, same ? kept : { id: source.id, key, leaseMs: ms, pollMs }];
    }),
  );
}

/** A message on the channel: a replica asks every one to sync a source, or the polling one published a commit. */
function heard(
  message: string,
  replica: string,
  keyed: ReadonlyMap<string, SharedSource>,
  events: CoordinationEvents,
): void {
  const [kind, key, from] = message.split(' ');
  const source = keyed.get(key ?? '');
  // What this replica announced or published, it has done already.
  if (source === undefined || from === replica) return;
  if (kind === 'sync') events.triggered(source.id, 'a webhook at another replica');
  if (kind === 'commit') events.triggered(source.id, 'a new commit published by the replica polling it');
}

/** Calls `fire` every `ms` until the returned function is called. */
function every(clock: Clock, ms: number, fire: () => void): () => void {
  let stop = () => {};
  const later = () => {
    stop = clock.after(ms, () => {
      fire();
      later();
    });
  };
  later();
  return () => stop();
}

/**
 * Coordination of replicas through Redis: a poll lease per source (leases.ts), the commit its holder resolves
 * published as a hint, webhooks announced on one channel, and what each replica serves (reports.ts). Every
 * failure makes this replica follow on its own until Redis answers again; nothing here throws at the sync worker.
 * Resolves once connected, or after the connect timeout (down then, reconnecting behind).
 */
export async function connectRedisCoordination(options: RedisCoordinationOptions): Promise<Coordination> {
  const { config, logger, clock } = options;
  rememberSecret(config.secret);
  const replica = `${options.replica.host}/${options.replica.pid}/${options.replica.nonce}`;
  const channel = `${config.keyPrefix}events`;
  let events: CoordinationEvents = { triggered: () => undefined };
  let followed = new Map<string, SharedSource>();
  let keyed = new Map<string, SharedSource>();
  let served: Readonly<Record<string, string | undefined>> = {};

  // Follows nothing until follow(): `reports` is set by then.
  const reportAll = () => {
    for (const source of followed.values()) void reports.report(source, served[source.id] ?? null);
  };
  const onMessage = (message: string) => heard(message, replica, keyed, events);
  const link = await connectRedis({
    config,
    replica,
    logger,
    clock,
    channel,
    onMessage,
    onUp: () => reportAll(),
  });
  const leases = createLeases(link, {
    replica,
    secret: config.secret,
    keyPrefix: config.keyPrefix,
    channel,
    clock,
    logger,
    lapsed: (source) => {
      if (followed.get(source.id) === source) events.triggered(source.id, 'poll lease lapsed');
    },
  });
  const reports = createReports(link, {
    replica,
    pid: options.replica.pid,
    keyPrefix: config.keyPrefix,
  });
  const stopReporting = every(clock, REPORT_MS, reportAll);
  /** Refused publications by `<source id> <reason>`. */
  const refusals = new Map<string, number>();
  let viewedAt = 0;

  return {
    follow(sources, next) {
      events = next;
      const before = followed;
      followed = sharedSources(sources, before, config.leaseMs);
      keyed = new Map([...followed.values()].map((source) => [source.key, source]));
      for (const [id, source] of before)
        if (followed.get(id) !== source) {
          void leases.forget(source);
          void reports.forget(source);
        }
    },
    async poll(id) {
      const source = followed.get(id);
      return source === undefined ? { kind: 'alone' } : leases.poll(source);
    },
    async publish(id, token, published) {
      const source = followed.get(id);
      if (source !== undefined) await leases.publish(source, token, published);
    },
    announce(id, why) {
      const source = followed.get(id);
      if (source === undefined) return;
      void link.command<number>(['PUBLISH', channel, `sync ${source.key} ${replica}`]).then((heard) => {
        if (heard !== undefined)
          logger.debug({ source: id, why, replicas: heard }, 'asked every replica to sync');
      });
    },
    report(next) {
      served = next;
      reportAll();
    },
    refused(id, reason) {
      const at = `${id} ${reason}`;
      refusals.set(at, (refusals.get(at) ?? 0) + 1);
    },
    status: () => ({
      ...link.status(),
      refused: [...refusals].map(([at, count]) => {
        const [source, reason] = at.split(' ') as [string, string];
        return { source, reason, count };
      }),
    }),
    replicas(id) {
      const source = followed.get(id);
      if (source === undefined) return undefined;
      // Status shows what was last read; reading again happens behind it, never while a request waits.
      if (Date.now() - viewedAt >= VIEW_REFRESH_MS) {
        viewedAt = Date.now();
        for (const each of followed.values()) void reports.refresh(each);
      }
      return reports.view(source);
    },
    async close() {
      stopReporting();
      const sources = [...followed.values()];
      await Promise.all(sources.flatMap((source) => [leases.forget(source), reports.forget(source)]));
      await link.close();
    },
  };
}
