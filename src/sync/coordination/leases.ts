import type { Logger } from '../../shared/log.ts';
import type { Clock } from '../../shared/clock.ts';
import type { PollVerdict } from './coordination.ts';
import {
  MAX_PUBLISHED_REFS,
  MAX_PUBLISHED_REFS_BYTES,
  namedBy,
  PUBLICATION_FIELDS,
  publishable,
  type Published,
  type Publication,
  publicationReader,
  refsText,
  signPublication,
} from './publication.ts';
import type { RedisLink } from './redis.ts';
import { ACQUIRE, KEEP_MS, keysOf, PUBLISH, READ_PUBLICATION, RELEASE, replicaOf } from './scripts.ts';

/** A source the replicas share: its id here, its key in Redis, how long its lease lasts, how often it is polled. */
export interface SharedSource {
  id: string;
  key: string;
  leaseMs: number;
  /** A publication further than poll and lease from Redis's time is stale (its holder republishes each poll). */
  pollMs: number;
}

export interface LeasesOptions {
  replica: string;
  /** What publications are signed and checked with (`coordination.secret`). */
  secret: string;
  keyPrefix: string;
  channel: string;
  clock: Clock;
  logger: Logger;
  /** Another replica's lease on `source` may have lapsed: a sync of it now takes it if so. */
  lapsed(source: SharedSource): void;
}

/**
 * Takes or renews `source`'s lease; `undefined` when Redis does not answer. `leftMs`: how long the lease lasts yet on
 * Redis's clock; `redisNow`: Redis's time then, and `localNow` this replica's when the answer came.
 */
async function acquireLease(link: RedisLink, options: LeasesOptions, source: SharedSource) {
  const keys = keysOf(options.keyPrefix, source.key);
  const answer = await link.script<[number, string, number, string, number]>(
    ACQUIRE,
    [keys.lease, keys.fence],
    [options.replica, String(source.leaseMs)],
  );
  if (answer === undefined) return undefined;
  const [ours, holder, left, token, redisNow] = answer;
  return {
    ours: ours === 1,
    holder: replicaOf(holder) ?? 'another replica',
    // A lease key with no expiry (no replica writes one) is looked at again after a lease.
    leftMs: Number.isSafeInteger(left) && left >= 0 ? Math.min(left, source.leaseMs) : source.leaseMs,
    token,
    redisNow: Number(redisNow),
    localNow: options.clock.now(),
  };
}

/**
 * Writes what the holder resolved (a target, or a `refs:` listing) while `token` holds the lease, announcing a change
 * to every replica: 0 (not the holder: nothing written), 1 (the same again), 2 (something new); `undefined` when Redis
 * does not answer. Its time is Redis's, signed: a Redis writer cannot make an old publication look fresh.
 */
async function publishWhat(
  link: RedisLink,
  options: LeasesOptions,
  source: SharedSource,
  token: string,
  published: Published,
): Promise<number | undefined> {
  const at = await link.time();
  if (at === undefined) return undefined;
  const keys = keysOf(options.keyPrefix, source.key);
  const publication: Publication = { published, token, by: options.replica, at };
  const target = 'target' in published ? published.target : undefined;
  return link.script<number>(
    PUBLISH,
    [keys.lease, keys.commit],
    [
      options.replica,
      token,
      String(at),
      target?.commit ?? '',
      target?.tag ?? '',
      target?.tag === undefined ? '' : (target.ref ?? ''),
      options.channel,
      `commit ${source.key} ${options.replica}`,
      String(KEEP_MS),
      signPublication(options.secret, source.key, publication),
      'refs' in published ? refsText(published.refs) : '',
      namedBy(published),
    ],
  );
}

/**
 * The poll leases of this replica: one per shared source, taken or renewed in one script (expiry on Redis's clock,
 * a fencing token drawn when it changes hands), renewed by its holder every third of its length, watched by the
 * others so the first look after it lapses takes it; and the holder's publication, fenced by its token. No time of
 * this replica's clock decides a lease or a publication's freshness (only how long to wait, a duration).
 */
