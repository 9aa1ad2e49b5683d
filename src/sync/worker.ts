import PQueue from 'p-queue';
import type { Catalog } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import type { WriteFs } from '../shared/fs.ts';
import type { Logger } from '../shared/log.ts';
import { catalogStateOf } from './catalogState.ts';
import type { Reconfigured } from './changes.ts';
import { systemClock, type Clock } from './clock.ts';
import { createDamageLedger, type Damage } from './damage.ts';
import { type Followed, type FollowHooks, followSource, unfollow } from './followed.ts';
import type { SyncOutcome } from './follower.ts';
import { liveStatusOf } from './liveStatus.ts';
import { statePersister } from './persist.ts';
import { restartChanged, type Running } from './reconfigure.ts';
import { lastState, restoredRecord } from './restart.ts';
import { openStateFile } from './state.ts';
import { reportOf, type StatusReport } from './status.ts';
import { syncSource, type SourceRecord } from './step.ts';
import { timedStep } from './timed.ts';

export type { Reconfigured } from './changes.ts';
export type { SyncOutcome } from './follower.ts';

export interface SyncWorkerOptions extends FollowHooks {
  config: Config;
  catalog: Catalog;
  logger: Logger;
  /** Told after every sync how long it ran, waiting for its turn not counted (metrics). */
  onSynced?: (outcome: SyncOutcome, seconds: number) => void;
  clock?: Clock;
  /** File operations for state.json (tests make them fail like a full disk). */
  fs?: WriteFs;
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
  const { catalog, logger } = options;
  // dataDir is the one setting a reconfigure cannot change: this process holds its lock.
  const { dataDir } = options.config;
  const clock = options.clock ?? systemClock;
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

  const publish = () => catalog.swap(catalogStateOf(records, damage));

  /** A read found a served commit damaged: reported at once, and a sync repairs it. */
  const reportDamage = (id: string, found: Damage) => {
    if (!damage.report(id, found, at())) return;
    logger.warn({ source: id, commit: found.commit, kind: found.kind, log: found.log }, found.detail);
    publish();
    void running.followed.get(id)?.follower.trigger('store damaged');
  };

  const persist = statePersister(stateFile, logger, () => records);

  /** One sync of a source in its turn: then recorded, served, and written to state.json. */
  let stopped = false;
  const sync = async (followed: Followed, why: string): Promise<SyncOutcome> => {
    const { source, retention } = followed;
    const { id, keep } = followed.config;
    const run = () => syncSource(source, records.get(id)!, { keep, why, at, logger, damaged: damage.of(id) });
    // Timed from its turn in the queue: waiting for it is not counted.
    const step = (await queue.add(() => timedStep(run, options.onSynced)))!;
    if (stopped) return step.outcome;
    retention.drop(step.dropped);
    record(id, step.record);
    damage.repaired(id, step.repaired);
    publish();
    await persist(followed);
    return step.outcome;
  };
  const follow = (source: SourceConfig, config: Config) =>
    followSource(source, config, { dataDir, logger, clock, sync, onDamage: reportDamage, hooks: options });
  let running: Running = {
    config: options.config,
    followed: new Map(options.config.sources.map((source) => [source.id, follow(source, options.config)])),
  };

  const reconfigure = async (next: Config): Promise<Reconfigured> => {
    const restarted = await restartChanged(running, next, follow, (id) => records.get(id)?.served, logger);
    const { changes, starting } = restarted;
    queue.concurrency = next.sync.concurrency;
    running = restarted.running;
    records = new Map(
      next.sources.map((s) => [s.id, starting.get(s.id) ?? records.get(s.id) ?? { tried: false }]),
    );
    publish();
    await persist(...changes.changed.map((id) => running.followed.get(id)!));
    void syncAll('reload', (source) => starting.has(source.id));
    return changes;
  };
  let reconfiguring: Promise<unknown> = Promise.resolve();

  const syncAll = (why: string, which: (source: SourceConfig) => boolean = () => true) => {
    const { config, followed } = running;
    return Promise.all(
      config.sources.filter(which).flatMap((source) => followed.get(source.id)!.follower.trigger(why) ?? []),
    );
  };

  return {
    async restore() {
      const { sources } = await lastState(stateFile, logger);
      for (const followed of running.followed.values())
        record(followed.source.id, await restoredRecord(followed, sources[followed.source.id], logger));
      publish();
    },
    syncAll,
    trigger(id, why) {
      return running.followed.get(id)?.follower.trigger(why);
    },
    reconfigure(next) {
      const done = reconfiguring.then(() => reconfigure(next));
      reconfiguring = done.catch(() => undefined);
      return done;
    },
    status() {
      const of = (followed: Followed) => liveStatusOf(followed, records.get(followed.source.id)!, damage);
      return reportOf([...running.followed.values()].map(of));
    },
    pending() {
      return [...records].flatMap(([id, r]) => (r.tried ? [] : [id]));
    },
    async stop() {
      await reconfiguring;
      stopped = true;
      await unfollow([...running.followed.values()], { now: true });
    },
  };
}
