import type { Namespace } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { CommitStatus, SourceStatus, StatusReport } from '../shared/status.ts';
import type { DamageLedger } from './damage.ts';
import type { Followed } from './follower.ts';
import { EMPTY_LISTING, type GroupListing } from './refGroup.ts';
import type { SourceRecord } from './record.ts';

export const refOf = (source: SourceConfig): string | null =>
  source.target.kind === 'ref' ? source.target.ref : null;

/** What a status line adds for a `refs:` source (its listing) or one of its refs (the source it belongs to). */
export function refsStatusOf(
  source: SourceConfig,
  listing: GroupListing | undefined,
): Pick<SourceStatus, 'refs' | 'group'> {
  if (source.group !== undefined) return { group: source.group.id };
  if (source.target.kind !== 'refs') return {};
  const { refs, gone, problems } = listing ?? EMPTY_LISTING;
  return {
    refs: {
      patterns: source.target.patterns,
      served: [...refs, ...gone].map((r) => r.id),
      problems,
    },
  };
}

export function commitStatusOf(ns: Namespace): CommitStatus {
  return {
    commit: ns.commit,
    commitTime: ns.commitTime,
    skills: ns.skills.length,
    problems: [...ns.problems],
  };
}

/** A running source's status: what it serves and when it syncs; damage found shows before its last error. */
export function liveStatusOf(
  { config, source, follower }: Followed,
  record: SourceRecord,
  damage: Pick<DamageLedger, 'error'>,
): SourceStatus {
  const next = follower.nextAt;
  return {
    id: source.id,
    repository: source.origin.repository,
    ref: refOf(config),
    current: record.served === undefined ? null : commitStatusOf(record.served.current),
    retained: record.served?.retained.map(commitStatusOf) ?? [],
    syncing: follower.syncing,
    lastSync: record.lastSync ?? null,
    lastSuccess: record.lastSuccess ?? null,
    nextSync: next === undefined ? null : new Date(next).toISOString(),
    lastError: damage.error(source.id) ?? record.lastError ?? null,
    ...refsStatusOf(config, record.listing),
  };
}

export function statusReportOf(sources: SourceStatus[]): StatusReport {
  const failures = sources.flatMap((s) =>
    s.lastError === null
      ? []
      : [
          {
            id: s.id,
            reason: s.lastError.reason,
            detail: s.lastError.detail,
            group: s.group,
          },
        ],
  );
  return { version: 2, sources, failures };
}
