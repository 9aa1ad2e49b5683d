import PQueue from 'p-queue';
import type { Catalog } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import { osReason, type WriteFs } from '../shared/fs.ts';
import type { Logger } from '../shared/log.ts';
import { oneAtATimePer } from '../shared/serial.ts';
import type { StatusReport, SyncOutcome } from '../shared/status.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import type { Coordination, CoordinationEvents } from './coordination/coordination.ts';
import { createDamageLedger, type Damage } from './damage.ts';
import { type Followed, type FollowHooks, followSource, unfollow } from './follower.ts';
import { heldSearches } from './search.ts';
import { resolvedOf, syncGroup } from './groupStep.ts';
import { joinDataDir, type Membership } from './dataDir/membership.ts';
import { adopt, askHolder, watchDataDir } from './dataDir/published.ts';
import { expanded, type Reconfigured, reconfigure, restoreListings, syncAll } from './reconfigure.ts';
import { isRefsSource } from './refGroup.ts';
import { lastState, restoredRecord } from './restore.ts';
import { createRetention } from './retention.ts';
import { commitsOf, leased, listingOf, publish, record, siblingsServe, type Worker } from './served.ts';
import { type RepositoryOnUse, repositoryOnUse, storeDirOf } from './source.ts';
import { openStateFile } from './dataDir/state.ts';
import { liveStatusOf, statusReportOf } from './status.ts';
import { syncHere } from './step.ts';

export type { Reconfigured } from './reconfigure.ts';

export interface SyncWorkerOptions extends FollowHooks {
  config: Config;
  catalog: Catalog;
  logger: Logger;
  /** Told after every sync how long it ran, waiting for its turn not counted (metrics). */
  onSynced?: (outcome: SyncOutcome, seconds: number) => void;
  clock?: Clock;
  /** File operations for state.json (tests make them fail like a full disk). */
  fs?: WriteFs;
  /**
   * This process on the dataDir (its process file and source leases), given up when the worker stops; absent:
   * the worker joins as a `serve`. A `sync` asks the lease holders of sources it does not lease to sync them.
   */
  membership?: Membership;
  /** How long a sync asked of another process's lease waits for its publication (`skillpin sync --wait`). */
  askedWaitMs?: number;
  /**
   * Replicas on other machines (Redis): one polls each source and publishes what it resolves, a webhook at one
   * reaches all. Closed when the worker stops. Absent: this process follows its sources on its own.
   */
  coordination?: Coordination;
}

export interface SyncWorker {
  /** Serves what dataDir holds, without the network; a lost state.json is rebuilt from the index files and pins. */
  restore(): Promise<void>;
  /** Syncs the sources `which` selects (default all) now; afterwards each polls and retries on its own. */
  syncAll(why: string, which?: (source: SourceConfig) => boolean): Promise<SyncOutcome[]>;
  /** Syncs one source now, merged with a sync of it that is running. `undefined` for an unknown id or once stopped. */
  trigger(id: string, why: string): Promise<SyncOutcome> | undefined;
  /** The live status of every source. */
  status(): StatusReport;
  /** Ids of the sources no sync has finished for since this worker started. */
  pending(): string[];
  /**
   * Serves `next` instead of the config it runs: added sources start, removed ones stop (their retained commits stop
   * serving too), changed ones restart (keeping what they served while their repository is the same); one catalog
   * swap. Resolves once swapped; the added and changed sources' first syncs follow. Calls are applied one at a time.
   */
  reconfigure(next: Config): Promise<Reconfigured>;
  /**
   * Stops polls and retries and ends every git process of every source, so a running sync (a hanging remote
   * included) ends at once; what a sync ends with after this is not recorded (the next start redoes it).
   */
  stop(): Promise<void>;
}

/**
 * The sync worker wires, per source, a follower (when to sync), the source object (how), retention (what
 * stays) to state.json (what is remembered) and the catalog (what is served). A failure costs only its source,
 * and the last good commit keeps serving. One sync reads top to bottom: `sync` here (where it runs), `syncHere`
 * in step.ts (the step), source.ts (git and the index), landing in served.ts (record, publish, persist).
 */
