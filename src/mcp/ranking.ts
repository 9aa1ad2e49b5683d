import { compareText } from '../shared/text.ts';
import { type KeyIds, keyIds, PLACE, type RankedTerm } from '../index/postings.ts';
import type { Matched, SearchHit, SkillIndex } from './search.ts';
import { withVariants } from './variants.ts';

/** A query as ranked: its terms (each with the query's word it came from), and the query read as a skill's name. */
export interface ParsedQuery {
  readonly terms: ReadonlyArray<{
    readonly term: string;
    readonly word: string;
    readonly weight: number;
    /** It counts only in a name or description (a variant of a word: variants.ts). */
    readonly about?: boolean;
  }>;
  /** nameKey of the query. */
  readonly name: string;
}

/**
 * The statistics of everything searched, summed over the indexes (never one index's alone: a word rare in a large
 * catalog would outweigh the exact name in a small one): each term's inverse document frequency, the mean length.
 */
function statistics(indexes: readonly SkillIndex[], query: ParsedQuery) {
  let skills = 0;
  let length = 0;
  for (const { postings } of indexes) {
    skills += postings.skillCount;
    length += postings.totalLength;
  }
  const keys = query.terms.map(({ term }) => Buffer.from(term, 'utf8'));
  // Each term looked up once in each index, for its count here and for the ranking (`termIds[i]`: index i's), by its
  // id in the lexicon, found once for the indexes interned there.
  let known: KeyIds | undefined;
  const termIds = indexes.map(({ postings }) => {
    if (known?.lexicon !== postings.terms.lexicon) known = keyIds(postings.terms.lexicon, keys);
    return postings.termIds(keys, known);
  });
  const terms: RankedTerm[] = query.terms.map(({ term, weight, about }, at) => {
    let held = 0;
    for (const [i, { postings }] of indexes.entries()) held += postings.heldAt(termIds[i]![at]!);
    return { term, key: keys[at], about, idf: weight * Math.log(1 + (skills - held + 0.5) / (held + 0.5)) };
  });
  return { terms, termIds, averageLength: skills === 0 ? 1 : length / skills };
}

const PLACES = [
  ['name', PLACE.name],
  ['description', PLACE.description],
  ['headings', PLACE.heading],
  ['text', PLACE.text],
] as const;

/** Where the query's words stand in skill `id` of `index`. */
function matchedIn(index: SkillIndex, id: number, query: ParsedQuery, exactName: boolean): Matched {
  const matched: Matched = exactName ? { exactName: true } : {};
  for (const { term, word, about } of query.terms) {
    const places = index.postings.placesOf(term, id) & (about === true ? PLACE.name | PLACE.description : ~0);
    for (const [key, bit] of PLACES)
      if (places & bit && !(matched[key] ??= []).includes(word)) matched[key].push(word);
  }
  return matched;
}

interface Ranked extends SearchHit {
  exactName: boolean;
}

/** One index's hits (index `at` of the statistics): every skill matching a term, and every skill whose name the query
 * is. */
function hitsOf(
  index: SkillIndex,
  query: ParsedQuery,
  ranked: ReturnType<typeof statistics>,
  at: number,
): Ranked[] {
  const exact = new Set(index.named(query.name));
  const hit = (id: number, score: number): Ranked => ({
    served: index.skills[id]!,
    score,
    exactName: exact.has(id),
    matched: () => matchedIn(index, id, query, exact.has(id)),
  });
  const hits = index.postings.rank(ranked.terms, ranked.averageLength, hit, ranked.termIds[at]);
  // A name of function words alone (`do-it`) matches no term, and is still the skill's name.
  for (const id of exact) if (!hits.some((h) => h.served === index.skills[id])) hits.push(hit(id, 0));
  return hits;
}

/** Exact names first, then by score, then by URI. */
const byRank = (a: Ranked, b: Ranked) =>
  Number(b.exactName) - Number(a.exactName) || b.score - a.score || compareText(a.served.uri, b.served.uri);

/**
 * One hit per skill of a `refs:` source (`groups`: a ref's source id to its source's): at the rank of its best
 * version, its newest version first (by commit time), the other versions that matched named with it.
 */
