import PQueue from 'p-queue';
import type { CatalogState, Namespace, ServedSource, SourceFailure } from '../catalog/index.ts';
import type { Config, SourceConfig } from '../config/index.ts';
import { GitError } from '../git/index.ts';
import type { Logger } from '../log.ts';
import { loadSource, type SourceContext } from './source.ts';
import { readState, writeState, type SourceState } from './state.ts';

export const DEFAULT_SYNC_CONCURRENCY = 4;

function failureOf(source: SourceConfig, error: unknown): SourceFailure {
  return error instanceof GitError
    ? { id: source.id, reason: error.code, detail: error.message }
    : { id: source.id, reason: 'source-internal', detail: 'unexpected error; see the log' };
}

/**
 * Loads every configured source once, at most `concurrency` at a time, and records the outcome in
 * dataDir/state.json. A source that fails costs only itself: it is reported with its reason, and if an earlier
 * run served a commit of it, that commit serves again (from the persisted index, no network needed).
 */
export async function loadAllSources(config: Config, logger: Logger, ctx: Omit<SourceContext, 'dataDir'> = { caches: new Map() }, concurrency = DEFAULT_SYNC_CONCURRENCY): Promise<CatalogState> {
  const previous = await readState(config.dataDir);
  const queue = new PQueue({ concurrency });
  const context = { ...ctx, dataDir: config.dataDir };
  const outcomes = await Promise.all(
    config.sources.map((source) =>
      queue.add(async (): Promise<{ served?: Namespace; failure?: SourceFailure }> => {
        const started = performance.now();
        try {
          const ns = await loadSource(source, context);
          const errors = ns.index.problems.filter((p) => p.severity === 'error').length;
          logger.info({ source: source.id, commit: ns.commit, skills: ns.index.skills.length, problems: ns.index.problems.length, errors, ms: Math.round(performance.now() - started) }, 'source ready');
          for (const p of ns.index.problems) logger.warn({ source: source.id, commit: ns.commit, path: p.path, reason: p.reason, severity: p.severity }, p.detail);
          return { served: ns };
        } catch (error) {
          const failure = failureOf(source, error);
          logger.error({ source: source.id, reason: failure.reason, ...(error instanceof GitError ? {} : { err: (error as Error).message }) }, failure.detail);
          const last = previous.sources[source.id]?.current;
          if (last === undefined) return { failure };
          try {
            const ns = await loadSource(source, context, last);
            logger.warn({ source: source.id, commit: last }, 'serving the last good commit');
            return { served: ns, failure };
          } catch (fallbackError) {
            logger.error({ source: source.id, commit: last, reason: failureOf(source, fallbackError).reason }, 'the last good commit cannot be served either');
            return { failure };
          }
        }
      }),
    ),
  );
  const now = new Date().toISOString();
  const sources: Record<string, SourceState> = {};
  config.sources.forEach((source, index) => {
    const { served, failure } = outcomes[index]!;
    const before = previous.sources[source.id];
    sources[source.id] = {
      ...(served === undefined ? {} : { current: served.commit }),
      retained: [],
      lastSync: now,
      ...(failure === undefined ? { lastSuccess: now } : { ...(before?.lastSuccess === undefined ? {} : { lastSuccess: before.lastSuccess }), lastError: { reason: failure.reason, detail: failure.detail, at: now } }),
    };
  });
  await writeState(config.dataDir, { version: 1, sources });
  return {
    sources: outcomes.flatMap(({ served }, index): ServedSource[] => (served === undefined ? [] : [{ id: config.sources[index]!.id, current: served, retained: [] }])),
    failures: outcomes.flatMap(({ failure }) => (failure === undefined ? [] : [failure])),
  };
}
