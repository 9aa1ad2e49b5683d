import type { ServedSource } from '../catalog/index.ts';
import type { RefsTarget, SourceConfig } from '../config/index.ts';
import type { RemoteRef } from '../git/index.ts';
import type { GroupListing, GroupRef } from './dataDir/state.ts';
import { MAX_SOURCE_ID_LENGTH } from '../shared/patterns.ts';
import { problem, type SkillProblem } from '../shared/reasons.ts';
import { compareRefs, refMatcher, refSourceId, sortRefs } from '../shared/refNames.ts';

export type { GroupListing, GroupRef } from './dataDir/state.ts';

export const EMPTY_LISTING: GroupListing = { refs: [], gone: [], problems: [] };

type RefsSource = SourceConfig & { target: RefsTarget };

export function isRefsSource(source: SourceConfig): source is RefsSource {
  return source.target.kind === 'refs';
}

/**
 * The refs of `listed` that `group` serves: those matching its patterns, annotated tags peeled (`peeled`), each
 * under its own source id. Of two refs with one id, the one `served` already (the last listing's, or the
 * lockfile's) keeps it and the newcomer is refused; when neither was, both are. An id that is no source id or one
 * `taken` by another configured source is refused; past `maxRefs` the oldest (in listing order) are left out.
 * Nothing is dropped without a problem naming it.
 */