function grouped(hits: readonly Ranked[], groups: ReadonlyMap<string, string>): SearchHit[] {
  const kept: Array<Ranked | Ranked[]> = [];
  const byKey = new Map<string, Ranked[]>();
  for (const hit of hits) {
    const group = groups.get(hit.served.ns.source);
    const key = `${group}\n${hit.served.skill.servedDir}`;
    const versions = group === undefined ? undefined : byKey.get(key);
    if (group === undefined) kept.push(hit);
    else if (versions !== undefined) versions.push(hit);
    else {
      byKey.set(key, [hit]);
      kept.push(byKey.get(key)!);
    }
  }
  return kept.map((hit) => {
    if (!Array.isArray(hit)) return hit;
    const [newest, ...others] = [...hit].sort(
      (a, b) =>
        compareText(b.served.ns.commitTime, a.served.ns.commitTime) ||
        compareText(a.served.ns.source, b.served.ns.source),
    );
    return { ...newest!, score: hit[0]!.score, versions: others.map((other) => other.served) };
  });
}

/** The skills of `indexes` matching `parsed` or its words' variants, best first across them all (one ranking,
 * statistics of the whole). */
export function rankAcross(
  indexes: readonly SkillIndex[],
  parsed: ParsedQuery,
  groups?: ReadonlyMap<string, string>,
): SearchHit[] {
  const query = withVariants(indexes, parsed);
  const ranked = statistics(indexes, query);
  const hits =
    indexes.length === 1
      ? hitsOf(indexes[0]!, query, ranked, 0)
      : indexes.flatMap((index, at) => hitsOf(index, query, ranked, at));
  hits.sort(byRank);
  return groups === undefined || groups.size === 0 ? hits : grouped(hits, groups);
}

/** A skill rankTop keeps among the best so far: where it is, and what it is ranked by. */
interface Candidate {
  index: SkillIndex;
  id: number;
  score: number;
  exactName: boolean;
}

/** Whether `a` ranks before `b` (byRank's order). */
const before = (a: Candidate, b: Candidate) =>
  a.exactName !== b.exactName
    ? a.exactName
    : a.score !== b.score
      ? a.score > b.score
      : compareText(a.index.skills[a.id]!.uri, b.index.skills[b.id]!.uri) < 0;

/**
 * The first `limit` of rankAcross's hits (no groups) and how many it finds in all, with no object or sort for the
 * others: a query of common words finds most of a catalog (100,000 hit objects and their sort were most of a
 * search at 1,000 namespaces).
 */
export function rankTop(
  indexes: readonly SkillIndex[],
  parsed: ParsedQuery,
  limit: number,
): { hits: SearchHit[]; total: number } {
  const query = withVariants(indexes, parsed);
  const ranked = statistics(indexes, query);
  const top: Candidate[] = [];
  let total = 0;
  const offer = (candidate: Candidate) => {
    total++;
    if (top.length === limit && (limit === 0 || !before(candidate, top[limit - 1]!))) return;
    let at = top.length;
    while (at > 0 && before(candidate, top[at - 1]!)) at--;
    top.splice(at, 0, candidate);
    if (top.length > limit) top.pop();
  };
  for (const [at, index] of indexes.entries()) {
    // The skills named as the query (most indexes have none: no set made for them, at every search).
    const exact = index.named(query.name) ?? [];
    const found: number[] = [];
    const termIds = ranked.termIds[at];
    index.postings.eachScored(
      ranked.terms,
      ranked.averageLength,
      (id, score) => {
        const exactName = exact.length > 0 && exact.includes(id);
        if (exactName) found.push(id);
        // Most skills rank below the last kept: no object for them.
        const last = top[limit - 1];
        if (
          top.length === limit &&
          (last === undefined || (!exactName && !last.exactName && score < last.score))
        ) {
          total++;
          return;
        }
        offer({ index, id, score, exactName });
      },
      termIds,
    );
    // A name of function words alone matches no term, and is still the skill's name.
    for (const id of exact) if (!found.includes(id)) offer({ index, id, score: 0, exactName: true });
  }
  const hits = top.map(
    ({ index, id, score, exactName }): SearchHit => ({
      served: index.skills[id]!,
      score,
      matched: () => matchedIn(index, id, query, exactName),
    }),
  );
  return { hits, total };
}
