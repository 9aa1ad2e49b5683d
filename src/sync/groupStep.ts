import { isDeepStrictEqual } from 'node:util';
import type { SourceConfig } from '../config/index.ts';
import type { Logger } from '../shared/log.ts';
import type { SyncOutcome } from '../shared/status.ts';
import type { Followed } from './follower.ts';
import { applyListings } from './reconfigure.ts';
import { chooseRefs, EMPTY_LISTING, type GroupListing, isRefsSource, nextListing } from './refGroup.ts';
import { leased, listingOf, persist, record, type SourceRecord, type Worker } from './served.ts';
import type { Source } from './source.ts';
import { causeField, failedRecord, failureOf, inTurn, logFailure } from './step.ts';

/**
 * One sync of a `refs:` source: one listing of its refs (by the holder of its lease; another process serves
 * what the holder published), the refs' sources started and stopped to match, then each ref synced in turn.
 */
export async function syncGroup(w: Worker, followed: Followed, why: string): Promise<SyncOutcome> {
  const { id } = followed.config;
  w.asked.delete(id);
  let outcome: SyncOutcome;
  if (await leased(w, followed)) {
    const taken = new Set(w.running.config.sources.filter((s) => s.group?.id !== id).map((s) => s.id));
    const at = () => new Date(w.clock.now()).toISOString();
    const options = { why, at, logger: w.logger, taken };
    const step = await inTurn(w, () =>
      listGroup(followed.source, followed.config, w.records.get(id)!, options),
    );
    if (w.stopped) return step.outcome;
    record(w, id, step.record);
    outcome = step.outcome;
  } else outcome = await published(w, id);
  await applyListings(w);
  await persist(w, [followed]);
  // Each ref syncs in turn; one that fails reports on its own line (status, skillpin sync) and retries with its
  // source's next listing, which keeps its poll: a broken tag never slows how soon a new one is served.
  for (const ref of [...listingOf(w, id).refs, ...listingOf(w, id).gone])
    await w.running.followed.get(ref.id)?.follower.trigger(why);
  return outcome;
}

/** What the holder of a `refs:` source's lease published of its listing, served here. */
async function published(w: Worker, id: string): Promise<SyncOutcome> {
  const entry = (await w.stateFile.read()).state.sources[id];
  const before = w.records.get(id)!;
  record(w, id, { ...before, tried: true, listing: entry?.listing ?? before.listing });
  if (entry?.listing === undefined)
    return {
      id,
      ok: false,
      reason: 'source-pending',
      detail: 'another skillpin process on this dataDir lists this source and has not published it yet',
    };
  return { id, ok: true, commit: entry.listing.refs[0]?.commit ?? '', changed: false };
}

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
    const chosen = chooseRefs(config, await source.listRefs(), options.taken, [...was.refs, ...was.gone]);
    const listing = nextListing(was, chosen, config.keep);
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
      outcome: { id, ok: false, reason: failure.reason, detail: failure.detail, ...causeField(error) },
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
  // A ref goes with the annotated tag it names, never alone.
  return { commit: found.commit, tag: found.tag, ref: found.tag === undefined ? undefined : found.name };
}
