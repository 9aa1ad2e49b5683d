import { isDeepStrictEqual } from 'node:util';
import type PQueue from 'p-queue';
import type { Catalog, SourceFailure } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { SyncOutcome } from '../shared/status.ts';
import { messageOf } from '../shared/text.ts';
import type { Clock } from '../shared/clock.ts';
import type { Owner } from './owner.ts';
import type { DamageLedger } from './damage.ts';
import type { Followed } from './follower.ts';
import type { Membership } from './dataDir/membership.ts';
import { liveProcesses } from './dataDir/processes.ts';
import { arrangedSources, EMPTY_LISTING, type GroupListing } from './refGroup.ts';
import type { Retention } from './retention.ts';
import type { SourceState, StateFile } from './dataDir/state.ts';
import { commitsOf, type Restored, type SourceRecord } from './record.ts';

export { commitsOf, type Restored, type SourceRecord } from './record.ts';

/** The config running and a follower per source: swapped whole by a reconfigure. */
export interface Running {
  config: Config;
  followed: ReadonlyMap<string, Followed>;
}

/**
 * What the parts of one sync worker share: its collaborators, and the state that changes (each field replaced
 * whole, in one assignment). Every catalog swap, process file and state.json write follows from `records`.
 */
export interface Worker {
  readonly catalog: Catalog;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly membership: Membership;
  /** Who syncs each source: this process, another of its machine, or another replica. */
  readonly owner: Owner;
  readonly stateFile: StateFile;
  readonly queue: PQueue;
  /** Runs a step after every step of the same store asked for before it (the refs of one `refs:` source). */
  readonly storeTurn: <T>(store: string, step: () => Promise<T>) => Promise<T>;
  readonly damage: DamageLedger;
  /** What the sources stopped serving: told only by this file's record, restarted and persist. */
  readonly retention: Retention;
  /** Writes state.json and settles retention for an ask, batched with the asks made while a write runs. */
  readonly persisting: (ask: PersistAsk) => Promise<void>;
  /** Told after every sync how long it ran, waiting for its turn not counted (metrics). */
  readonly onSynced: ((outcome: SyncOutcome, seconds: number) => void) | undefined;
  /** Sources a webhook or `skillpin sync` asked for: their holder is asked when it is another process. */
  readonly asked: Set<string>;
  /**
   * The `refs:` sources whose listing's refs are syncing now: those refs' syncs are served once per commit and
   * written to state.json once, by the listing, not once per ref.
   */
  readonly rounds: Set<string>;
  /**
   * Sources whose sync at a start found what dataDir served: their state.json entries (new sync times only) are
   * written once, when the start's syncs end (`syncAll`), not once per source.
   */
  readonly unwritten: Set<Followed>;
  /** Opens a source and the follower that syncs it through this worker. */
  readonly follow: (source: SourceConfig, config: Config) => Followed;
  readonly records: ReadonlyMap<string, SourceRecord>;
  /** What each `refs:` source listed last (its refs are sources of their own). */
  readonly listings: ReadonlyMap<string, GroupListing>;
  readonly running: Running;
  /** The config as given: `running.config` is it with each `refs:` source's refs after it. */
  readonly base: Config;
  readonly stopped: boolean;
  /** When state.json was last written (the worker's clock, ms); 0: not yet. */
  readonly written: number;
}

/** The worker's fields as this module alone changes them: every change of its state is one of the functions below. */
type State = {
  -readonly [K in 'records' | 'listings' | 'running' | 'base' | 'stopped' | 'written']: Worker[K];
};
const state = (w: Worker): State => w;

/** The config and followers the worker runs now (a start, a restore, a reconfigure). */
export function runs(w: Worker, running: Running): void {
  state(w).running = running;
}

/** The config as given (a reconfigure), and what each `refs:` source listed last (`listings`). */
export function rebase(w: Worker, base: Config, listings: ReadonlyMap<string, GroupListing>): void {
  state(w).base = base;
  state(w).listings = listings;
}

/** What each `refs:` source listed last: its refs' sources start and stop to match. */
export function lists(w: Worker, listings: ReadonlyMap<string, GroupListing>): void {
  state(w).listings = listings;
}

/** The worker stops: what a sync ends with after this is not recorded. */
export function stops(w: Worker): void {
  state(w).stopped = true;
}

export const listingOf = (w: Worker, id: string): GroupListing =>
  w.records.get(id)?.listing ?? w.listings.get(id) ?? EMPTY_LISTING;

/** Records what source `id` is now; `dropped`: the commits it stopped serving (forgotten once state.json says so). */
export function record(w: Worker, id: string, next: SourceRecord, dropped: readonly string[] = []): void {
  state(w).records = new Map(w.records).set(id, next);
  w.retention.drop(id, dropped);
}

/**
 * The records of the sources `sources` once a reconfigure restarted some: the `starting` ones (added, changed)
 * from what they start from, the others as they were. A `removed` ref of a `refs:` source drops what it served
 * (its store is shared with the refs that stay); a removed source of its own keeps its commits in dataDir.
 */
export function restarted(
  w: Worker,
  sources: readonly SourceConfig[],
  starting: ReadonlyMap<string, Restored>,
  removed: readonly Followed[],
): void {
  for (const { config } of removed) {
    w.retention.reset(config.id);
    if (config.group !== undefined) w.retention.drop(config.id, commitsOf(w.records.get(config.id)?.served));
  }
  state(w).records = new Map(
    sources.map((s) => [s.id, starting.get(s.id)?.record ?? w.records.get(s.id) ?? { tried: false }]),
  );
  for (const [id, { dropped }] of starting) {
    w.retention.reset(id);
    w.retention.drop(id, dropped);
  }
}

