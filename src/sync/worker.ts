import { isDeepStrictEqual } from 'node:util';
import PQueue from 'p-queue';
import type { Catalog } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import type { ResolvedRef } from '../git/index.ts';
import type { WriteFs } from '../shared/fs.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import { catalogStateOf } from './catalogState.ts';
import type { Reconfigured } from './changes.ts';
import { systemClock, type Clock } from './clock.ts';
import { createDamageLedger, type Damage } from './damage.ts';
import { type Followed, type FollowHooks, followSource, unfollow } from './followed.ts';
import type { SyncOutcome } from '../shared/status.ts';
import { liveStatusOf } from './liveStatus.ts';
import { joinDataDir, leaseHolder, type Membership } from './membership.ts';
import { statePersister } from './persist.ts';
import { askSync, watchDataDir } from './publications.ts';
import { restartChanged, type Running } from './reconfigure.ts';
import { lastState, restoredRecord } from './restart.ts';
import { openStateFile, type SourceState } from './state.ts';
import type { StatusReport } from '../shared/status.ts';
import { statusReportOf } from './status.ts';
import { type SourceRecord, syncSource } from './step.ts';
import { timedStep } from './timed.ts';
import { adoptPublished } from './adopt.ts';
import { coordinatedStep } from './coordinated.ts';
import type { Coordination, CoordinationEvents } from './coordination.ts';
import { waitForPublication } from './asked.ts';
import { listGroup, resolvedOf } from './groupStep.ts';
import {
  arrangedSources,
  EMPTY_LISTING,
  expandedSources,
  type GroupListing,
  isRefsSource,
} from './refGroup.ts';
import { type RepositoryOnUse, repositoryOnUse } from './repository.ts';
import { storeDirOf } from './source.ts';
import { oneAtATimePer } from '../shared/serial.ts';

export type { Reconfigured } from './changes.ts';

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
 * and the last good commit keeps serving.
 */
