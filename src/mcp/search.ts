import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import type { Namespace } from '../catalog/index.ts';
import { decodeUtf8, SKILL_MD } from '../skills/index.ts';
import { compareText } from '../shared/text.ts';
import { snapshotOf, type ServedSkill } from './snapshot.ts';

/** A SKILL.md body is indexed up to this many characters (a hostile body costs no more). */
export const MAX_INDEXED_BODY_CHARS = 64 * 1024;
/** SKILL.md files read at once while an index is built. */
const READS_AT_ONCE = 32;

/**
 * Field weights: a word in the name or description says more about what a skill is for than one in its body
 * (bench/search.ts measured these against equal weights and others on its query set).
 */
const BOOST = { name: 2, description: 2, headings: 1, text: 1 };

/** English function words: they match everything and say nothing about a task. */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could do does for from get got had has have how i if in into is it its me ' +
    'my of on or our should so some that the their them then there these they this to too up us was we what ' +
    'when where which while who why will with without would you your'
  ).split(' '),
);

/** A word counts at most this many times in one field: BM25 saturates anyway, and a body that repeats a line a
 * thousand times costs no more to index than one that says it thrice. */
export const MAX_WORD_REPEATS = 3;

const CAMEL = /[\p{Ll}\p{N}]\p{Lu}/u;
const NOT_WORD = /[^\p{L}\p{N}]+/u;

/**
 * Words of a text, each at most MAX_WORD_REPEATS times: `kebab-case` and `snake_case` split, `camelCase` split and
 * also kept whole (PowerPoint: power, point, powerpoint).
 */