/** Commits the other refs of `followed`'s `refs:` source serve: their shared store keeps them pinned. */
export function siblingsServe(w: Worker, followed: Followed): Set<string> {
  const group = followed.config.group?.id;
  if (group === undefined) return new Set();
  const siblings = w.running.config.sources.filter(
    (s) => s.id !== followed.config.id && s.group?.id === group,
  );
  return new Set(siblings.flatMap((s) => commitsOf(w.records.get(s.id)?.served)));
}

/**
 * Serves the records: one catalog swap (each source's commits; why a failing one fails, damage first), this
 * process's file (what it serves, which other processes' retention keeps), and the replicas' report.
 */
export function publish(w: Worker): void {
  const { records, running, damage } = w;
  const groupOf = new Map(running.config.sources.map((s) => [s.id, s.group?.id]));
  const failures = [...records].flatMap(([id, r]): SourceFailure[] => {
    const damaged = damage.error(id);
    const failure =
      damaged === undefined ? r.failure : { id, reason: damaged.reason, detail: damaged.detail };
    if (failure === undefined) return [];
    const group = groupOf.get(id);
    return [group === undefined ? failure : { ...failure, group }];
  });
  const served = [...records.values()].flatMap((r) => (r.served === undefined ? [] : [r.served]));
  w.catalog.swap({ sources: arrangedSources(served, running.config.sources, w.listings), failures });
  try {
    w.membership.serving(Object.fromEntries([...records].map(([id, r]) => [id, commitsOf(r.served)])));
  } catch (error) {
    w.logger.warn({ err: messageOf(error) }, 'could not write this process file in dataDir/processes');
  }
  w.owner.report(Object.fromEntries([...records].map(([id, r]) => [id, r.served?.current.commit])));
}

/**
 * Whether `after` serves what `before` did and fails as it did: publishing it would swap in the catalog served
 * already, write the same process file and report the same commits.
 */
export const servesAsBefore = (before: SourceRecord, after: SourceRecord): boolean =>
  after.served === before.served && isDeepStrictEqual(after.failure, before.failure);

/** What state.json remembers of a record: the commits it serves and when it synced. */
function savedState(r: SourceRecord): SourceState {
  return {
    current: r.served?.current.commit,
    retained: r.served?.retained.map((ns) => ns.commit) ?? [],
    lastSync: r.lastSync,
    lastSuccess: r.lastSuccess,
    lastError: r.lastError,
    listing: r.listing,
  };
}

/** What a sync or a reconfigure asks `persist` to write and settle. */
export interface PersistAsk {
  touched: readonly Followed[];
  removed: readonly string[];
}

/**
 * Writes the entries of the sources this process leases into state.json (merged with the other processes'
 * entries), then lets retention forget what the `touched` sources stopped serving: a crash in between restarts
 * with it intact. `removed`: sources no longer run here, whose entries go unless another live process runs
 * them. A failed write is logged and forgets nothing. Asks made while a write runs share the next one
 * (`Worker.persisting`): a start of 1,000 sources writes state.json a few times, not once per source.
 */
export const persist = (w: Worker, touched: readonly Followed[], removed: readonly string[] = []) =>
  w.persisting({ touched, removed });

/** One write of state.json for every ask `asks` carries, then retention settled for each touched source. */
export async function persistAll(w: Worker, asks: readonly PersistAsk[]): Promise<void> {
  const { membership, stateFile } = w;
  const touched = [...new Set(asks.flatMap((ask) => ask.touched))];
  const removed = [...new Set(asks.flatMap((ask) => ask.removed))];
  // Each lease read once: the refs of a `refs:` source share their group's.
  const leases = new Map<string, boolean>();
  const holds = (lease: string) =>
    leases.get(lease) ?? leases.set(lease, membership.holds(lease)).get(lease)!;
  const mine = [...w.records].filter(([id]) => holds(membership.leaseOf(id)));
  const elsewhere = new Set(
    liveProcesses(membership.dataDir)
      .filter((other) => other.nonce !== membership.holder.nonce)
      .flatMap((other) => Object.keys(other.sources)),
  );
  try {
    await stateFile.merge(
      membership.holder,
      Object.fromEntries(mine.map(([id, r]) => [id, savedState(r)])),
      removed.filter((id) => !elsewhere.has(id)),
    );
  } catch (error) {
    w.logger.error({ err: messageOf(error), file: stateFile.file }, 'could not write state.json');
    return;
  }
  state(w).written = w.clock.now();
  await w.retention.settle(touched);
}

/** How long state.json may keep a polled source's last sync time when its polls find nothing new. */
export const QUIET_WRITE_MS = 60_000;

/**
 * Whether a sync of a source that made `after` of `before` needs no state.json write: a poll (nothing asked
 * for it, so nobody waits for its publication) that changed nothing state.json keeps but its sync times, while
 * state.json was written within QUIET_WRITE_MS.
 */
export function quietPoll(w: Worker, why: string, before: SourceRecord, after: SourceRecord): boolean {
  if (why !== 'poll' || w.written === 0 || w.clock.now() - w.written >= QUIET_WRITE_MS) return false;
  const { lastSync: _a, lastSuccess: _b, ...was } = savedState(before);
  const { lastSync: _c, lastSuccess: _d, ...now } = savedState(after);
  return isDeepStrictEqual(was, now);
}
