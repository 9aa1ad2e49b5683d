import type { Namespace } from '../catalog/index.ts';
import type { Postings } from '../index/postings.ts';
import { buildSearchData, type SearchData } from '../index/searchBuild.ts';
import { NOT_WORD, nameKey, STOP_WORDS, termsOfWord } from '../index/terms.ts';
import { SKILL_MD } from '../skills/index.ts';
import type { SearchStats } from '../shared/status.ts';
import { type ParsedQuery, rankAcross, rankTop } from './ranking.ts';
import type { ServedSkill, Snapshot } from './snapshot.ts';

export { MAX_INDEXED_BODY_CHARS, nameKey, searchTerms, skillTerms } from '../index/terms.ts';

/** Distinct terms of a query searched at most: a long query costs no more than this many words (each word is a
 * walk over every skill holding it). */
export const MAX_QUERY_TERMS = 32;

/** How much a part of a camelCase word counts in a query, against the word whole. */
export const PART_WEIGHT = 0.5;

/** A British `-our` word spelt as the catalogs mostly spell it (`colours`: colors, `behaviour`: behavior), or null. */
function american(word: string): string | null {
  const lower = word.toLowerCase();
  const spelt = lower.replace(/(\p{L}{2,})our(s|ed|ing|ite|ites)?$/u, '$1or$2');
  return spelt === lower ? null : spelt;
}

/** The terms a query searches for: its words as indexed, each once (a word said twice does not weigh twice), in
 * order, the first MAX_QUERY_TERMS. */
export function queryTerms(query: string): string[] {
  return parseQuery(query).terms.map(({ term }) => term);
}

/**
 * A query as ranked: its words' terms (a British `-our` word's American spelling too: `colours` finds `colors`),
 * then two words side by side joined (`word press`: `wordpress`, as a `WordPress` or `googlemeet` is indexed), each
 * term once, the first MAX_QUERY_TERMS; and the query as a name.
 */
export function parseQuery(query: string): ParsedQuery {
  const words = query.split(NOT_WORD).filter((word) => word !== '');
  const terms = new Map<string, { word: string; weight: number }>();
  const add = (term: string, word: string, weight: number) =>
    terms.size < MAX_QUERY_TERMS && !terms.has(term) && terms.set(term, { word, weight });
  // A camelCase word's parts count less than the word (`ImageKit`: imagekit, then image and kit).
  for (const word of words) {
    for (const [i, term] of termsOfWord(word).entries()) add(term, word, i === 0 ? 1 : PART_WEIGHT);
    const spelt = american(word);
    if (spelt !== null) for (const term of termsOfWord(spelt)) add(term, word, 1);
  }
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

/** A skill as a search build reads it: its name, description and SKILL.md blob. */
const inputOf = (served: ServedSkill) => ({
  name: served.skill.name,
  description: served.description,
  blob: served.files.get(SKILL_MD)?.file.blob,
});

/** The search index over `skills` (ids: positions in it) of `data`, with what it cost. */
function skillIndexOf(skills: readonly ServedSkill[], data: SearchData, buildMs: number): SkillIndex {
  const { postings } = data;
  const named = new Map<string, number[]>();
  for (const [id, served] of skills.entries()) {
    const key = nameKey(served.skill.name);
    const known = named.get(key);
    if (known === undefined) named.set(key, [id]);
    else known.push(id);
  }
  const stats: SearchStats = {
    buildMs: Math.round(buildMs * 10) / 10,
    skills: skills.length,
    terms: postings.termCount,
    bytes: postings.bytes,
    unread: data.unread,
    cut: data.cut,
    stored: data.stored === true,
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

/**
 * Builds the index of one namespace's served skills (name and description, SKILL.md headings and text), reading
 * each SKILL.md as the indexer handed it on (Namespace.skillMdBody) or from its blob.
 */
export async function buildSkillIndex(ns: Namespace, skills: readonly ServedSkill[]): Promise<SkillIndex> {
  const started = performance.now();
  const data = await buildSearchData(skills.map(inputOf), {
    held: ns.skillMdBody && ((blob) => ns.skillMdBody?.(blob)),
    read: (blob) => ns.readBlob(blob),
  });
  return skillIndexOf(skills, data, performance.now() - started);
}

/** The index of `ns` (its snapshot given): the one saved with its commit's index where the namespace has one, else
 * built here. serving.ts keeps it while a served catalog state holds `ns`. */
export async function loadSkillIndex(ns: Namespace, snapshot: Snapshot): Promise<SkillIndex> {
  if (ns.searchData === undefined) return buildSkillIndex(ns, snapshot.ordered);
  const started = performance.now();
  const data = await ns.searchData();
  return skillIndexOf(snapshot.inIndexOrder, data, performance.now() - started);
}

/** The first `limit` skills of `indexes` matching `query` and how many match (ranking.ts rankTop). */
export const searchIndexesTop = (indexes: readonly SkillIndex[], query: string, limit: number) =>
  rankTop(indexes, parseQuery(query), limit);

/** The skills of `indexes` matching `query`, best first across them (ranking.ts). */
export const searchIndexes = (
  indexes: readonly SkillIndex[],
  query: string,
  groups?: ReadonlyMap<string, string>,
): SearchHit[] => rankAcross(indexes, parseQuery(query), groups);