export function createSyncWorker(options: SyncWorkerOptions): SyncWorker {
  const w = workerOf(options);
  w.coordination?.follow(options.config.sources, w.replicaEvents);
  const watching = watchOthers(w);
  let reconfiguring: Promise<unknown> = Promise.resolve();
  return {
    restore: () => restore(w),
    syncAll: (why, which) => syncAll(w, why, which),
    trigger(id, why) {
      const followed = w.running.followed.get(id);
      if (followed === undefined) return undefined;
      w.asked.add(id);
      // Asked here (a webhook, `skillpin sync`): asked of every replica.
      w.coordination?.announce(id, why);
      return followed.follower.trigger(why);
    },
    reconfigure(next) {
      const done = reconfiguring.then(() => reconfigure(w, next));
      reconfiguring = done.catch(() => undefined);
      return done;
    },
    status: () => status(w),
    pending: () => [...w.records].flatMap(([id, r]) => (r.tried ? [] : [id])),
    async stop() {
      watching.close();
      await reconfiguring;
      w.stopped = true;
      await unfollow([...w.running.followed.values()], { now: true });
      await w.coordination?.close();
      w.membership.leave();
    },
  };
}

/** The worker's state at its start: every source followed, none tried. */
function workerOf(options: SyncWorkerOptions): Worker {
  const { logger, config } = options;
  // dataDir is the one setting a reconfigure cannot change: this process's file and leases are there.
  const membership = options.membership ?? joinDataDir(config, { command: 'serve' }, logger);
  const stores = new Map<string, RepositoryOnUse>();
  const searches = heldSearches();
  const w: Worker = {
    catalog: options.catalog,
    logger,
    clock: options.clock ?? systemClock,
    membership,
    coordination: options.coordination,
    stateFile: openStateFile(membership.dataDir, options.fs),
    queue: new PQueue({ concurrency: config.sync.concurrency }),
    storeTurn: oneAtATimePer(),
    damage: createDamageLedger(),
    retention: createRetention({
      logger,
      holds: (id) => membership.holds(id),
      serving: (id) => new Set(commitsOf(w.records.get(id)?.served)),
      elsewhere: (followed) =>
        new Set([...membership.servedElsewhere(followed.config.id), ...siblingsServe(w, followed)]),
    }),
    onSynced: options.onSynced,
    askedWaitMs: options.askedWaitMs,
    asked: new Set(),
    aloneAt: new Map(),
    replicaEvents: {
      // What the other replicas ask: the process on this dataDir that holds a source's lease syncs it.
      triggered(id, why) {
        if (membership.holds(id)) void w.running.followed.get(id)?.follower.trigger(why);
      },
    } satisfies CoordinationEvents,
    follow: (source, running) =>
      followSource(source, running, {
        dataDir: membership.dataDir,
        clock: w.clock,
        sync: (followed, why) => sync(w, followed, why),
        onDamage: (id, found) => reportDamage(w, id, found),
        onRefused: (id, error) =>
          w.logger.warn(
            { source: id, file: error.file, reason: error.reason },
            `an index file is damaged and rebuilt from git: ${error.message}`,
          ),
        onSearchUnsaved: (id, error) =>
          w.logger.warn(
            { source: id },
            `a search index could not be saved in dataDir (it is built again at the next start): ${osReason(error)}`,
          ),
        hooks: options,
        shared: (sourceConfig) => sharedStore(w, stores, sourceConfig),
        searches,
      }),
    records: new Map(config.sources.map((s) => [s.id, { tried: false }])),
    listings: new Map(),
    running: { config, followed: new Map() },
    base: config,
    stopped: false,
  };
  w.running = { config, followed: new Map(config.sources.map((s) => [s.id, w.follow(s, config)])) };
  return w;
}

/**
 * One sync of a source: by this process when it holds (or takes) the source's lease, else what the holder
 * published is served; asked for (webhook, `skillpin sync`), the holder is asked and its publication awaited.
 */
async function sync(w: Worker, followed: Followed, why: string): Promise<SyncOutcome> {
  if (isRefsSource(followed.config)) return syncGroup(w, followed, why);
  const ask = w.asked.delete(followed.config.id);
  if (await leased(w, followed)) return syncHere(w, followed, why);
  if (!ask) return adopt(w, followed);
  const asked = await askHolder(w, followed, why);
  return asked === 'taken' ? syncHere(w, followed, why) : asked;
}