export function chooseRefs(
  group: RefsSource,
  listed: readonly RemoteRef[],
  taken: ReadonlySet<string>,
  served: readonly Pick<GroupRef, 'name' | 'id'>[] = [],
): { refs: GroupRef[]; problems: SkillProblem[] } {
  const matches = refMatcher(group.target.patterns);
  const problems: SkillProblem[] = [];
  const byId = new Map<string, RemoteRef[]>();
  for (const ref of listed.filter((r) => matches(r.name))) {
    const id = refSourceId(group.id, ref.name);
    if (id === undefined) {
      const long = `${group.id}.`.length + ref.name.replace(/^refs\/(heads|tags)\//, '').length;
      problems.push(
        problem(
          ref.name,
          'ref-id-invalid',
          long > MAX_SOURCE_ID_LENGTH
            ? `${ref.name} would be served as a source id of ${long} characters, past the limit of ${MAX_SOURCE_ID_LENGTH}; it is not served`
            : `${ref.name} makes no valid source id (it would start or end with "-" or "."); it is not served`,
        ),
      );
      continue;
    }
    byId.set(id, [...(byId.get(id) ?? []), ref]);
  }
  const chosen: GroupRef[] = [];
  for (const [id, all] of byId) {
    const first = all.find((r) => served.some((s) => s.id === id && s.name === r.name));
    const refs = first === undefined ? all : [first];
    // A ref pushed later cannot take a served version down: the first keeps its id, the newcomer is refused.
    for (const newcomer of all.filter((r) => first !== undefined && r !== first))
      problems.push(
        problem(
          newcomer.name,
          'ref-id-collision',
          `${newcomer.name} would be served as ${id}, which ${first!.name} is served as already; it is not served (rename it, or narrow refs:)`,
        ),
      );
    if (refs.length > 1) {
      const names = refs.map((r) => r.name).sort();
      for (const name of names)
        problems.push(
          problem(
            name,
            'ref-id-collision',
            `${names.join(' and ')} would both be served as ${id}; neither is served (rename one, or narrow refs:)`,
          ),
        );
      continue;
    }
    if (taken.has(id)) {
      problems.push(
        problem(
          refs[0]!.name,
          'ref-id-collision',
          `${refs[0]!.name} would be served as ${id}, the id of another configured source; it is not served`,
        ),
      );
      continue;
    }
    const ref = refs[0]!;
    const commit = ref.peeled ?? ref.oid;
    // No tag is no `tag` key: a listing is compared (isDeepStrictEqual) with the one state.json gave back.
    chosen.push({ name: ref.name, id, commit, ...(ref.peeled === undefined ? {} : { tag: ref.oid }) });
  }
  const sorted = sortRefs(chosen);
  const { maxRefs } = group.target;
  if (sorted.length > maxRefs) {
    const left = sorted.slice(maxRefs);
    problems.push(
      problem(
        left[0]!.name,
        'refs-over-limit',
        `${sorted.length} refs match, past maxRefs ${maxRefs}: the ${left.length} oldest are not served (${left.map((r) => r.name).join(', ')})`,
      ),
    );
  }
  return { refs: sorted.slice(0, maxRefs), problems };
}

/** The next listing: `refs` as chosen now; a ref gone since `before` stays served (not listed), up to `keep`. */
export function nextListing(
  before: GroupListing,
  chosen: { refs: GroupRef[]; problems: SkillProblem[] },
  keep: number,
): GroupListing {
  const now = new Set(chosen.refs.map((r) => r.id));
  const deleted = before.refs.filter((r) => !now.has(r.id));
  const gone = [...deleted, ...before.gone.filter((r) => !now.has(r.id))].slice(0, keep);
  return { refs: chosen.refs, gone, problems: chosen.problems };
}

/** The source a ref of `group` is served as: the group's settings, its own id, following that one ref. */
export function refSourceConfig(group: RefsSource, ref: GroupRef): SourceConfig {
  const { pollMs: _pollMs, ...settings } = group;
  return {
    ...settings,
    id: ref.id,
    target: { kind: 'ref', ref: ref.name },
    group: { id: group.id, ref: ref.name },
  };
}

/** `sources` with each `refs:` source followed by the sources of the refs it serves (listed ones, then gone ones). */
export function expandedSources(
  sources: readonly SourceConfig[],
  listings: ReadonlyMap<string, GroupListing>,
): SourceConfig[] {
  return sources.flatMap((source) => {
    if (!isRefsSource(source)) return [source];
    const listing = listings.get(source.id) ?? EMPTY_LISTING;
    return [source, ...[...listing.refs, ...listing.gone].map((ref) => refSourceConfig(source, ref))];
  });
}

/**
 * The catalog's sources with each group's refs in listing order (versions newest first, then others by commit
 * time), and only those listed that `list:` asks for: the newest N of the refs that still exist.
 */
export function arrangedSources(
  served: readonly ServedSource[],
  sources: readonly SourceConfig[],
  listings: ReadonlyMap<string, GroupListing>,
): ServedSource[] {
  const groupOf = new Map(sources.flatMap((s) => (s.group === undefined ? [] : [[s.id, s.group] as const])));
  const out: ServedSource[] = [];
  const pending = new Map<string, ServedSource[]>();
  const flush = (id: string) => {
    const group = sources.find((s) => s.id === id);
    const members = pending.get(id) ?? [];
    pending.delete(id);
    // Refs served from a lockfile, without their `refs:` source: as locked, every one listed.
    if (group === undefined || !isRefsSource(group)) {
      out.push(...members.map((s) => ({ ...s, group: id })));
      return;
    }
    const listing = listings.get(id) ?? EMPTY_LISTING;
    const gone = new Set(listing.gone.map((r) => r.id));
    const named = (s: ServedSource) => ({ name: groupOf.get(s.id)!.ref, commitTime: s.current.commitTime });
    const ordered = [...members].sort((a, b) => compareRefs(named(a), named(b)));
    const newest = group.target.newest ?? Number.POSITIVE_INFINITY;
    let listed = 0;
    for (const s of ordered) {
      const shown = !gone.has(s.id) && listed < newest;
      if (shown) listed++;
      out.push(shown ? { ...s, group: id } : { ...s, group: id, listed: false });
    }
  };
  let open: string | undefined;
  for (const s of served) {
    const group = groupOf.get(s.id)?.id;
    if (open !== undefined && group !== open) {
      flush(open);
      open = undefined;
    }
    if (group === undefined) out.push(s);
    else {
      open = group;
      pending.set(group, [...(pending.get(group) ?? []), s]);
    }
  }
  if (open !== undefined) flush(open);
  return out;
}
