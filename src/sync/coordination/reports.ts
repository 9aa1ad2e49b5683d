import { COMMIT_PATTERN } from '../../shared/patterns.ts';
import type { ReplicaServing, SourceReplicas } from '../../shared/status.ts';
import type { RedisLink } from './redis.ts';
import type { SharedSource } from './leases.ts';
import { KEEP_MS, keysOf, replicaOf } from './scripts.ts';

/** How often a replica reports what it serves; a report older than REPORT_STALE_MS is a replica gone. */
export const REPORT_MS = 10_000;
export const REPORT_STALE_MS = 3 * REPORT_MS;
/** Reports read per source at most (a hash that grew past this is not ours to show whole). */
const MAX_REPORTS = 1000;

/** A time as replicas write it (`Date#toISOString`): anything else read from Redis is not shown. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const NOTHING_KNOWN: SourceReplicas = {
  leaseHolder: null,
  serving: [],
  agree: false,
  lastAgreed: null,
};

/**
 * One replica's report as stored (JSON: pid, commit or null, since, at); `undefined` when it is not one. Whoever
 * can write to Redis can write here: only a commit id, a pid and a time reach /status.
 */
export function parsedReport(replica: string, text: string): (ReplicaServing & { at: number }) | undefined {
  if (replicaOf(replica) === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<ReplicaServing> & { at?: unknown };
    const commit =
      parsed.commit === null || COMMIT_PATTERN.test(String(parsed.commit)) ? parsed.commit : undefined;
    if (commit === undefined || typeof parsed.at !== 'number' || !ISO_TIME.test(String(parsed.since)))
      return undefined;
    const host = replica.slice(0, replica.indexOf('/'));
    const pid = Number.isSafeInteger(parsed.pid) ? Number(parsed.pid) : 0;
    return { replica, host, pid, commit, since: String(parsed.since), at: parsed.at };
  } catch {
    return undefined;
  }
}

/** The last agreement recorded, when it reads as one. */
export function agreementOf(text: string | null | undefined): SourceReplicas['lastAgreed'] {
  try {
    const parsed = text == null ? null : (JSON.parse(text) as { commit?: unknown; at?: unknown });
    return parsed !== null && COMMIT_PATTERN.test(String(parsed.commit)) && ISO_TIME.test(String(parsed.at))
      ? { commit: String(parsed.commit), at: String(parsed.at) }
      : null;
  } catch {
    return null;
  }
}

/** Field-value pairs as HGETALL answers them (a record, or a flat array from RESP2). */
export function pairsOf(fields: Record<string, string> | string[]): Array<readonly [string, string]> {
  return Array.isArray(fields)
    ? fields.flatMap((value, i) => (i % 2 === 0 ? [[value, fields[i + 1]!] as const] : []))
    : Object.entries(fields);
}

/**
 * What the replicas serve of a source, from its reports (field-value pairs of `<prefix>served:<key>`), its lease's
 * holder and its last agreement, at `now` (Redis's time): reports older than REPORT_STALE_MS are `stale`.
 */
export function viewOf(
  pairs: ReadonlyArray<readonly [string, string]>,
  holder: string | null | undefined,
  agreed: string | null | undefined,
  now: number,
): { view: SourceReplicas; stale: string[] } {
  const reports = pairs.slice(0, MAX_REPORTS).flatMap(([who, text]) => parsedReport(who, text) ?? []);
  const stale = reports.filter((report) => now - report.at > REPORT_STALE_MS).map((report) => report.replica);
  const live = reports
    .filter((report) => !stale.includes(report.replica))
    .sort((a, b) => (a.replica < b.replica ? -1 : 1))
    .map(({ at: _at, ...report }) => report);
  const commits = new Set(live.map((report) => report.commit));
  const agree = live.length > 0 && commits.size === 1 && !commits.has(null);
  const lastAgreed = agree
    ? { commit: live[0]!.commit!, at: new Date(now).toISOString() }
    : agreementOf(agreed);
  return { view: { leaseHolder: replicaOf(holder) ?? null, serving: live, agree, lastAgreed }, stale };
}

/**
 * What each replica serves, per shared source: this replica writes its own report (`<prefix>served:<key>`, a hash
 * by replica id) and reads every live replica's back; when they all serve one commit it records that they agreed.
 * Every time written or compared is Redis's (a replica whose clock is off is neither dropped nor kept wrongly).
 */
export function createReports(link: RedisLink, options: { replica: string; pid: number; keyPrefix: string }) {
  const { replica, keyPrefix } = options;
  const views = new Map<SharedSource, SourceReplicas>();
  const since = new Map<SharedSource, { commit: string | null; since: string }>();

  /** Reads every replica's report back, drops the stale ones, and notes when they agreed. */
  const refresh = async (source: SharedSource): Promise<void> => {
    const keys = keysOf(keyPrefix, source.key);
    const [fields, holder, agreed, now] = await Promise.all([
      link.command<Record<string, string> | string[]>(['HGETALL', keys.served]),
      link.command<string | null>(['HGET', keys.lease, 'replica']),
      link.command<string | null>(['GET', keys.agreed]),
      link.time(),
    ]);
    if (fields === undefined || now === undefined) return;
    const { view, stale } = viewOf(pairsOf(fields), holder, agreed, now);
    if (stale.length > 0) void link.command(['HDEL', keys.served, ...stale]);
    if (view.agree)
      void link.command(['SET', keys.agreed, JSON.stringify(view.lastAgreed), 'PX', String(KEEP_MS)]);
    views.set(source, view);
  };

  return {
    /** Writes this replica's report of `source` (the commit it lists, `null` for none), then reads all back. */
    async report(source: SharedSource, commit: string | null): Promise<void> {
      const at = await link.time();
      if (at === undefined) return;
      if (since.get(source)?.commit !== commit)
        since.set(source, { commit, since: new Date(at).toISOString() });
      const report = { pid: options.pid, commit, since: since.get(source)!.since, at };
      const keys = keysOf(keyPrefix, source.key);
      await link.command(['HSET', keys.served, replica, JSON.stringify(report)]);
      await link.command(['PEXPIRE', keys.served, String(KEEP_MS)]);
      await refresh(source);
    },
    refresh,
    /** What was last read of `source`. */
    view: (source: SharedSource): SourceReplicas => views.get(source) ?? NOTHING_KNOWN,
    /** Removes this replica's report of `source`. */
    async forget(source: SharedSource): Promise<void> {
      views.delete(source);
      since.delete(source);
      await link.command(['HDEL', keysOf(keyPrefix, source.key).served, replica]);
    },
  };
}