export function createSyncWorker(options: SyncWorkerOptions): SyncWorker {
  const { catalog, logger, coordination } = options;
  // dataDir is the one setting a reconfigure cannot change: this process's file and leases are there.
  const clock = options.clock ?? systemClock;
  const membership = options.membership ?? joinDataDir(options.config, { command: 'serve' }, logger);
  const { dataDir } = membership;
  const at = () => new Date(clock.now()).toISOString();
  const stateFile = openStateFile(dataDir, options.fs);
  const queue = new PQueue({ concurrency: options.config.sync.concurrency });
  let records: ReadonlyMap<string, SourceRecord> = new Map(
    options.config.sources.map((s) => [s.id, { tried: false }]),
  );
  const record = (id: string, next: SourceRecord) => {
    records = new Map(records).set(id, next);
  };
  const damage = createDamageLedger();

  /** What each `refs:` source listed last (its refs are sources of their own), and the store they share. */
  let listings: ReadonlyMap<string, GroupListing> = new Map();
  const stores = new Map<string, RepositoryOnUse>();
  const listingOf = (id: string) => records.get(id)?.listing ?? listings.get(id) ?? EMPTY_LISTING;

  const publish = () => {
    const state = catalogStateOf(records, damage);
    const groupOf = new Map(running.config.sources.map((s) => [s.id, s.group?.id]));
    catalog.swap({
      sources: arrangedSources(state.sources, running.config.sources, listings),
      failures: state.failures.map((f) => {
        const group = groupOf.get(f.id);
        return group === undefined ? f : { ...f, group };
      }),
    });
    const served = [...records].map(([id, r]) => [
      id,
      r.served === undefined ? [] : [r.served.current, ...r.served.retained].map((ns) => ns.commit),
    ]);
    try {
      membership.serving(Object.fromEntries(served));
    } catch (error) {
      logger.warn({ err: messageOf(error) }, 'could not write this process file in dataDir/processes');
    }
    coordination?.report(Object.fromEntries([...records].map(([id, r]) => [id, r.served?.current.commit])));
  };

  /** A read found a served commit damaged: reported at once, and a sync repairs it. */
  const reportDamage = (id: string, found: Damage) => {
    if (!damage.report(id, found, at())) return;
    logger.warn({ source: id, commit: found.commit, kind: found.kind, log: found.log }, found.detail);
    publish();
    // Repaired under the lease: by this process, or asked of the one that holds it.
    asked.add(id);
    void running.followed.get(id)?.follower.trigger('store damaged');
  };

  /** Commits the other refs of `id`'s `refs:` source serve: their shared store keeps them pinned. */
  const siblingsServe = (id: string): Set<string> => {
    const group = running.config.sources.find((s) => s.id === id)?.group?.id;
    if (group === undefined) return new Set();
    return new Set(
      running.config.sources
        .filter((s) => s.id !== id && s.group?.id === group)
        .flatMap((s) => {
          const served = records.get(s.id)?.served;
          return served === undefined ? [] : [served.current, ...served.retained].map((ns) => ns.commit);
        }),
    );
  };
  const persist = statePersister(stateFile, logger, () => records, membership, siblingsServe);

  /**
   * A ref of a `refs:` source that stopped being served (deleted, past keep) forgets its commits, but for the
   * ones another ref or another process still serves.
   */
  const forgetRemovedRefs = async (removed: Array<[Followed, SourceRecord | undefined]>) => {
    for (const [followed, record] of removed) {
      const { id, group } = followed.config;
      if (group === undefined || record?.served === undefined || !membership.holds(id)) continue;
      const still = new Set([...siblingsServe(id), ...membership.servedElsewhere(id)]);
      for (const ns of [record.served.current, ...record.served.retained])
        if (!still.has(ns.commit))
          await followed.source
            .forget(ns.commit)
            .catch((error: unknown) =>
              logger.warn(
                { source: id, commit: ns.commit, err: messageOf(error) },
                'could not forget a commit',
              ),
            );
    }
  };
  /** Sources a webhook or `skillpin sync` asked for: their holder is asked when it is another process. */
  const asked = new Set<string>();
  const entryOf = async (id: string): Promise<SourceState | undefined> =>
    (await stateFile.read()).state.sources[id];

  let stopped = false;

  /** Serves what another process published of `followed`; one swap when it differs from what is served. */
  const adopt = async (followed: Followed): Promise<SyncOutcome> => {
    const { id } = followed.config;
    const done = await adoptPublished(followed, records.get(id)!, await entryOf(id), logger);
    record(id, done.record);
    if (done.changed) publish();
    return done.outcome;
  };

  /** The holder asked did not publish in time: what is served stays, and the outcome says so. */
  const notPublished = async (followed: Followed): Promise<SyncOutcome> => {
    const outcome = await adopt(followed);
    const holder = leaseHolder(dataDir, followed.config.id);
    const detail = `skillpin ${holder?.command ?? 'process'} (pid ${holder?.pid ?? '?'}) holds this source's lease and did not publish a sync in time`;
    const serving = records.get(followed.config.id)!.served?.current.commit;
    return outcome.ok || outcome.reason === 'source-pending'
      ? {
          id: followed.config.id,
          ok: false,
          reason: 'source-pending',
          detail,
          ...(serving === undefined ? {} : { serving }),
        }
      : outcome;
  };

  /** Takes `followed`'s lease unless held: a new holder first sweeps what a gone one's transfer left. */
  const lease = async (followed: Followed): Promise<boolean> => {
    const { id } = followed.config;
    if (membership.holds(id)) return true;
    if (!membership.lease(id).ours) return false;
    const removed = await followed.source.sweep();
    if (removed.length > 0)
      logger.warn({ source: id, removed }, 'removed what an interrupted transfer left in the store');
    return true;
  };

  /**
   * One sync of a source: by this process when it holds (or takes) the source's lease, else what the holder
   * published is served; asked for (webhook, `skillpin sync`), the holder is asked and its publication awaited.
   */
  const sync = async (followed: Followed, why: string): Promise<SyncOutcome> => {
    const { id } = followed.config;
    if (isRefsSource(followed.config)) return syncGroup(followed, why);
    const ask = asked.delete(id);
    if (await lease(followed)) return syncHere(followed, why);
    if (ask) {
      const before = (await entryOf(id))?.lastSync;
      await askSync(dataDir, id, membership.holder, why);
      const waited = await waitForPublication(
        () => entryOf(id),
        before,
        () => lease(followed),
        options.askedWaitMs,
        followed.config,
      );
      if (waited === 'taken') return syncHere(followed, why);
      if (waited === 'timeout') return notPublished(followed);
    }
    return adopt(followed);
  };

  /** When each source was last resolved by this replica alone (coordination down): older hints are not taken. */
  const aloneAt = new Map<string, number>();

  /** One sync of a source in its turn, under its lease: then recorded, served, and written to state.json. */
  const syncHere = async (followed: Followed, why: string): Promise<SyncOutcome> => {
    const { source, retention } = followed;
    const { id, keep, group } = followed.config;
    const run = (resolve: () => Promise<ResolvedRef>) =>
      syncSource(source, records.get(id)!, { keep, why, at, logger, damaged: damage.of(id), resolve });
    const coordinatedRun = () =>
      coordinatedStep(followed, run, {
        coordination,
        logger,
        serving: records.get(id)!.served?.current.commit,
        aloneAt: aloneAt.get(id),
        onAlone: () => aloneAt.set(id, clock.now()),
      });
    // Timed from its turn in the queue: waiting for it is not counted. The refs of one `refs:` source fetch
    // into one store, one at a time.
    const turn = () => queue.add(() => timedStep(coordinatedRun, options.onSynced));
    const step = (await (group === undefined ? turn() : inStoreTurn(group.id, turn)))!;
    if (stopped) return step.outcome;
    retention.drop(step.dropped);
    record(id, step.record);
    damage.repaired(id, step.repaired);
    publish();
    await persist([followed]);
    return step.outcome;
  };
  /** Runs a step after every step of the same store asked for before it. */
  const inStoreTurn = oneAtATimePer();

  /**
   * One sync of a `refs:` source: one listing of its refs (by the holder of its lease; another process serves
   * what the holder published), the refs' sources started and stopped to match, then each ref synced in turn.
   */
  const syncGroup = async (followed: Followed, why: string): Promise<SyncOutcome> => {
    const { id } = followed.config;
    asked.delete(id);
    let outcome: SyncOutcome;
    if (await lease(followed)) {
      const taken = new Set(running.config.sources.filter((s) => s.group?.id !== id).map((s) => s.id));
      const run = async () => {
        const step = await listGroup(followed.source, followed.config, records.get(id)!, {
          why,
          at,
          logger,
          taken,
        });
        return { ...step, dropped: [], repaired: [] };
      };
      const step = (await queue.add(() => timedStep(run, options.onSynced)))!;
      if (stopped) return step.outcome;
      record(id, step.record);
      outcome = step.outcome;
    } else {
      const entry = await entryOf(id);
      const before = records.get(id)!;
      record(id, {
        ...before,
        tried: true,
        ...(entry?.listing === undefined ? {} : { listing: entry.listing }),
      });
      const serving = entry?.listing?.refs[0]?.commit;
      outcome =
        entry?.listing === undefined
          ? {
              id,
              ok: false,
              reason: 'source-pending',
              detail:
                'another skillpin process on this dataDir lists this source and has not published it yet',
            }
          : { id, ok: true, commit: serving ?? '', changed: false };
    }
    await applyListings();
    await persist([followed]);
    // Each ref syncs in turn; one that fails reports on its own line (status, skillpin sync) and retries with its
    // source's next listing, which keeps its poll: a broken tag never slows how soon a new one is served.
    for (const ref of [...listingOf(id).refs, ...listingOf(id).gone])
      await running.followed.get(ref.id)?.follower.trigger(why);
    return outcome;
  };

  const follow = (source: SourceConfig, config: Config) =>
    followSource(source, config, {
      dataDir,
      logger,
      clock,
      sync,
      onDamage: reportDamage,
      hooks: options,
      shared(sourceConfig) {
        if (isRefsSource(sourceConfig)) {
          const repository = repositoryOnUse(sourceConfig, storeDirOf(dataDir, sourceConfig));
          stores.set(sourceConfig.id, repository);
          return { repository };
        }
        const { group } = sourceConfig;
        if (group === undefined) return undefined;
        // Served from a lockfile, the refs run without their `refs:` source: the first opens the store.
        if (!stores.has(group.id))
          stores.set(group.id, repositoryOnUse(sourceConfig, storeDirOf(dataDir, sourceConfig)));
        return {
          repository: stores.get(group.id)!,
          listed: (ref: string) => resolvedOf(listingOf(group.id), ref),
        };
      },
    });
  let running: Running = {
    config: options.config,
    followed: new Map(options.config.sources.map((source) => [source.id, follow(source, options.config)])),
  };
  /** What the other replicas ask: the process on this dataDir that holds a source's lease syncs it. */
  const replicaEvents: CoordinationEvents = {
    triggered(id, why) {
      if (membership.holds(id)) void running.followed.get(id)?.follower.trigger(why);
    },
  };
  coordination?.follow(options.config.sources, replicaEvents);

  /** The config running: `base` with the sources of each `refs:` source's refs after it. */
  let base = options.config;
  const expanded = (): Config => ({ ...base, sources: expandedSources(base.sources, listings) });

  /** Starts and stops the refs' sources to match what each `refs:` source listed last; one catalog swap. */
  const applyListings = async () => {
    const next = new Map<string, GroupListing>();
    for (const source of base.sources.filter(isRefsSource)) next.set(source.id, listingOf(source.id));
    listings = next;
    // Refs added, removed or their settings changed: their sources start and stop; else the order may move.
    if (isDeepStrictEqual(expanded().sources, running.config.sources)) publish();
    else await apply(expanded());
  };

  const reconfigure = async (next: Config): Promise<Reconfigured> => {
    base = next;
    listings = new Map(
      [...listings].filter(([id]) => next.sources.some((s) => s.id === id && isRefsSource(s))),
    );
    return apply(expanded());
  };

  const apply = async (next: Config): Promise<Reconfigured> => {
    membership.reconfigure(next);
    const was = { running, records };
    const restarted = await restartChanged(running, next, follow, (id) => records.get(id)?.served, logger);
    const { changes, starting } = restarted;
    queue.concurrency = next.sync.concurrency;
    running = restarted.running;
    coordination?.follow(next.sources, replicaEvents);
    records = new Map(
      next.sources.map((s) => [s.id, starting.get(s.id) ?? records.get(s.id) ?? { tried: false }]),
    );
    publish();
    await persist(
      changes.changed.map((id) => running.followed.get(id)!),
      changes.removed,
    );
    await forgetRemovedRefs(
      changes.removed.map((id) => [was.running.followed.get(id)!, was.records.get(id)]),
    );
    for (const id of changes.removed) membership.release(id);
    void syncAll('reload', (source) => starting.has(source.id));
    return changes;
  };
  let reconfiguring: Promise<unknown> = Promise.resolve();

  const syncAll = (why: string, which: (source: SourceConfig) => boolean = () => true) => {
    const { config, followed } = running;
    // The refs of a `refs:` source are synced by its sync, in turn (locked refs run without it).
    const chosen = config.sources.filter(
      (source) => (source.group === undefined || !followed.has(source.group.id)) && which(source),
    );
    // `skillpin sync` asks for a sync of every source; a server's start serves what the holders publish.
    if (membership.role.command === 'sync') for (const source of chosen) asked.add(source.id);
    return Promise.all(chosen.flatMap((source) => followed.get(source.id)!.follower.trigger(why) ?? []));
  };

  const watching = watchDataDir(dataDir, {
    published: () => void adoptChanged(),
    asked(id) {
      if (membership.holds(id)) void running.followed.get(id)?.follower.trigger('asked by another process');
    },
    freed(id) {
      if (!membership.holds(id)) void running.followed.get(id)?.follower.trigger('lease given up');
    },
  });
  /** The entries of state.json last seen: a publication triggers the sources whose entry changed. */
  let seen = new Map<string, string>();
  const adoptChanged = async () => {
    const { state } = await stateFile.read();
    const before = seen;
    seen = new Map(Object.entries(state.sources).map(([id, entry]) => [id, JSON.stringify(entry)]));
    for (const [id, followed] of running.followed)
      if (seen.get(id) !== before.get(id) && !membership.holds(id))
        void followed.follower.trigger('published by another process');
  };

  return {
    async restore() {
      // Leases first: a source this process will write is swept before its store is read.
      for (const followed of running.followed.values()) await lease(followed);
      const { sources } = await lastState(stateFile, logger);
      // Each `refs:` source's refs as it listed them last: their sources start without the network.
      listings = new Map(
        base.sources.filter(isRefsSource).map((s) => [s.id, sources[s.id]?.listing ?? EMPTY_LISTING]),
      );
      const next = expanded();
      running = {
        config: next,
        followed: new Map(next.sources.map((s) => [s.id, running.followed.get(s.id) ?? follow(s, next)])),
      };
      records = new Map(next.sources.map((s) => [s.id, records.get(s.id) ?? { tried: false }]));
      membership.reconfigure(next);
      for (const followed of running.followed.values()) await lease(followed);
      for (const followed of running.followed.values())
        record(followed.source.id, await restoredRecord(followed, sources[followed.source.id], logger));
      publish();
    },
    syncAll,
    trigger(id, why) {
      if (!running.followed.has(id)) return undefined;
      asked.add(id);
      // Asked here (a webhook, `skillpin sync`): asked of every replica.
      coordination?.announce(id, why);
      return running.followed.get(id)?.follower.trigger(why);
    },
    reconfigure(next) {
      const done = reconfiguring.then(() => reconfigure(next));
      reconfiguring = done.catch(() => undefined);
      return done;
    },
    status() {
      const of = (followed: Followed) => liveStatusOf(followed, records.get(followed.source.id)!, damage);
      const report = statusReportOf([...running.followed.values()].map(of));
      if (coordination === undefined) return report;
      const sources = report.sources.map((source) => {
        const replicas = coordination.replicas(source.id);
        return replicas === undefined ? source : { ...source, replicas };
      });
      return { ...report, sources, coordination: coordination.status() };
    },
    pending() {
      return [...records].flatMap(([id, r]) => (r.tried ? [] : [id]));
    },
    async stop() {
      watching.close();
      await reconfiguring;
      stopped = true;
      await unfollow([...running.followed.values()], { now: true });
      await coordination?.close();
      membership.leave();
    },
  };
}
