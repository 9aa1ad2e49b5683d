import PQueue from 'p-queue';
import type { Catalog, CatalogState, Namespace, ServedSource, SourceFailure } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import { GitError, type FetchProgress } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import { errnoReason, type SourceReason } from '../shared/reasons.ts';
import { forgetCommit, loadSource, resolveSource, restoreSource, type SourceContext } from './source.ts';
import { readState, writeState, type SourceState } from './state.ts';

/** What one sync of one source did. */
export type SyncOutcome =
  | { id: string; ok: true; commit: string; changed: boolean }
  | { id: string; ok: false; reason: SourceReason; detail: string; serving?: string };

export interface SyncWorkerOptions {
  config: Config;
  catalog: Catalog;
  logger: Logger;
  onProgress?: (source: string, progress: FetchProgress | { phase: 'indexing' }) => void;
  /** Randomness for retry jitter (tests pass a fixed one). */
  random?: () => number;
}

export interface SyncWorker {
  /** Serves what the last run served at once (from dataDir), then syncs every source; resolves when each source has served something or failed once. */
  start(): Promise<void>;
  /** Syncs one source now. Merged with a sync of it that is running or waiting. `undefined` for an unknown id. */
  trigger(id: string, why: string): Promise<SyncOutcome> | undefined;
  /** Syncs every source once, at most `sync.concurrency` at a time. */
  syncAll(why: string): Promise<SyncOutcome[]>;
  /** Stops polling and retries; waits for running syncs. */
  stop(): Promise<void>;
}

interface Tracked {
  source: SourceConfig;
  served?: ServedSource;
  failure?: SourceFailure;
  running?: Promise<SyncOutcome>;
  /** A trigger arrived while running: run once more right after. */
  again: boolean;
  attempt: number;
  timer?: NodeJS.Timeout;
  /** Commits that fell out of retention: forgotten once the state that no longer names them is on disk. */
  dropped: Namespace[];
  lastSync?: string;
  lastSuccess?: string;
}

/** Exponential backoff with jitter: min·2^(attempt-1), capped at max, times a factor in [0.5, 1.5). */
export function retryDelay(attempt: number, minMs: number, maxMs: number, random: () => number): number {
  const base = Math.min(maxMs, minMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.5 + random()));
}

function failureOf(id: string, error: unknown): SourceFailure {
  if (error instanceof GitError) return { id, reason: error.code, detail: error.message };
  const errno = errnoReason(error);
  if (errno !== undefined) return { id, ...errno };
  return { id, reason: 'source-internal', detail: 'unexpected error; see the log' };
}

/**
 * The sync worker: follows refs on a schedule, fetches and indexes new commits, keeps `keep` previous commits
 * serving, retries failures with backoff, and swaps each change into the catalog at once. A failure costs only
 * its source, and the last good commit keeps serving.
 */
