import { stemmer } from 'stemmer';
import { ownCopy } from '../shared/text.ts';
import { decodeUtf8 } from '../skills/index.ts';
import { PLACE } from './postings.ts';

/**
 * How a skill's words become search terms, and a query's the same way. It lives with the index (not with the MCP
 * search that ranks them) because the terms are persisted with the commit's index: a restart tokenises nothing.
 */

/** A SKILL.md body is indexed up to this many characters (a hostile body costs no more). */
export const MAX_INDEXED_BODY_CHARS = 64 * 1024;

/**
 * English function words: they match everything and say nothing about a task. And `use`: a skill's description says
 * when to use it (the spec asks it to), so "use when…" is in nearly every one (dropping it: top-1 0.861 to 0.875,
 * top-5 0.903 to 0.917 on bench/search.ts's queries, and the walk over the skills holding it, most of them).
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and are as at be but by can could do does for from get got had has have how i if in into is it its me ' +
    'my of on or our should so some that the their them then there these they this to too up us was we what ' +
    'when where which while who why will with without would you your use uses used using'
  ).split(' '),
);

const CAMEL = /([\p{Ll}\p{N}])(\p{Lu})/u;
const CAMELS = new RegExp(CAMEL.source, 'gu');
/** What separates words. */
export const NOT_WORD = /[^\p{L}\p{N}]+/u;

/** One word as indexed and searched: lowercase, stemmed (Porter); a stop word is dropped. */
function termOf(word: string): string | null {
  const lower = word.toLowerCase();
  return STOP_WORDS.has(lower) ? null : stemmer(lower);
}

/** Words whose terms one memo keeps at most (a catalog of made-up words cannot grow it without end). */
export const MAX_KEPT_WORDS = 100_000;

/** The terms of a word copied out of its text (`own`). */
function termsOfOwn(own: string): readonly string[] {
  const parts = CAMEL.test(own) ? [own, ...own.replace(CAMELS, '$1 $2').split(' ')] : [own];
  return parts.map(termOf).filter((term) => term !== null);
}

/**
 * The terms of one word: its own, and where it is camelCase its parts' too (PowerPoint: powerpoint, power, point).
 * Of a copy of it: a word split out of a text can be a slice of it, and would keep the whole text (a 64 KiB body)
 * alive in a memo and in the index (62 MiB for a thousand such bodies, each with a long word of its own).
 */
export const termsOfWord = (word: string): readonly string[] => termsOfOwn(ownCopy(word));

/** termsOfWord remembered while one build tokenises a catalog (which repeats its words; the stemmer is the costly
 * part), and dropped with it. */
export class WordTerms {
  readonly #terms = new Map<string, readonly string[]>();

  of(word: string): readonly string[] {
    let terms = this.#terms.get(word);
    if (terms === undefined) {
      const own = ownCopy(word);
      terms = termsOfOwn(own);
      if (this.#terms.size >= MAX_KEPT_WORDS) this.#terms.clear();
      this.#terms.set(own, terms);
    }
    return terms;
  }
}

/** The terms of a text, in order, as often as it says them: `kebab-case` and `snake_case` split, `camelCase` split
 * and also kept whole, lowercase, stemmed, without stop words. */
export function searchTerms(text: string, words?: WordTerms): string[] {
  const terms = words === undefined ? termsOfWord : (word: string) => words.of(word);
  return text.split(NOT_WORD).flatMap((word) => (word === '' ? [] : terms(word)));
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
export function bodyText(bytes: Uint8Array): string | undefined {
  const text = decodeUtf8(bytes)
    ?.replace(/^\uFEFF/, '')
    .replaceAll('\r\n', '\n');
  if (text === undefined || !text.startsWith('---\n')) return undefined;
  const close = /^---[\t ]*$/m.exec(text.slice(4));
  return close === null ? undefined : text.slice(4 + close.index + close[0].length);
}

/** Marks the terms of one place of a skill (its name, its description, its headings, its text) in `terms`. */
function placeTerms(place: number, terms: Map<string, number>, words: WordTerms): (text: string) => void {
  return (text) => {
    for (const word of text.split(NOT_WORD))
      for (const term of word === '' ? NO_TERMS : words.of(word))
        terms.set(term, (terms.get(term) ?? 0) | place);
  };
}

const NO_TERMS: readonly string[] = [];

/** One skill as indexed: each term it says, in the order first said (name, description, then its SKILL.md body: none
 * when it could not be read), and the places it stands in (PLACE bits). `words`: the memo of the whole build. */
export function skillTerms(
  name: string,
  description: string,
  body: string | undefined,
  words = new WordTerms(),
): Map<string, number> {
  const terms = new Map<string, number>();
  const at = (place: number) => placeTerms(place, terms, words);
  at(PLACE.name)(name);
  // Its words side by side joined too (`google-meet`: `googlemeet`), as a query may say them.
  const parts = name.split(NOT_WORD);
  for (let i = 1; i < parts.length; i++) at(PLACE.name)(parts[i - 1]! + parts[i]!);
  at(PLACE.description)(description);
  if (body !== undefined) eachBodyLine(body, at(PLACE.heading), at(PLACE.text));
  return terms;
}

/** A name as a query may say it: its words, lowercase, joined by `-` (`Writing plans`, `writing_plans`: `writing-plans`). */
export const nameKey = (text: string) =>
  text
    .toLowerCase()
    .split(NOT_WORD)
    .filter((word) => word !== '')
    .join('-');