export function createLeases(link: RedisLink, options: LeasesOptions) {
  const { replica, keyPrefix, clock, logger } = options;
  /** Leases this replica holds: their renewal timers. */
  const renewing = new Map<SharedSource, () => void>();
  /** Leases another replica holds: a look when each lapses. */
  const watching = new Map<SharedSource, () => void>();
  const stop = (timers: Map<SharedSource, () => void>, source: SharedSource) => {
    timers.get(source)?.();
    timers.delete(source);
  };

  const acquire = (source: SharedSource) => acquireLease(link, options, source);

  /** Renewed every third of the lease: a renewal missed leaves two more before it lapses. */
  const keepRenewing = (source: SharedSource) => {
    stop(watching, source);
    if (renewing.has(source)) return;
    const renew = () =>
      renewing.set(
        source,
        clock.after(Math.max(1, Math.floor(source.leaseMs / 3)), () => {
          void acquire(source).then((lease) => {
            if (!renewing.has(source)) return;
            if (lease === undefined || lease.ours) return void renew();
            stop(renewing, source);
            logger.warn(
              { source: source.id, holder: lease.holder },
              'lost the poll lease of this source to another replica',
            );
            watchLapse(source, lease.leftMs);
          });
        }),
      );
    renew();
  };

  /** Another replica holds the lease for `leftMs` more on Redis's clock: a look then. */
  const watchLapse = (source: SharedSource, leftMs: number) => {
    stop(watching, source);
    watching.set(
      source,
      clock.after(leftMs + 1, () => {
        watching.delete(source);
        options.lapsed(source);
      }),
    );
  };

  const publications = publicationReader(options.secret);
  /** A publication checked against Redis's time `now` (learned in this poll). */
  const checked = (source: SharedSource, fields: readonly (string | null)[], now: number) =>
    publications.read(source.key, fields, { now, freshMs: source.pollMs + source.leaseMs });

  const release = (source: SharedSource) =>
    link.script(RELEASE, [keysOf(keyPrefix, source.key).lease], [replica]);

  return {
    /** Who resolves `source` now: this replica (lease taken or renewed), another (with its hint), or each alone. */
    async poll(source: SharedSource): Promise<PollVerdict> {
      const lease = await acquire(source);
      if (lease === undefined) return { kind: 'alone' };
      if (lease.ours) {
        keepRenewing(source);
        return { kind: 'holder', token: lease.token };
      }
      stop(renewing, source);
      watchLapse(source, lease.leftMs);
      const answer = await link.script<[number, Array<string | null> | number]>(
        READ_PUBLICATION,
        [keysOf(keyPrefix, source.key).commit],
        [String(MAX_PUBLISHED_REFS_BYTES), ...PUBLICATION_FIELDS],
      );
      if (answer === undefined) return { kind: 'alone' };
      const [fits, fields] = answer;
      if (fits !== 1 || !Array.isArray(fields))
        return {
          kind: 'follower',
          holder: lease.holder,
          refused: {
            reason: 'publication-forged',
            detail: `the publication in Redis lists ${fields} bytes of refs, past the ${MAX_PUBLISHED_REFS_BYTES} a holder writes`,
          },
        };
      const read = checked(source, fields, lease.redisNow);
      // Nothing published is no `hint` key: a verdict is probed for it.
      if (read === undefined) return { kind: 'follower', holder: lease.holder };
      if (!read.ok)
        return {
          kind: 'follower',
          holder: lease.holder,
          refused: { reason: read.reason, detail: read.detail },
        };
      const { published, at } = read.publication;
      // The verdict tells the hint's time on this replica's clock (what it compares with its own syncs).
      const hint = { published, at: at - lease.redisNow + lease.localNow };
      return { kind: 'follower', holder: lease.holder, hint };
    },
    /** Writes what the holder resolved while `token` holds the lease, announcing a change to every replica. */
    async publish(source: SharedSource, token: string, published: Published): Promise<void> {
      const what =
        'target' in published ? { commit: published.target.commit } : { refs: published.refs.length };
      // What the followers would refuse (as forged) is not written: they list the refs themselves.
      if ('refs' in published && !publishable(published.refs)) {
        logger.warn(
          { source: source.id, ...what, max: MAX_PUBLISHED_REFS, maxBytes: MAX_PUBLISHED_REFS_BYTES },
          'did not publish: the listing is past the refs or bytes a publication holds, or names a ref it refuses; the other replicas list the refs themselves',
        );
        return;
      }
      const written = await publishWhat(link, options, source, token, published);
      if (written === 0) {
        stop(renewing, source);
        logger.warn(
          { source: source.id, ...what },
          'did not publish: the poll lease passed to another replica',
        );
      } else if (written === 2) logger.info({ source: source.id, ...what }, 'published to the replicas');
    },
    /** Stops renewing and watching `source`, and gives its lease up if this replica holds it. */
    async forget(source: SharedSource): Promise<void> {
      const held = renewing.has(source);
      stop(renewing, source);
      stop(watching, source);
      publications.forget(source.key);
      if (held) await release(source);
    },
  };
}