/** A read found a served commit damaged: reported at once, and a sync repairs it. */
function reportDamage(w: Worker, id: string, found: Damage): void {
  if (!w.damage.report(id, found, new Date(w.clock.now()).toISOString())) return;
  w.logger.warn({ source: id, commit: found.commit, kind: found.kind, log: found.log }, found.detail);
  publish(w);
  // Repaired under the lease: by this process, or asked of the one that holds it.
  w.asked.add(id);
  void w.running.followed.get(id)?.follower.trigger('store damaged');
}

/**
 * The store a `refs:` source shares with its refs (opened by the source, or, served from a lockfile without it,
 * by its first ref), and what each ref names at the source's last listing; `undefined` for a source of its own.
 */
function sharedStore(w: Worker, stores: Map<string, RepositoryOnUse>, source: SourceConfig) {
  const dataDir = w.membership.dataDir;
  if (isRefsSource(source)) {
    const repository = repositoryOnUse(source, storeDirOf(dataDir, source));
    stores.set(source.id, repository);
    return { repository };
  }
  const { group } = source;
  if (group === undefined) return undefined;
  if (!stores.has(group.id)) stores.set(group.id, repositoryOnUse(source, storeDirOf(dataDir, source)));
  return {
    repository: stores.get(group.id)!,
    listed: (ref: string) => resolvedOf(listingOf(w, group.id), ref),
  };
}

/** Serves what dataDir holds, without the network (see SyncWorker.restore). */
async function restore(w: Worker): Promise<void> {
  // Leases first: a source this process will write is swept before its store is read.
  for (const followed of w.running.followed.values()) await leased(w, followed);
  const { sources } = await lastState(w.stateFile, w.logger);
  restoreListings(w, sources);
  const next = expanded(w);
  const was = w.running.followed;
  w.running = {
    config: next,
    followed: new Map(next.sources.map((s) => [s.id, was.get(s.id) ?? w.follow(s, next)])),
  };
  w.records = new Map(next.sources.map((s) => [s.id, w.records.get(s.id) ?? { tried: false }]));
  w.membership.reconfigure(next);
  for (const followed of w.running.followed.values()) await leased(w, followed);
  for (const followed of w.running.followed.values()) {
    const restored = await restoredRecord(followed, sources[followed.source.id], w.logger);
    record(w, followed.source.id, restored.record, restored.dropped);
  }
  publish(w);
}

/** The live status of every source, with what the replicas serve when they coordinate. */
function status(w: Worker): StatusReport {
  const { coordination, records, damage } = w;
  const of = (followed: Followed) => liveStatusOf(followed, records.get(followed.source.id)!, damage);
  const report = statusReportOf([...w.running.followed.values()].map(of));
  if (coordination === undefined) return report;
  const sources = report.sources.map((source) => {
    const replicas = coordination.replicas(source.id);
    return replicas === undefined ? source : { ...source, replicas };
  });
  return { ...report, sources, coordination: coordination.status() };
}

/**
 * Watches the other processes on the dataDir: a publication triggers the sources whose state.json entry
 * changed (each serves what its holder published), an ask the sources this process holds, a lease given up the
 * sources a follower may take.
 */
function watchOthers(w: Worker): { close(): void } {
  const { membership } = w;
  let seen = new Map<string, string>();
  const adoptChanged = async () => {
    const { state } = await w.stateFile.read();
    const before = seen;
    seen = new Map(Object.entries(state.sources).map(([id, entry]) => [id, JSON.stringify(entry)]));
    for (const [id, followed] of w.running.followed)
      if (seen.get(id) !== before.get(id) && !membership.holds(id))
        void followed.follower.trigger('published by another process');
  };
  return watchDataDir(membership.dataDir, {
    published: () => void adoptChanged(),
    asked(id) {
      if (membership.holds(id)) void w.running.followed.get(id)?.follower.trigger('asked by another process');
    },
    freed(id) {
      if (!membership.holds(id)) void w.running.followed.get(id)?.follower.trigger('lease given up');
    },
  });
}
