import { isDeepStrictEqual } from 'node:util';
import type { SourceConfig } from '../config/index.ts';
import type { RemoteRef } from '../git/index.ts';
import type { Logger } from '../shared/log.ts';
import type { SyncOutcome } from '../shared/status.ts';
import type { SourceState } from './dataDir/state.ts';
import { causeField, failedRecord, failureOf, logFailure } from './failure.ts';
import type { Refusal, Role } from './owner.ts';
import { chooseRefs, EMPTY_LISTING, type GroupListing, isRefsSource, nextListing } from './refGroup.ts';
import type { SourceRecord } from './record.ts';
import type { Source } from './source.ts';

/** What the holder of a `refs:` source on this machine published of its listing (state.json), served here. */
export function publishedListing(
  id: string,
  before: SourceRecord,
  entry: SourceState | undefined,
): GroupStep {
  const record = { ...before, tried: true, listing: entry?.listing ?? before.listing };
  if (entry?.listing === undefined)
    return {
      outcome: {
        id,
        ok: false,
        reason: 'source-pending',
        detail: 'another skillpin process on this dataDir lists this source and has not published it yet',
      },
      record,
      changed: false,
    };
  const changed = !isDeepStrictEqual(entry.listing, before.listing);
  return { outcome: { id, ok: true, commit: entry.listing.refs[0]?.commit ?? '', changed }, record, changed };
}

/** A published tag that names another commit than this replica's listing gave it: its own listing decides. */
function tagMoved(published: readonly RemoteRef[], was: GroupListing): Refusal | undefined {
  const known = new Map([...was.refs, ...was.gone].map((ref) => [ref.name, ref.commit]));
  for (const ref of published) {
    const commit = known.get(ref.name);
    const names = ref.peeled ?? ref.oid;
    if (ref.name.startsWith('refs/tags/') && commit !== undefined && commit !== names)
      return {
        reason: 'publication-tag-moved',
        detail: `the published listing names ${names} for tag ${ref.name}, not the ${commit} this replica resolved it to`,
      };
  }
  return undefined;
}

/**
 * One listing of a `refs:` source given who syncs it (`role`): alone or holding, this process lists the remote's
 * refs (a holder publishes what it listed); following another replica, it takes the published listing (each ref's
 * commit is still fetched from the remote), lists only when the publication is refused or a tag moved, and keeps
 * its listing while nothing newer is published.
 */
export async function listByRole(
  role: Exclude<Role, { via: 'machine' }>,
  source: Source,
  config: SourceConfig,
  before: SourceRecord,
  options: ListOptions,
): Promise<GroupStep> {
  const own = () => source.listRefs();
  if (role.kind === 'alone') return listGroup(config, own, before, options);
  if (role.kind === 'hold') {
    let listed: readonly RemoteRef[] | undefined;
    const step = await listGroup(config, async () => (listed = await own()), before, options);
    if (step.outcome.ok && listed !== undefined) await role.publish({ refs: [...listed] });
    return step;
  }
  const hint =
    role.hint !== undefined && 'refs' in role.hint.published ? role.hint.published.refs : undefined;
  const was = before.listing ?? EMPTY_LISTING;
  const refused = role.refused ?? (hint === undefined ? undefined : tagMoved(hint, was));
  if (refused !== undefined) {
    role.refuse(refused);
    options.logger.warn(
      { source: config.id, reason: refused.reason, holder: role.holder },
      `${refused.detail}; this replica lists the refs itself`,
    );
    return listGroup(config, own, before, options);
  }
  if (hint !== undefined && !(role.behind && before.listing !== undefined))
    return listGroup(config, async () => hint, before, options);
  // Nothing published yet, or only before what this replica listed alone: it keeps what it listed.
  if (before.listing !== undefined)
    return {
      outcome: { id: config.id, ok: true, commit: was.refs[0]?.commit ?? '', changed: false },
      record: before,
      changed: false,
    };
  const detail = `replica ${role.holder} lists this source for the replicas and has published no listing of it yet`;
  const nothing = publishedListing(config.id, before, undefined);
  return { ...nothing, outcome: { id: config.id, ok: false, reason: 'source-pending', detail } };
}

export interface ListOptions {
  why: string;
  at: () => string;
  logger: Logger;
  /** The ids of the other configured sources, which no ref may be served as. */
  taken: ReadonlySet<string>;
  /** The source's last listing and choice (absent: the refs are chosen again). */
  chosen?: LastChoice;
}

export interface GroupStep {
  outcome: SyncOutcome;
  record: SourceRecord;
  /** Whether the refs served, or what they name, differ from before (the refs' sources change). */
  changed: boolean;
}

/**
 * A `refs:` source's last ref listing and the listing chosen from it, kept by whoever lists the source again (its
 * Followed): a listing the same as the last one is the same array (Source.listRefs).
 */
export interface LastChoice {
  last?: {
    listed: readonly RemoteRef[];
    config: SourceConfig;
    taken: ReadonlySet<string>;
    was: GroupListing;
    listing: GroupListing;
  };
}

/**
 * The listing `listed` makes of `was`: `was` itself when it is the same (so a poll that finds nothing new compares
 * nothing again), and `memo`'s last answer again for the same refs, config, taken ids and listing before.
 */
function listingOf(
  config: SourceConfig & { target: { kind: 'refs' } },
  listed: readonly RemoteRef[],
  taken: ReadonlySet<string>,
  was: GroupListing,
  memo: LastChoice,
): GroupListing {
  const { last } = memo;
  if (
    last !== undefined &&
    last.listed === listed &&
    last.config === config &&
    last.was === was &&
    sameIds(last.taken, taken)
  )
    return last.listing;
  const next = nextListing(was, chooseRefs(config, listed, taken, [...was.refs, ...was.gone]), config.keep);
  const listing = isDeepStrictEqual(next, was) ? was : next;
  memo.last = { listed, config, taken, was, listing };
  return listing;
}

const sameIds = (a: ReadonlySet<string>, b: ReadonlySet<string>) =>
  a.size === b.size && [...a].every((id) => b.has(id));

/**
 * One listing of a `refs:` source: its matching branches and tags as `list` gives them (the remote's, or what the
 * holder published). Never throws: a failed listing keeps what the source served (its refs keep serving), and the
 * record says why.
 */
export async function listGroup(
  config: SourceConfig,
  list: () => Promise<readonly RemoteRef[]>,
  before: SourceRecord,
  options: ListOptions,
): Promise<GroupStep> {
  const { id } = config;
  const { logger, why } = options;
  if (!isRefsSource(config)) throw new Error(`source ${id} follows no refs: patterns`);
  const { failure: _failure, lastError: _lastError, ...clean } = before;
  const was = before.listing ?? EMPTY_LISTING;
  try {
    const listed = await list();
    const listing = listingOf(config, listed, options.taken, was, options.chosen ?? {});
    const changed = listing !== was;
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
    for (const p of changed ? listing.problems : [])
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
