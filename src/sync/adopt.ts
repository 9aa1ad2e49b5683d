import type { Namespace } from '../catalog/index.ts';
import type { Logger } from '../shared/log.ts';
import type { Followed } from './followed.ts';
import type { SyncOutcome } from '../shared/status.ts';
import type { SourceState } from './state.ts';
import { failureOf, type SourceRecord } from './step.ts';

/** What this process serves of a source another process leases, once it read what that one published. */
export interface Adopted {
  record: SourceRecord;
  outcome: SyncOutcome;
  /** Whether the served commits or the failure differ from `before` (a catalog swap is due). */
  changed: boolean;
}

/**
 * Serves what the lease holder published for a source (`entry`, its state.json entry): the commits it names,
 * from their index files (never the network), reusing the namespaces already served. A commit that cannot be
 * restored is logged and left out; nothing published yet is `source-pending`.
 */
export async function adoptPublished(
  { source }: Followed,
  before: SourceRecord,
  entry: SourceState | undefined,
  logger: Logger,
): Promise<Adopted> {
  const { id } = source;
  if (entry?.current === undefined && entry?.lastError === undefined) {
    const failure = {
      id,
      reason: 'source-pending' as const,
      detail: 'another skillpin process on this dataDir syncs this source and has not published it yet',
    };
    const serving = before.served?.current.commit;
    return {
      record: { ...before, failure },
      outcome: { ...failure, ok: false, ...(serving === undefined ? {} : { serving }) },
      changed: before.failure?.reason !== failure.reason,
    };
  }
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
  const record: SourceRecord = {
    tried: before.tried || entry.lastSync !== undefined,
    ...(served === undefined ? {} : { served }),
    ...(failure === undefined ? {} : { failure }),
    ...(entry.lastSync === undefined ? {} : { lastSync: entry.lastSync }),
    ...(entry.lastSuccess === undefined ? {} : { lastSuccess: entry.lastSuccess }),
    ...(entry.lastError === undefined ? {} : { lastError: entry.lastError }),
  };
  const commits = (r: SourceRecord) =>
    r.served === undefined ? [] : [r.served.current, ...r.served.retained].map((ns) => ns.commit);
  const changed =
    commits(record).join() !== commits(before).join() || before.failure?.reason !== failure?.reason;
  const serving = served?.current.commit;
  const outcome: SyncOutcome =
    failure === undefined && serving !== undefined
      ? { id, ok: true, commit: serving, changed: serving !== before.served?.current.commit }
      : {
          id,
          ok: false,
          reason: failure?.reason ?? 'source-pending',
          detail: failure?.detail ?? 'a published commit could not be read',
          ...(serving === undefined ? {} : { serving }),
        };
  return { record, outcome, changed };
}
