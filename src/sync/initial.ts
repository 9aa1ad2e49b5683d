import PQueue from 'p-queue';
import type { CatalogState, ServedSource, SourceFailure } from '../catalog/index.ts';
import type { Config } from '../config/index.ts';
import { GitError } from '../git/index.ts';
import type { Logger } from '../log.ts';
import { loadSource, type SourceContext } from './source.ts';

export const DEFAULT_SYNC_CONCURRENCY = 4;

/**
 * Loads every configured source once, at most `concurrency` at a time. A source that fails costs only
 * itself: it is reported with its reason and the others serve.
 */
export async function loadAllSources(config: Config, logger: Logger, ctx: Omit<SourceContext, 'dataDir'> = { caches: new Map() }, concurrency = DEFAULT_SYNC_CONCURRENCY): Promise<CatalogState> {
  const queue = new PQueue({ concurrency });
  const results = await Promise.all(
    config.sources.map((source) =>
      queue.add(async (): Promise<ServedSource | SourceFailure> => {
        const started = performance.now();
        try {
          const ns = await loadSource(source, { ...ctx, dataDir: config.dataDir });
          const errors = ns.index.problems.filter((p) => p.severity === 'error').length;
          logger.info({ source: source.id, commit: ns.commit, skills: ns.index.skills.length, problems: ns.index.problems.length, errors, ms: Math.round(performance.now() - started) }, 'source ready');
          for (const p of ns.index.problems) logger.warn({ source: source.id, commit: ns.commit, path: p.path, reason: p.reason, severity: p.severity }, p.detail);
          return { id: source.id, current: ns, retained: [] };
        } catch (error) {
          const failure = error instanceof GitError
            ? { id: source.id, reason: error.code, detail: error.message }
            : { id: source.id, reason: 'source-internal', detail: 'unexpected error; see the log' };
          logger.error({ source: source.id, reason: failure.reason, ...(error instanceof GitError ? {} : { err: (error as Error).message }) }, failure.detail);
          return failure;
        }
      }),
    ),
  );
  return {
    sources: results.filter((result): result is ServedSource => 'current' in result),
    failures: results.filter((result): result is SourceFailure => 'reason' in result),
  };
}
