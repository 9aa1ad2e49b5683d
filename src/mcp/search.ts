import { stemmer } from 'stemmer';
import type { Namespace } from '../catalog/index.ts';
import { decodeUtf8, SKILL_MD } from '../skills/index.ts';
import type { SearchStats } from '../shared/status.ts';
import { PLACE, type Postings, PostingsBuilder } from './postings.ts';
import { type ParsedQuery, rankAcross } from './ranking.ts';
import { snapshotOf, type ServedSkill } from './snapshot.ts';

/** A SKILL.md body is indexed up to this many characters (a hostile body costs no more). */
export const MAX_INDEXED_BODY_CHARS = 64 * 1024;
/** SKILL.md files read at once while an index is built. */
const READS_AT_ONCE = 32;

/**
 * English function words: they match everything and say nothing about a task. And `use`: a skill's description says
 * when to use it (the spec asks it to), so "use when…" is in nearly every one (dropping it: top-1 0.861 to 0.875,
 * top-5 0.903 to 0.917 on bench/search.ts's queries, and the walk over the skills holding it, most of them).
 */
const STOP_WORDS = new Set(
  (
    'a an and are as at be but by can could do does for from get got had has have how i if in into is it its me ' +
    'my of on or our should so some that the their them then there these they this to too up us was we what ' +
    'when where which while who why will with without would you your use uses used using'
  ).split(' '),
);

const CAMEL = /([\p{Ll}\p{N}])(\p{Lu})/u;
const CAMELS = new RegExp(CAMEL.source, 'gu');
const NOT_WORD = /[^\p{L}\p{N}]+/u;

/** One word as indexed and searched: lowercase, stemmed (Porter); a stop word is dropped. */
function termOf(word: string): string | null {
  const lower = word.toLowerCase();
  return STOP_WORDS.has(lower) ? null : stemmer(lower);
}

/** The terms of words seen, shared by every index: a catalog repeats its words, the stemmer is the costly part. */
const wordTerms = new Map<string, readonly string[]>();
/** Words whose terms are kept at most (a catalog of made-up words cannot grow the map without end). */
const MAX_KEPT_WORDS = 100_000;

/** The terms of one word: its own, and where it is camelCase its parts' too (PowerPoint: powerpoint, power, point). */
function termsOfWord(word: string): readonly string[] {
  let terms = wordTerms.get(word);
  if (terms !== undefined) return terms;
  // A copy: a word split out of a text can be a slice of it, and would keep the whole text (a 64 KiB body) alive
  // in this map and in the index (62 MiB for a thousand such bodies, each with a long word of its own).
  const own = structuredClone(word);
  const parts = CAMEL.test(own) ? [own, ...own.replace(CAMELS, '$1 $2').split(' ')] : [own];
  terms = parts.map(termOf).filter((term) => term !== null);
  if (wordTerms.size >= MAX_KEPT_WORDS) wordTerms.clear();
  wordTerms.set(own, terms);
  return terms;
}

/** The terms of a text, in order, as often as it says them: `kebab-case` and `snake_case` split, `camelCase` split
 * and also kept whole, lowercase, stemmed, without stop words. */
export function searchTerms(text: string): string[] {
  return text.split(NOT_WORD).flatMap((word) => (word === '' ? [] : termsOfWord(word)));
}

/** Distinct terms of a query searched at most: a long query costs no more than this many words (each word is a
 * walk over every skill holding it). */
export const MAX_QUERY_TERMS = 32;

/** How much a part of a camelCase word counts in a query, against the word whole. */
export const PART_WEIGHT = 0.5;

/** The terms a query searches for: its words as indexed, each once (a word said twice does not weigh twice), in
 * order, the first MAX_QUERY_TERMS. */
export function queryTerms(query: string): string[] {
  return parseQuery(query).terms.map(({ term }) => term);
}

/**
 * A query as ranked: its words' terms, then two words side by side joined (`word press`: `wordpress`, as a
 * `WordPress` or `googlemeet` is indexed), each term once, the first MAX_QUERY_TERMS; and the query as a name.
 */
export function parseQuery(query: string): ParsedQuery {
  const words = query.split(NOT_WORD).filter((word) => word !== '');
  const terms = new Map<string, { word: string; weight: number }>();
  const add = (term: string, word: string, weight: number) =>
    terms.size < MAX_QUERY_TERMS && !terms.has(term) && terms.set(term, { word, weight });
  // A camelCase word's parts count less than the word (`ImageKit`: imagekit, then image and kit).
  for (const word of words)
    for (const [i, term] of termsOfWord(word).entries()) add(term, word, i === 0 ? 1 : PART_WEIGHT);
  for (let i = 1; i < words.length; i++) {
    const [left, right] = [words[i - 1]!.toLowerCase(), words[i]!.toLowerCase()];
    if (STOP_WORDS.has(left) || STOP_WORDS.has(right) || left === right) continue;
    for (const term of termsOfWord(left + right)) add(term, `${words[i - 1]} ${words[i]}`, 1);
  }
  return { terms: [...terms].map(([term, rest]) => ({ term, ...rest })), name: nameKey(query) };
}

