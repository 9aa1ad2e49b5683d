import PQueue from 'p-queue';
import type { Catalog, ServedSource } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import type { FetchProgress } from '../git/index.ts';
import type { IndexStore } from '../index/index.ts';
import type { WriteFs } from '../shared/fs.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import { systemClock, type Clock } from './clock.ts';
import type { Damage } from './damage.ts';
import { createFollower, type Follower, type SyncOutcome } from './follower.ts';
import { restoreServed } from './restore.ts';
import { createRetention, type Retention } from './retention.ts';
import { openSource, type Source } from './source.ts';
import { openStateFile, type SourceState, type SyncState } from './state.ts';
import { commitStatusOf, reportOf, type StatusReport } from './status.ts';
import { syncSource, type SourceRecord } from './step.ts';

export type { SyncOutcome } from './follower.ts';

export interface SyncWorkerOptions {
  config: Config;
  catalog: Catalog;
  logger: Logger;
  onProgress?: (source: string, progress: FetchProgress | { phase: 'indexing' }) => void;
  /** Told after every sync of every source: served, recorded, and the next poll or retry set. */
  onSettled?: (outcome: SyncOutcome) => void;
  clock?: Clock;
  /** Randomness for retry jitter (tests pass a fixed one). */
  random?: () => number;
  /** File operations for state.json, and the index files' store (tests make them fail like a full disk). */
  fs?: WriteFs;
  indexStore?: (dir: string) => IndexStore;
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
  /** Stops polls and retries; waits for running syncs. */
  stop(): Promise<void>;
}

interface Followed {
  config: SourceConfig;
  source: Source;
  follower: Follower;
  retention: Retention;
}

const commitsOf = (served: ServedSource | undefined) =>
  new Set(served === undefined ? [] : [served.current, ...served.retained].map((ns) => ns.commit));

/**
 * The sync worker wires, per source, a follower (when to sync), the source object (how), retention (what
 * stays) to state.json (what is remembered) and the catalog (what is served). A failure costs only its source,
 * and the last good commit keeps serving.
 */
