import type { Namespace, ServedSource, SourceFailure } from '../catalog/index.ts';
import { GitError } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import { errnoReason } from '../shared/reasons.ts';
import { messageOf } from '../shared/text.ts';
import type { SyncOutcome } from './follower.ts';
import { advance } from './retention.ts';
import type { Source } from './source.ts';
import type { SourceState } from './state.ts';

/** What the worker knows of one source. Replaced whole, never edited. */
export interface SourceRecord {
  served?: ServedSource;
  /** The latest sync in this process failed. */
  failure?: SourceFailure;
  /** A sync has finished in this process (readiness). */
  tried: boolean;
  lastSync?: string;
  lastSuccess?: string;
  lastError?: SourceState['lastError'];
}

export function failureOf(id: string, error: unknown): SourceFailure {
  if (error instanceof GitError) return { id, reason: error.code, detail: error.message };
  const errno = errnoReason(error);
  if (errno !== undefined) return { id, ...errno };
  return { id, reason: 'source-internal', detail: 'unexpected error; see the log' };
}

/**
 * One sync of one source: resolve its target, and fetch and index it when it moved. Never throws: a failure
 * is an outcome, and the record keeps what the source served before. `at` is when it finished (ISO 8601).
 */
export async function syncSource(
  source: Source,
  before: SourceRecord,
  options: { keep: number; why: string; at: () => string; logger: Logger },
): Promise<{ outcome: SyncOutcome; record: SourceRecord; dropped: string[] }> {
  const { id } = source;
  const { logger, why } = options;
  const started = performance.now();
  const { failure: _failure, lastError: _lastError, ...clean } = before;
  try {
    const target = await source.resolve();
    const { commit } = target;
    if (before.served?.current.commit === commit) {
      const at = options.at();
      return {
        outcome: { id, ok: true, commit, changed: false },
        record: { ...clean, tried: true, lastSync: at, lastSuccess: at },
        dropped: [],
      };
    }
    const ns: Namespace = await source.load(target, before.served?.current.commit);
    const { served, dropped } = advance(before.served, ns, options.keep);
    logger.info(
      {
        source: id,
        commit,
        why,
        skills: ns.skills.length,
        problems: ns.problems.length,
        ...(ns.signer === undefined ? {} : { signer: ns.signer }),
        retained: served.retained.map((r) => r.commit),
        ms: Math.round(performance.now() - started),
      },
      'source updated',
    );
    // A skill or paths entry that cannot be served is an error in the log too; a warning stays a warning.
    for (const p of ns.problems)
      logger[p.severity === 'error' ? 'error' : 'warn'](
        { source: id, commit, path: p.path, reason: p.reason, severity: p.severity },
        p.detail,
      );
    const at = options.at();
    return {
      outcome: { id, ok: true, commit, changed: true },
      record: { ...clean, served, tried: true, lastSync: at, lastSuccess: at },
      dropped,
    };
  } catch (error) {
    const failure = failureOf(id, error);
    logger.error(
      {
        source: id,
        reason: failure.reason,
        why,
        serving: before.served?.current.commit ?? null,
        ...(failure.reason === 'source-internal' ? { err: messageOf(error) } : {}),
      },
      failure.detail,
    );
    const at = options.at();
    return {
      outcome: {
        id,
        ok: false,
        reason: failure.reason,
        detail: failure.detail,
        ...(before.served === undefined ? {} : { serving: before.served.current.commit }),
      },
      record: {
        ...before,
        tried: true,
        failure,
        lastSync: at,
        lastError: { reason: failure.reason, detail: failure.detail, at },
      },
      dropped: [],
    };
  }
}
