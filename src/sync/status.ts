import type { Namespace } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import type { CommitStatus, SourceStatus, StatusReport } from '../shared/status.ts';
import { EMPTY_LISTING, type GroupListing } from './refGroup.ts';

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

export function statusReportOf(sources: SourceStatus[]): StatusReport {
  const failures = sources.flatMap((s) =>
    s.lastError === null
      ? []
      : [
          {
            id: s.id,
            reason: s.lastError.reason,
            detail: s.lastError.detail,
            ...(s.group === undefined ? {} : { group: s.group }),
          },
        ],
  );
  return { version: 2, sources, failures };
}