export type { SearchStats } from '../shared/status.ts';

/** The places a query's words matched in one skill, by place (each word as the query says it). */
export interface Matched {
  /** The query is the skill's name, or its name's words. */
  exactName?: true;
  name?: string[];
  description?: string[];
  headings?: string[];
  text?: string[];
}

export interface SearchHit {
  served: ServedSkill;
  score: number;
  /** Where the query's words matched (worked out when asked: a query can match thousands of skills). */
  matched(): Matched;
  /** Other versions of the same skill (refs of one `refs:` source) that matched too, newest first. */
  versions?: ServedSkill[];
}

/** One namespace's search index. */
export interface SkillIndex {
  readonly stats: SearchStats;
  readonly postings: Postings;
  /** The skills (positions in the namespace's ordered skills) whose name is `key` (nameKey). */
  named(key: string): readonly number[] | undefined;
  readonly skills: readonly ServedSkill[];
  /** Every skill matching some word of `query`, best first (ties by URI), ranked by this index's statistics. */
  search(query: string): SearchHit[];
}

const FENCE = /^\s*(```|~~~)/;
const HEADING = /^#{1,6}\s/;

/**
 * Hands each line of SKILL.md's body to `heading` or `text`; code fences are text. A line the same as the one before
 * it (no fence between) is left out: its terms count already (placeTerms), and a body that says one line a
 * thousand times costs no more to read.
 */
function eachBodyLine(body: string, heading: (line: string) => void, text: (line: string) => void): void {
  let fenced = false;
  let previous: string | undefined;
  for (const line of body.slice(0, MAX_INDEXED_BODY_CHARS).split('\n')) {
    // A fence is never `previous`: a fence after a fence toggles it again.
    if (line === previous) continue;
    if (FENCE.test(line)) {
      fenced = !fenced;
      previous = undefined;
    } else previous = line;
    if (!fenced && HEADING.test(line)) heading(line);
    else text(line);
  }
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

/** Marks the terms of one place of a skill (its name, its description, its headings, its text) in `terms`. */
function placeTerms(place: number, terms: Map<string, number>): (text: string) => void {
  return (text) => {
    for (const word of text.split(NOT_WORD))
      for (const term of word === '' ? NO_TERMS : termsOfWord(word))
        terms.set(term, (terms.get(term) ?? 0) | place);
  };
}

const NO_TERMS: readonly string[] = [];

/** One skill as indexed: each term it says, in the order first said (name, description, then its SKILL.md body: none
 * when it could not be read), and the places it stands in (PLACE bits). */
export function skillTerms(name: string, description: string, body: string | undefined): Map<string, number> {
  const terms = new Map<string, number>();
  placeTerms(PLACE.name, terms)(name);
  // Its words side by side joined too (`google-meet`: `googlemeet`), as a query may say them.
  const words = name.split(NOT_WORD);
  for (let i = 1; i < words.length; i++) placeTerms(PLACE.name, terms)(words[i - 1]! + words[i]!);
  placeTerms(PLACE.description, terms)(description);
  if (body !== undefined) eachBodyLine(body, placeTerms(PLACE.heading, terms), placeTerms(PLACE.text, terms));
  return terms;
}

/** A name as a query may say it: its words, lowercase, joined by `-` (`Writing plans`, `writing_plans`: `writing-plans`). */
export const nameKey = (text: string) =>
  text
    .toLowerCase()
    .split(NOT_WORD)
    .filter((word) => word !== '')
    .join('-');

/** Builds the index of one namespace's served skills: name and description, SKILL.md headings and text. */
export async function buildSkillIndex(ns: Namespace, skills: readonly ServedSkill[]): Promise<SkillIndex> {
  const started = performance.now();
  const bodies = await bodiesOf(ns, skills);
  const builder = new PostingsBuilder();
  // One skill at a time: its terms are garbage once counted, none outlives the young generation.
  const named = new Map<string, number[]>();
  for (const [id, served] of skills.entries()) {
    builder.add(id, skillTerms(served.skill.name, served.description, bodies[id]));
    const key = nameKey(served.skill.name);
    named.set(key, [...(named.get(key) ?? []), id]);
  }
  const postings = builder.done();
  const stats: SearchStats = {
    buildMs: Math.round((performance.now() - started) * 10) / 10,
    skills: skills.length,
    terms: postings.termCount,
    bytes: postings.bytes,
    unread: bodies.filter((body) => body === undefined).length,
    cut: builder.cut,
  };
  const index: SkillIndex = {
    stats,
    postings,
    skills,
    named: (key) => named.get(key),
    search: (query) => rankAcross([index], parseQuery(query)),
  };
  return index;
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

/** The skills of `namespaces` matching `query`, best first across them (ranking.ts). */
export async function searchNamespaces(
  namespaces: readonly Namespace[],
  query: string,
  groups?: ReadonlyMap<string, string>,
): Promise<SearchHit[]> {
  return rankAcross(await Promise.all(namespaces.map(searchIndexOf)), parseQuery(query), groups);
}
