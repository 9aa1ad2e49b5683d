import { isDeepStrictEqual } from 'node:util';
import type { Logger } from '../shared/log.ts';
import type { SyncOutcome } from '../shared/status.ts';
import { chooseRefs, EMPTY_LISTING, type GroupListing, isRefsSource, nextListing } from './refGroup.ts';
import type { Source } from './source.ts';
import { failedRecord, failureOf, logFailure, type SourceRecord } from './step.ts';
import type { SourceConfig } from '../config/index.ts';

export interface GroupStep {
  outcome: SyncOutcome;
  record: SourceRecord;
  /** Whether the refs served, or what they name, differ from before (the refs' sources change). */
  changed: boolean;
}

/**
 * One listing of a `refs:` source: its matching branches and tags, one ref listing of the remote. Never throws:
 * a failed listing keeps what the source served (its refs keep serving), and the record says why.
 * `taken`: the ids of the other configured sources, which no ref may be served as.
 */
export async function listGroup(
  source: Source,
  config: SourceConfig,
  before: SourceRecord,
  options: { why: string; at: () => string; logger: Logger; taken: ReadonlySet<string> },
): Promise<GroupStep> {
  const { id } = source;
  const { logger, why } = options;
  if (!isRefsSource(config)) throw new Error(`source ${id} follows no refs: patterns`);
  const { failure: _failure, lastError: _lastError, ...clean } = before;
  const was = before.listing ?? EMPTY_LISTING;
  try {
    const listing = nextListing(was, chooseRefs(config, await source.listRefs(), options.taken), config.keep);
    const changed = !isDeepStrictEqual(listing, was);
    if (changed)
      logger.info(
        {
          source: id,
          why,
          refs: listing.refs.map((r) => r.name),
          ...(listing.gone.length === 0 ? {} : { gone: listing.gone.map((r) => r.name) }),
        },
        'refs listed',
      );
    for (const p of listing.problems)
      if (!was.problems.some((q) => isDeepStrictEqual(p, q)))
        logger.error({ source: id, ref: p.path, reason: p.reason }, p.detail);
    const at = options.at();
    return {
      outcome: { id, ok: true, commit: listing.refs[0]?.commit ?? '', changed },
      record: { ...clean, listing, tried: true, lastSync: at, lastSuccess: at },
      changed,
    };
  } catch (error) {
    const failure = failureOf(id, error);
    logFailure(logger, failure, error, { why });
    return {
      outcome: { id, ok: false, reason: failure.reason, detail: failure.detail },
      record: failedRecord(before, failure, options.at()),
      changed: false,
    };
  }
}

/**
 * What a ref of `listing` names, by its full name: what the ref's source resolves to without the network. A
 * deleted ref still served names what it named last.
 */
export function resolvedOf(listing: GroupListing, ref: string) {
  const found = [...listing.refs, ...listing.gone].find((r) => r.name === ref);
  if (found === undefined) return undefined;
  return { commit: found.commit, ...(found.tag === undefined ? {} : { tag: found.tag, ref: found.name }) };
}