export function searchWords(text: string): string[] {
  const counts = new Map<string, number>();
  for (const word of text.split(NOT_WORD)) {
    if (word === '') continue;
    const count = counts.get(word);
    if (count === undefined) counts.set(word, 1);
    else if (count < MAX_WORD_REPEATS) counts.set(word, count + 1);
  }
  const words: string[] = [];
  for (const [word, count] of counts) {
    const parts = CAMEL.test(word)
      ? [word, ...word.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').split(' ')]
      : undefined;
    for (let n = 0; n < count; n++)
      if (parts === undefined) words.push(word);
      else words.push(...parts);
  }
  return words;
}

/** Stems of words seen, shared by every index: a catalog repeats its words, the stemmer is the costly part. */
const stems = new Map<string, string | null>();
/** Words whose stems are kept at most (a catalog of made-up words cannot grow the map without end). */
const MAX_KEPT_STEMS = 100_000;

/** One word as indexed and searched: lowercase, stemmed (Porter); a stop word is dropped. */
export function searchTerm(word: string): string | null {
  let term = stems.get(word);
  if (term !== undefined) return term;
  const lower = word.toLowerCase();
  term = STOP_WORDS.has(lower) ? null : stemmer(lower);
  if (stems.size >= MAX_KEPT_STEMS) stems.clear();
  stems.set(word, term);
  return term;
}

/** Distinct terms of a query searched at most: a long query costs no more than this many words (each word is a
 * walk over every skill holding it). */
export const MAX_QUERY_TERMS = 32;

/** The terms a query searches for: its words as indexed, each once (a word said twice does not weigh twice), in
 * order, the first MAX_QUERY_TERMS. */
export function queryTerms(query: string): string[] {
  const terms = new Set<string>();
  for (const word of searchWords(query)) {
    const term = searchTerm(word);
    if (term !== null) terms.add(term);
    if (terms.size === MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/** A query given as its terms, space-separated (queryTerms): MiniSearch splits it and takes each term as it is. */
const TERMS_QUERY = { tokenize: (terms: string) => terms.split(' '), processTerm: (term: string) => term };

/** What an index cost, for status and metrics. */
export interface SearchStats {
  /** Milliseconds to read the SKILL.md files and build the index. */
  buildMs: number;
  skills: number;
  /** Distinct terms indexed. */
  terms: number;
  /** Skills whose SKILL.md could not be read: indexed by name and description only. */
  unread: number;
}

export interface SearchHit {
  served: ServedSkill;
  score: number;
}

/** One namespace's search index. */
export interface SkillIndex {
  readonly stats: SearchStats;
  /** Every skill matching some word of `query`, best first (ties by URI). */
  search(query: string): SearchHit[];
}

interface Document {
  id: number;
  name: string;
  description: string;
  headings: string;
  text: string;
}

const FENCE = /^\s*(```|~~~)/;
const HEADING = /^#{1,6}\s/;

/**
 * SKILL.md's body as headings and text, apart; code fences are text. A line that repeats the one before it past
 * MAX_WORD_REPEATS times in a row (no fence between) is left out: its words count as often as they may already (searchWords), so the
 * fields' words are the same, and a body that says one line a thousand times costs no more to read.
 */
function splitBody(body: string): { headings: string; text: string } {
  const headings: string[] = [];
  const text: string[] = [];
  let fenced = false;
  let previous: string | undefined;
  let run = 0;
  for (const line of body.slice(0, MAX_INDEXED_BODY_CHARS).split('\n')) {
    if (FENCE.test(line)) {
      fenced = !fenced;
      previous = undefined;
    } else if (line !== previous) {
      previous = line;
      run = 1;
    } else if (++run > MAX_WORD_REPEATS) continue;
    if (!fenced && HEADING.test(line)) headings.push(line.replace(/^#+\s*/, ''));
    else text.push(line);
  }
  return { headings: headings.join('\n'), text: text.join('\n') };
}

/** SKILL.md after its frontmatter (a served SKILL.md has one, and is UTF-8): no YAML parse needed here. */
function bodyText(bytes: Uint8Array): string | undefined {
  const text = decodeUtf8(bytes)
    ?.replace(/^\uFEFF/, '')
    .replaceAll('\r\n', '\n');
  if (text === undefined || !text.startsWith('---\n')) return undefined;
  const close = /^---[\t ]*$/m.exec(text.slice(4));
  return close === null ? undefined : text.slice(4 + close.index + close[0].length);
}

/** The blob of a skill's SKILL.md. */
const skillMdBlob = (served: ServedSkill) => served.files.get(SKILL_MD)?.file.blob;

/** The body of a SKILL.md read from its blob, or undefined when it cannot be read (the skill is still indexed). */
async function readBody(ns: Namespace, blob: string): Promise<string | undefined> {
  try {
    return bodyText(await ns.readBlob(blob));
  } catch {
    return undefined;
  }
}

/**
 * The body of every skill's SKILL.md: as the indexer read it where the namespace still holds that
 * (Namespace.skillMdBody), read from its blob (READS_AT_ONCE at a time) where not.
 */
async function bodiesOf(ns: Namespace, skills: readonly ServedSkill[]): Promise<Array<string | undefined>> {
  const blobs = skills.map(skillMdBlob);
  const bodies = blobs.map((blob) => (blob === undefined ? undefined : ns.skillMdBody?.(blob)));
  const unread = blobs.flatMap((blob, i) => (blob !== undefined && bodies[i] === undefined ? [i] : []));
  for (let start = 0; start < unread.length; start += READS_AT_ONCE) {
    const batch = unread.slice(start, start + READS_AT_ONCE);
    const read = await Promise.all(batch.map((i) => readBody(ns, blobs[i]!)));
    for (const [offset, i] of batch.entries()) bodies[i] = read[offset];
  }
  return bodies;
}

/** One skill as indexed (its body undefined when its SKILL.md could not be read: name and description only). */
function documentOf(id: number, served: ServedSkill, body: string | undefined): Document {
  return {
    id,
    name: served.skill.name,
    description: served.description,
    ...(body === undefined ? { headings: '', text: '' } : splitBody(body)),
  };
}

/** Builds the index of one namespace's served skills: name, description, SKILL.md headings and text. */
export async function buildSkillIndex(ns: Namespace, skills: readonly ServedSkill[]): Promise<SkillIndex> {
  const started = performance.now();
  const bodies = await bodiesOf(ns, skills);
  const index = new MiniSearch<Document>({
    fields: ['name', 'description', 'headings', 'text'],
    tokenize: searchWords,
    processTerm: searchTerm,
    searchOptions: { boost: BOOST },
  });
  // One document at a time: each is garbage once added, none outlives the young generation.
  for (const [id, served] of skills.entries()) index.add(documentOf(id, served, bodies[id]));
  const stats: SearchStats = {
    buildMs: Math.round((performance.now() - started) * 10) / 10,
    skills: skills.length,
    terms: index.termCount,
    unread: bodies.filter((body) => body === undefined).length,
  };
  return {
    stats,
    // Ids are positions in `skills`, which are sorted by URI: equal scores keep URI order.
    search: (query) =>
      index
        .search(queryTerms(query).join(' '), TERMS_QUERY)
        .sort((a, b) => b.score - a.score || (a.id as number) - (b.id as number))
        .map((result) => ({ served: skills[result.id as number]!, score: result.score })),
  };
}

interface Held {
  index: Promise<SkillIndex>;
  stats?: SearchStats;
}

/** Kept as long as the namespace (and so its snapshot) is served, dropped with it. */
const indexes = new WeakMap<Namespace, Held>();

/** The search index of `ns`, built at its first use from its snapshot's skills. */
export function searchIndexOf(ns: Namespace): Promise<SkillIndex> {
  let held = indexes.get(ns);
  if (held === undefined) {
    const index = buildSkillIndex(ns, snapshotOf(ns).ordered);
    indexes.set(ns, (held = { index }));
    const kept = held;
    // A build that failed is tried again at the next search (its callers get the error).
    index.then(
      (built) => (kept.stats = built.stats),
      () => indexes.delete(ns),
    );
  }
  return held.index;
}

/** What building `ns`'s index cost, once it is built. */
export function searchStatsOf(ns: Namespace): SearchStats | undefined {
  return indexes.get(ns)?.stats;
}

/** The skills of `namespaces` matching `query`, best first across them (ties by URI). */
export async function searchNamespaces(
  namespaces: readonly Namespace[],
  query: string,
): Promise<SearchHit[]> {
  const built = await Promise.all(namespaces.map(searchIndexOf));
  if (built.length === 1) return built[0]!.search(query);
  return built
    .flatMap((index) => index.search(query))
    .sort((a, b) => b.score - a.score || compareText(a.served.uri, b.served.uri));
}