export function createSyncWorker(options: SyncWorkerOptions): SyncWorker {
  const { config, catalog, logger } = options;
  const clock = options.clock ?? systemClock;
  const stateFile = openStateFile(config.dataDir, options.fs);
  const queue = new PQueue({ concurrency: config.sync.concurrency });
  let records: ReadonlyMap<string, SourceRecord> = new Map(
    config.sources.map((s) => [s.id, { tried: false }]),
  );
  const record = (id: string, next: SourceRecord) => {
    records = new Map(records).set(id, next);
  };
  /** Commits that reads or checks found damaged, per source, until a sync repairs them. */
  let damaged: ReadonlyMap<string, ReadonlyArray<Damage & { at: string }>> = new Map();
  /** What status shows of a damaged source: the damage, which its reads meet before anything else. */
  const damageError = (id: string) => {
    const first = damaged.get(id)?.[0];
    return first === undefined
      ? undefined
      : { reason: 'source-store-damaged' as const, detail: first.detail, at: first.at };
  };

  const publish = () => {
    catalog.swap({
      sources: [...records.values()].flatMap((r) => (r.served === undefined ? [] : [r.served])),
      failures: [...records].flatMap(([id, r]) => {
        const damage = damageError(id);
        if (damage !== undefined) return [{ id, reason: damage.reason, detail: damage.detail }];
        return r.failure === undefined ? [] : [r.failure];
      }),
    });
  };

  /** A read found a served commit damaged: reported at once, and a sync repairs it. */
  const reportDamage = (id: string, damage: Damage) => {
    const known = damaged.get(id) ?? [];
    if (known.some((d) => d.commit === damage.commit)) return;
    logger.warn({ source: id, commit: damage.commit, kind: damage.kind, log: damage.log }, damage.detail);
    damaged = new Map(damaged).set(id, [...known, { ...damage, at: new Date(clock.now()).toISOString() }]);
    publish();
    void followed.get(id)?.follower.trigger('store damaged');
  };
  /** Forgets the damage a sync repaired (damage reported while it ran, of other commits, stays). */
  const repairedIn = (id: string, commits: readonly string[]) => {
    if (commits.length === 0) return;
    const left = (damaged.get(id) ?? []).filter((d) => !commits.includes(d.commit));
    const next = new Map(damaged);
    if (left.length === 0) next.delete(id);
    else next.set(id, left);
    damaged = next;
  };

  const saved = (): SyncState => {
    const sources: Record<string, SourceState> = {};
    for (const [id, r] of records) {
      sources[id] = {
        ...(r.served === undefined ? {} : { current: r.served.current.commit }),
        retained: r.served?.retained.map((ns) => ns.commit) ?? [],
        ...(r.lastSync === undefined ? {} : { lastSync: r.lastSync }),
        ...(r.lastSuccess === undefined ? {} : { lastSuccess: r.lastSuccess }),
        ...(r.lastError === undefined ? {} : { lastError: r.lastError }),
      };
    }
    return { version: 1, sources };
  };

  /** Writes state.json, then forgets what fell out of retention: a crash in between restarts with it intact. */
  const persist = async (followed: Followed) => {
    try {
      await stateFile.write(saved());
    } catch (error) {
      logger.error({ err: messageOf(error), file: stateFile.file }, 'could not write state.json');
      return;
    }
    await followed.retention.forgetDropped(commitsOf(records.get(followed.config.id)!.served));
  };

  const follow = (sourceConfig: SourceConfig): Followed => {
    const { id } = sourceConfig;
    const source = openSource(sourceConfig, {
      dataDir: config.dataDir,
      onDamage: (damage) => reportDamage(id, damage),
      sweep: logger,
      ...(options.onProgress === undefined ? {} : { onProgress: (p) => options.onProgress?.(id, p) }),
      ...(options.indexStore === undefined ? {} : { indexStore: options.indexStore }),
    });
    const retention = createRetention(
      (commit) => source.forget(commit),
      (commit, error) =>
        logger.warn({ source: id, commit, err: messageOf(error) }, 'could not forget a commit'),
    );
    const followed: Followed = {
      config: sourceConfig,
      source,
      retention,
      follower: createFollower({
        async sync(why) {
          const step = (await queue.add(() =>
            syncSource(source, records.get(id)!, {
              keep: sourceConfig.keep,
              why,
              at: () => new Date(clock.now()).toISOString(),
              logger,
              damaged: damaged.get(id) ?? [],
            }),
          ))!;
          retention.drop(step.dropped);
          record(id, step.record);
          repairedIn(id, step.repaired);
          publish();
          await persist(followed);
          return step.outcome;
        },
        ...(sourceConfig.pollMs === undefined ? {} : { pollMs: sourceConfig.pollMs }),
        retryMinMs: config.sync.retryMinMs,
        retryMaxMs: config.sync.retryMaxMs,
        random: options.random ?? Math.random,
        clock,
        ...(options.onSettled === undefined ? {} : { onSettled: options.onSettled }),
      }),
    };
    return followed;
  };
  const followed = new Map(config.sources.map((source) => [source.id, follow(source)]));

  return {
    async restore() {
      const read = await stateFile.read();
      if (read.found === 'corrupt')
        logger.warn(
          { file: stateFile.file, detail: read.detail },
          'state.json is corrupt: rebuilding it from the index files and pins in dataDir',
        );
      for (const { config: sourceConfig, source, retention } of followed.values()) {
        const last = read.state.sources[source.id];
        const { served, dropped } = await restoreServed(source, sourceConfig, last, logger);
        retention.drop(dropped);
        record(source.id, {
          tried: false,
          ...(served === undefined ? {} : { served }),
          ...(last?.lastSync === undefined ? {} : { lastSync: last.lastSync }),
          ...(last?.lastSuccess === undefined ? {} : { lastSuccess: last.lastSuccess }),
          ...(last?.lastError === undefined ? {} : { lastError: last.lastError }),
        });
      }
      publish();
    },
    syncAll(why, which = () => true) {
      const chosen = config.sources.filter(which);
      return Promise.all(chosen.flatMap((source) => followed.get(source.id)!.follower.trigger(why) ?? []));
    },
    trigger(id, why) {
      return followed.get(id)?.follower.trigger(why);
    },
    status() {
      return reportOf(
        [...followed.values()].map(({ source, follower }) => {
          const r = records.get(source.id)!;
          return {
            id: source.id,
            repository: source.origin.repository,
            current: r.served === undefined ? null : commitStatusOf(r.served.current),
            retained: r.served?.retained.map(commitStatusOf) ?? [],
            syncing: follower.syncing,
            lastSync: r.lastSync ?? null,
            lastSuccess: r.lastSuccess ?? null,
            lastError: damageError(source.id) ?? r.lastError ?? null,
          };
        }),
      );
    },
    pending() {
      return [...records].flatMap(([id, r]) => (r.tried ? [] : [id]));
    },
    async stop() {
      await Promise.all([...followed.values()].map(({ follower }) => follower.stop()));
      // Ends each repository's git process and open pack files (a later read opens them again).
      await Promise.all([...followed.values()].map(({ source }) => source.close()));
    },
  };
}
