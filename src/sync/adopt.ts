import type { Namespace } from '../catalog/index.ts';
import type { Logger } from '../shared/log.ts';
import type { SyncOutcome } from '../shared/status.ts';
import type { SourceState } from './dataDir/state.ts';
import { commitsOf, type SourceRecord } from './record.ts';
import type { Source } from './source.ts';
import { failureOf } from './failure.ts';

/** What this process serves of a source another process of its machine holds, once it read what that one published. */
export interface Adopted {
  record: SourceRecord;
  outcome: SyncOutcome;
  /** Whether the served commits or the failure differ from `before` (a catalog swap is due). */
  changed: boolean;
}

/** Nothing published yet (or, `late`, not in time for an ask): what is served stays, and the outcome says so. */
function pending(id: string, before: SourceRecord, late: string | undefined): Adopted {
  const failure = {
    id,
    reason: 'source-pending' as const,
    detail: 'another skillpin process on this dataDir syncs this source and has not published it yet',
  };
  return {
    record: { ...before, failure },
    outcome: {
      ...failure,
      ok: false,
      detail: late ?? failure.detail,
      serving: before.served?.current.commit,
    },
    changed: before.failure?.reason !== failure.reason,
  };
}

/**
 * Serves what the holder published for a source (`entry`, its state.json entry): the commits it names, from their
 * index files (never the network), reusing the namespaces already served. A commit that cannot be restored is
 * logged and left out; nothing published yet is `source-pending`. `late`: asked, the holder did not publish in time.
 */
export async function adoptPublished(
  source: Pick<Source, 'id' | 'restore'>,
  before: SourceRecord,
  entry: SourceState | undefined,
  logger: Logger,
  late?: string,
): Promise<Adopted> {
  const { id } = source;
  if (entry?.current === undefined && entry?.lastError === undefined) return pending(id, before, late);
  const have = new Map(
    before.served === undefined
      ? []
      : [before.served.current, ...before.served.retained].map((ns) => [ns.commit, ns]),
  );
  const restore = async (commit: string): Promise<Namespace | undefined> => {
    const known = have.get(commit);
    if (known !== undefined) return known;
    try {
      return await source.restore(commit);
    } catch (error) {
      logger.warn(
        { source: id, commit, reason: failureOf(id, error).reason },
        'a published commit could not be read',
      );
      return undefined;
    }
  };
  const current = entry.current === undefined ? undefined : await restore(entry.current);
  const retained: Namespace[] = [];
  for (const commit of entry.retained) {
    const ns = await restore(commit);
    if (ns !== undefined) retained.push(ns);
  }
  const served = current === undefined ? before.served : { id, current, retained };
  const failed = entry.lastError !== undefined && entry.lastError.at === entry.lastSync;
  const failure = failed
    ? { id, reason: entry.lastError!.reason, detail: entry.lastError!.detail }
    : undefined;
  const { lastSync, lastSuccess, lastError } = entry;
  const tried = before.tried || lastSync !== undefined;
  const record: SourceRecord = { tried, served, failure, lastSync, lastSuccess, lastError };
  const changed =
    commitsOf(record.served).join() !== commitsOf(before.served).join() ||
    before.failure?.reason !== failure?.reason;
  if (late !== undefined && (failure === undefined || failure.reason === 'source-pending'))
    return { record, outcome: pending(id, record, late).outcome, changed };
  const serving = served?.current.commit;
  const outcome: SyncOutcome =
    failure === undefined && serving !== undefined
      ? { id, ok: true, commit: serving, changed: serving !== before.served?.current.commit }
      : {
          id,
          ok: false,
          reason: failure?.reason ?? 'source-pending',
          detail: failure?.detail ?? 'a published commit could not be read',
          serving,
        };
  return { record, outcome, changed };
}