export function createSyncWorker(options: SyncWorkerOptions): SyncWorker {
  const { config, catalog, logger } = options;
  const random = options.random ?? Math.random;
  const ctx: SourceContext = {
    dataDir: config.dataDir,
    caches: new Map(),
    ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
  };
  const queue = new PQueue({ concurrency: config.sync.concurrency });
  const tracked = new Map<string, Tracked>(
    config.sources.map((source) => [source.id, { source, again: false, attempt: 0, dropped: [] }]),
  );
  let stopped = false;

  const publish = () => {
    const next: CatalogState = {
      sources: [...tracked.values()].flatMap((t) => (t.served === undefined ? [] : [t.served])),
      failures: [...tracked.values()].flatMap((t) => (t.failure === undefined ? [] : [t.failure])),
    };
    catalog.swap(next);
  };

  const persist = async () => {
    const sources: Record<string, SourceState> = {};
    for (const [id, t] of tracked) {
      sources[id] = {
        ...(t.served === undefined ? {} : { current: t.served.current.commit }),
        retained: t.served?.retained.map((ns) => ns.commit) ?? [],
        ...(t.lastSync === undefined ? {} : { lastSync: t.lastSync }),
        ...(t.lastSuccess === undefined ? {} : { lastSuccess: t.lastSuccess }),
        ...(t.failure === undefined || t.lastSync === undefined
          ? {}
          : { lastError: { reason: t.failure.reason, detail: t.failure.detail, at: t.lastSync } }),
      };
    }
    await writeState(config.dataDir, { version: 1, sources });
  };

  const schedule = (t: Tracked, delayMs: number | undefined) => {
    clearTimeout(t.timer);
    t.timer = undefined;
    if (stopped || delayMs === undefined) return;
    t.timer = setTimeout(() => void run(t, 'schedule'), delayMs);
    t.timer.unref();
  };

  /** The new served set after `ns` became current, and the namespaces that fell out of retention. */
  const advance = (t: Tracked, ns: Namespace): { served: ServedSource; dropped: Namespace[] } => {
    const previous = t.served === undefined ? [] : [t.served.current, ...t.served.retained];
    const others = previous.filter((old) => old.commit !== ns.commit);
    const retained = others.slice(0, t.source.keep);
    return { served: { id: t.source.id, current: ns, retained }, dropped: others.slice(t.source.keep) };
  };

  const syncOnce = async (t: Tracked, why: string): Promise<SyncOutcome> => {
    const { source } = t;
    const started = performance.now();
    try {
      const commit = await resolveSource(source, ctx);
      if (t.served?.current.commit === commit) {
        t.failure = undefined;
        return { id: source.id, ok: true, commit, changed: false };
      }
      const ns = await loadSource(source, ctx, commit, t.served?.current.commit);
      const { served, dropped } = advance(t, ns);
      t.served = served;
      t.failure = undefined;
      t.dropped.push(...dropped);
      logger.info(
        {
          source: source.id,
          commit,
          why,
          skills: ns.skills.length,
          problems: ns.problems.length,
          retained: served.retained.map((r) => r.commit),
          ms: Math.round(performance.now() - started),
        },
        'source updated',
      );
      for (const p of ns.problems)
        logger.warn(
          { source: source.id, commit, path: p.path, reason: p.reason, severity: p.severity },
          p.detail,
        );
      return { id: source.id, ok: true, commit, changed: true };
    } catch (error) {
      const failure = failureOf(source.id, error);
      t.failure = failure;
      logger.error(
        {
          source: source.id,
          reason: failure.reason,
          why,
          serving: t.served?.current.commit ?? null,
          ...(failure.reason === 'source-internal' ? { err: (error as Error).message } : {}),
        },
        failure.detail,
      );
      return {
        id: source.id,
        ok: false,
        reason: failure.reason,
        detail: failure.detail,
        ...(t.served === undefined ? {} : { serving: t.served.current.commit }),
      };
    }
  };

  /** After a sync: schedule the next poll or retry, swap the catalog, record the state. */
  const settle = async (t: Tracked, outcome: SyncOutcome) => {
    t.lastSync = new Date().toISOString();
    if (outcome.ok) {
      t.lastSuccess = t.lastSync;
      t.attempt = 0;
      schedule(t, t.source.pollMs);
    } else {
      t.attempt++;
      schedule(t, retryDelay(t.attempt, config.sync.retryMinMs, config.sync.retryMaxMs, random));
    }
    publish();
    try {
      await persist();
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'could not write dataDir/state.json');
      return;
    }
    // Only now that state.json no longer names them: a crash before this point restarts with them intact.
    for (const old of t.dropped.splice(0)) {
      await forgetCommit(t.source, ctx, old.commit).catch((error: unknown) =>
        logger.warn(
          { source: t.source.id, commit: old.commit, err: (error as Error).message },
          'could not forget a commit',
        ),
      );
    }
  };

  const run = (t: Tracked, why: string): Promise<SyncOutcome> => {
    // One sync per source at a time; a trigger during one is merged into a single follow-up run.
    if (t.running !== undefined) {
      t.again = true;
      return t.running;
    }
    clearTimeout(t.timer);
    t.timer = undefined;
    t.running = (async () => {
      let outcome: SyncOutcome;
      let reason = why;
      do {
        t.again = false;
        outcome = (await queue.add(() => syncOnce(t, reason))) as SyncOutcome;
        await settle(t, outcome);
        reason = 'triggered while syncing';
      } while (t.again && !stopped);
      // Cleared in the same step as the last check of `again`, so no trigger falls between the two.
      t.running = undefined;
      return outcome;
    })();
    return t.running;
  };

  return {
    async start() {
      const previous = await readState(config.dataDir);
      for (const t of tracked.values()) {
        const saved = previous.sources[t.source.id];
        t.lastSync = saved?.lastSync;
        t.lastSuccess = saved?.lastSuccess;
        if (saved?.current === undefined) continue;
        try {
          const current = await restoreSource(t.source, ctx, saved.current);
          const retained: Namespace[] = [];
          for (const commit of saved.retained.slice(0, t.source.keep)) {
            try {
              retained.push(await restoreSource(t.source, ctx, commit));
            } catch (error) {
              logger.warn(
                { source: t.source.id, commit, reason: failureOf(t.source.id, error).reason },
                'a retained commit could not be restored',
              );
            }
          }
          t.served = { id: t.source.id, current, retained };
        } catch (error) {
          logger.warn(
            { source: t.source.id, commit: saved.current, reason: failureOf(t.source.id, error).reason },
            'the last served commit could not be restored',
          );
        }
      }
      publish();
      const first = [...tracked.values()].map((t) => ({ t, sync: run(t, 'start') }));
      // Sources restored from dataDir already serve; wait only for those that had nothing to serve.
      await Promise.all(
        first
          .filter(({ t }) => t.served === undefined || t.source.location.kind === 'local')
          .map(({ sync }) => sync),
      );
    },
    trigger(id, why) {
      const t = tracked.get(id);
      return t === undefined || stopped ? undefined : run(t, why);
    },
    syncAll(why) {
      return Promise.all([...tracked.values()].map((t) => run(t, why)));
    },
    async stop() {
      stopped = true;
      for (const t of tracked.values()) clearTimeout(t.timer);
      await Promise.all([...tracked.values()].map((t) => t.running?.catch(() => undefined)));
    },
  };
}
