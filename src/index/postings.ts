import { type Lexicon, PROCESS_TERMS, type TermPool } from './lexicon.ts';
import { Ascending } from './ascending.ts';
import { Counts } from './counts.ts';
import { FRESH, type Scratch } from './scratch.ts';
import { TermTable } from './termTable.ts';

/**
 * A search index's postings, held as a few typed arrays: for each term, the skills holding it (ascending) and the
 * places of each it stands in (name, description, a heading, the text: one bit each), and each skill's length (its
 * count of distinct terms). A pair is 3 to 5 bytes: 2 or 4 for the skill, 1 for its places. (A MiniSearch index of
 * the same skills kept each pair in a Map entry of its own, about 50 bytes: 70% of the serving snapshot's heap.)
 *
 * Ranked by BM25F with one saturation: a term's frequency in a skill is the weighted sum of its places', the body's
 * (headings and text) normalised by the skill's length, the name's and description's not (they are short and say
 * what the skill is for); the statistics (skills, how many hold each term, the mean length) are handed in by the
 * caller, summed over every index it searches, so one ranking spans them all.
 */

/** Where a term stands in a skill, as the bits of its posting. */
export const PLACE = { name: 1, description: 2, heading: 4, text: 8 } as const;

/**
 * BM25F's parameters: term saturation k, length normalisation b of the body, each place's weight, and what a term
 * of the name, and of the description, adds past saturation (times its idf). Tuned on bench/searchQueries.ts's
 * tuning set (bench/searchReal.ts): the description weighs most (it says what the skill is for in its author's
 * words; the name's words are there too, mostly), b 0.5 rather than 0.75 (long bodies were held back too much).
 * Multiplying a skill's score by the count of query terms it matched (MiniSearch's rule, kept before) lowered top-1
 * 0.750 to 0.717: long bodies match many of a sentence's ordinary words. The description's bonus (a rare word of the
 * query there outweighs ordinary words of a long body) raised top-1 0.833 to 0.867, top-5 0.950 to 0.967 (0.5 to
 * 0.75 alike).
 */
export const BM25F = {
  k: 1.2,
  b: 0.5,
  name: 1,
  description: 3,
  heading: 1,
  text: 1,
  nameBonus: 1,
  descriptionBonus: 0.5,
};

/** A query's term as a ranking weighs it: its inverse document frequency over everything searched. */
export interface RankedTerm {
  readonly term: string;
  /** Its UTF-8 bytes, encoded once for every index a query searches (else each lookup encodes it). */
  readonly key?: Buffer;
  /** Its inverse document frequency times the query's weight of it (less for a part of a word). */
  readonly idf: number;
  /** It counts only where it stands in a name or a description (a variant of a query's word: mcp/variants.ts). */
  readonly about?: boolean;
}

/** The places that say what a skill is for. */
const ABOUT = PLACE.name | PLACE.description;

/**
 * Distinct terms one skill is indexed by, at most: the first ones it says (its name and description come first, so
 * they always count). 64 KiB of real prose (READMEs and changelogs, measured) say 1,100 to 1,800; 64 KiB of random
 * words say about 10,000, and a repository can hold thousands of such skills in a small pack (each blob a delta of
 * another): 200 of them made a MiniSearch index of 959 MiB, and one of 105 MiB here before these bounds.
 */
export const MAX_SKILL_TERMS = 4096;
/** Distinct terms one index holds, at most (in its term table: termTable.ts). */
export const MAX_INDEX_TERMS = 500_000;
/**
 * (term, skill) pairs past which each further skill is indexed by its first MIN_SKILL_TERMS distinct terms only (its
 * name and description): 5 bytes a pair, 40 MiB, where bench/search.ts's 5,040 skills hold 135,000.
 */
export const MAX_INDEX_POSTINGS = 8_000_000;
/**
 * Distinct terms every skill is indexed by, however full the index: a name and description of real words say fewer.
 */
export const MIN_SKILL_TERMS = 256;

/** Postings of every skill added, in the order added; then `done()`. */
export class PostingsBuilder {
  /** `pool`: where its term table is interned (the process's, unless a test gives its own). */
  constructor(readonly pool: TermPool = PROCESS_TERMS) {}

  readonly #termIds = new Map<string, number>();
  /** Skills holding each term, by term id. */
  readonly #skillsOf: number[] = [];
  /** Each skill's pairs, one skill after another (`#ends[i]` is where skill i's end): term ids, and places. */
  #terms = new Uint32Array(1024);
  #places = new Uint8Array(1024);
  #size = 0;
  readonly #ends: number[] = [];
  readonly #lengths: number[] = [];
  #cut = 0;

  /** Skills some of whose terms were left out (past MAX_SKILL_TERMS, MAX_INDEX_TERMS or MAX_INDEX_POSTINGS). */
  get cut(): number {
    return this.#cut;
  }

  /** Adds skill `id` (the count of skills added so far) with its terms, in the order it says them, and their places. */
  add(id: number, terms: ReadonlyMap<string, number>): void {
    if (id !== this.#ends.length) throw new Error(`skill ${id} added as skill ${this.#ends.length}`);
    const known = this.#termIds;
    const room = this.#size < MAX_INDEX_POSTINGS ? MAX_SKILL_TERMS : MIN_SKILL_TERMS;
    let kept = 0;
    let cut = terms.size > room;
    this.#reserve(Math.min(terms.size, room));
    for (const [term, places] of terms) {
      if (kept === room) break;
      let termId = known.get(term);
      if (termId === undefined) {
        if (known.size === MAX_INDEX_TERMS) {
          cut = true;
          continue;
        }
        termId = this.#skillsOf.length;
        known.set(term, termId);
        this.#skillsOf.push(0);
      }
      this.#skillsOf[termId]!++;
      this.#terms[this.#size] = termId;
      this.#places[this.#size++] = places;
      kept++;
    }
    if (cut) this.#cut++;
    this.#ends.push(this.#size);
    this.#lengths.push(kept);
  }

  /** Room for `more` pairs: the arrays double as they fill. */
  #reserve(more: number): void {
    if (this.#size + more <= this.#terms.length) return;
    const length = Math.max(this.#terms.length * 2, this.#size + more);
    const terms = new Uint32Array(length);
    terms.set(this.#terms.subarray(0, this.#size));
    const places = new Uint8Array(length);
    places.set(this.#places.subarray(0, this.#size));
    this.#terms = terms;
    this.#places = places;
  }

  done(): Postings {
    const skills = this.#ends.length;
    const terms = this.#skillsOf.length;
    // Term ids become places in the table (the order of their lexicon ids): `rank[id]`.
    const { table, ids: rank } = TermTable.of([...this.#termIds.keys()], this.pool);
    const held = new Uint32Array(terms);
    for (let id = 0; id < terms; id++) held[rank[id]!] = this.#skillsOf[id]!;
    const starts = new Uint32Array(terms + 1);
    for (let term = 0; term < terms; term++) starts[term + 1] = starts[term]! + held[term]!;
    const ids = idArray(skills, this.#size);
    const places = new Uint8Array(this.#size);
    const next = starts.slice(0, terms);
    let at = 0;
    for (let skill = 0; skill < skills; skill++)
      for (const end = this.#ends[skill]!; at < end; at++) {
        const slot = next[rank[this.#terms[at]!]!]!++;
        ids[slot] = skill;
        places[slot] = this.#places[at]!;
      }
    return new Postings(table, starts, ids, places, Uint32Array.from(this.#lengths));
  }
}

/**
 * Terms of a block of an index's starts (ascending.ts): a block's terms hold fewer than 65,536 pairs in an index of
 * at most 256 skills, so 1,000 indexes of 100 skills hold 36 MiB of starts instead of 72.
 */
const STARTS_BLOCK_SHIFT = 8;
/**
 * Terms of a block of an index's counts (counts.ts): a term's start adds up to 63 counts (a query looks up one a term
 * an index), for 1 byte and 1/16 a term.
 */
const COUNTS_BLOCK_SHIFT = 6;

/** Skill ids as an index of `skills` skills holds them: 1, 2 or 4 bytes each. */
export type SkillIds = Uint8Array | Uint16Array | Uint32Array;

/** An array of `length` skill ids below `skills`, each of the fewest bytes that hold them. */
function idArray(skills: number, length: number): SkillIds {
  return skills <= 0x100
    ? new Uint8Array(length)
    : skills <= 0x10000
      ? new Uint16Array(length)
      : new Uint32Array(length);
}

/** A term's weight in one skill from its places (BM25F's frequency, before saturation). */
function frequency(places: number, length: number, averageLength: number): number {
  const { b, name, description, heading, text } = BM25F;
  const body = (places & PLACE.heading ? heading : 0) + (places & PLACE.text ? text : 0);
  const about = (places & PLACE.name ? name : 0) + (places & PLACE.description ? description : 0);
  return body === 0 ? about : about + body / (1 - b + (b * length) / averageLength);
}

/** What a term adds past saturation (times its idf) where it stands in the name or the description: they say what
 * the skill is for. */
const bonus = (places: number) =>
  (places & PLACE.name ? BM25F.nameBonus : 0) + (places & PLACE.description ? BM25F.descriptionBonus : 0);

/** An index's postings: each term's skills (ascending) and places, and each skill's length. */
export class Postings {
  /** A score per skill and how many query terms it matched, reused by every ranking (each runs to its end at once). */
  readonly #scores: Float64Array;
  readonly #matched: Uint8Array;
  /** The sum of every skill's length (for the mean length over several indexes). */
  readonly totalLength: number;

  constructor(
    /** The terms; a term's id is its place in `starts`. */
    readonly terms: TermTable,
    /** Where each term's postings start in `ids` and `places`; the last entry is where the last term's end. */
    starts: Uint32Array,
    /** Each term's skills, ascending. */
    readonly ids: SkillIds,
    /** The places of each (term, skill) pair, as PLACE bits. */
    places: Uint8Array,
    /** Each skill's count of distinct terms. */
    readonly lengths: Uint32Array,
  ) {
    this.#scores = new Float64Array(lengths.length);
    this.#matched = new Uint8Array(lengths.length);
    this.totalLength = lengths.reduce((sum, length) => sum + length, 0);
    // Worked out here, as the index is built or loaded, not at a first search: over 1,000 indexes that search took
    // 444 ms against 35 for the next ones.
    markAbout(terms, starts, places);
    this.#starts = Counts.of(starts, COUNTS_BLOCK_SHIFT) ?? Ascending.of(starts, STARTS_BLOCK_SHIFT);
    this.#pairs = places.length;
    this.#places = new Uint8Array((places.length + 1) >>> 1);
    for (let pair = 0; pair < places.length; pair++)
      this.#places[pair >>> 1]! |= places[pair]! << ((pair & 1) << 2);
  }

  /** The places of each pair, 4 bits each (PLACE's), two pairs a byte: 1,000 indexes of 100 skills hold 54.5 million
   * pairs. */
  readonly #places: Uint8Array;
  readonly #pairs: number;

  /** The places of pair `pair` (PLACE bits). */
  #placesAt(pair: number): number {
    return (this.#places[pair >>> 1]! >>> ((pair & 1) << 2)) & 15;
  }

  /** The places of each (term, skill) pair, as PLACE bits, a byte each (a copy). */
  get places(): Uint8Array {
    return Uint8Array.from({ length: this.#pairs }, (_, pair) => this.#placesAt(pair));
  }

  /** Where each term's postings start: a byte a term where no term's count passes 255 (counts.ts), else 2 bytes a
   * term where they fit (ascending.ts). */
  readonly #starts: Counts | Ascending;

  /** Where each term's postings start in `ids` and `places`, the last entry where the last term's end (a copy). */
  get starts(): Uint32Array {
    return this.#starts.toArray();
  }

  /** Where the postings of `term` start (`term` up to the count of terms: where the last one's end). */
  #start(term: number): number {
    return this.#starts.at(term);
  }

  get termCount(): number {
    return this.terms.size;
  }

  get skillCount(): number {
    return this.lengths.length;
  }

  /** How many skills hold `term`. */
  held(term: string | Buffer): number {
    const termId = this.terms.idOf(term);
    return termId === undefined ? 0 : this.heldAt(termId);
  }

  /** The ids of `keys` (UTF-8 bytes of terms) in this index, -1 for one it does not hold: looked up once for a
   * query's statistics and its ranking. `known`: their ids in a lexicon, looked up once for every index interned
   * there (each key's is a hash probe; its id here then a bisection of integers). */
  termIds(keys: readonly Buffer[], known?: KeyIds): Int32Array {
    const lexicon = this.terms.lexicon;
    const lexiconIds = known?.lexicon === lexicon ? known.ids : keyIds(lexicon, keys).ids;
    const ids = new Int32Array(lexiconIds.length);
    // A loop, not map with a function: every query term in every index searched (a third of a search at 1,000).
    for (let at = 0; at < ids.length; at++) ids[at] = this.terms.idOfLexicon(lexiconIds[at]!);
    return ids;
  }

  /** How many skills hold the term of id `termId` (-1: none). */
  heldAt(termId: number): number {
    if (termId < 0) return 0;
    const starts = this.#starts;
    return starts instanceof Counts ? starts.count(termId) : starts.at(termId + 1) - starts.at(termId);
  }

  /** Whether `term` (or its UTF-8 bytes) stands in some skill's name or description. */
  isAboutTerm(term: string | Buffer): boolean {
    return this.terms.isAbout(this.terms.idOf(term) ?? -1);
  }

  /** Where `term` stands in skill `id` (PLACE bits; 0: nowhere), found by bisection. */
  placesOf(term: string | Buffer, id: number): number {
    const termId = this.terms.idOf(term);
    if (termId === undefined) return 0;
    let low = this.#start(termId);
    let high = this.#start(termId + 1);
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.ids[middle]! < id) low = middle + 1;
      else high = middle;
    }
    return low < this.#start(termId + 1) && this.ids[low] === id ? this.#placesAt(low) : 0;
  }

  /** Bytes of the typed arrays (postings, lengths, the ranking's scratch); the term table aside. */
  get bytes(): number {
    const starts = this.#starts;
    const arrays = [this.ids, this.#places, this.lengths, this.#scores, this.#matched];
    return arrays.reduce((sum, array) => sum + array.byteLength, starts.byteLength);
  }

  /**
   * Every skill holding one of `terms` (distinct, at most 255; one `about` only in a name or description), best
   * first, equal scores by id: each as `hit(id, score)` makes it (one object per skill found: a query of common
   * words finds most of a catalog). A skill's score is the sum of its terms' BM25F scores (`averageLength`: the
   * mean over everything searched).
   */
  rank<T>(
    terms: readonly RankedTerm[],
    averageLength: number,
    hit: (id: number, score: number) => T,
    termIds?: Int32Array,
  ): T[] {
    const scores = this.#scores;
    const found = this.#scored(terms, averageLength, termIds);
    found.sort((x, y) => scores[y]! - scores[x]! || x - y);
    return found.map((id) => hit(id, scores[id]!));
  }

  /** Each skill `rank` finds, as `each(id, score)`, in no order: no object and no sort for a skill (rankTop). */
  eachScored(
    terms: readonly RankedTerm[],
    averageLength: number,
    each: (id: number, score: number) => void,
    termIds?: Int32Array,
  ): void {
    const scores = this.#scores;
    for (const id of this.#scored(terms, averageLength, termIds)) each(id, scores[id]!);
  }

  /** The skills holding one of `terms` (their ids here `termIds`, when looked up already: termIds()), their scores in
   * #scores (valid until the next call). */
  #scored(terms: readonly RankedTerm[], averageLength: number, termIds?: Int32Array): number[] {
    const k = BM25F.k;
    const scores = this.#scores;
    const matched = this.#matched;
    const { ids, lengths } = this;
    const found: number[] = [];
    for (const [at, { term, key, idf, about }] of terms.entries()) {
      const termId = termIds === undefined ? (this.terms.idOf(key ?? term) ?? -1) : termIds[at]!;
      if (termId < 0) continue;
      const from = this.#start(termId);
      const to = from + this.heldAt(termId);
      for (let pair = from; pair < to; pair++) {
        const places = this.#placesAt(pair);
        if (about === true && (places & ABOUT) === 0) continue;
        const skill = ids[pair]!;
        const tf = frequency(places, lengths[skill]!, averageLength);
        const score = idf * ((tf * (k + 1)) / (tf + k) + bonus(places));
        if (matched[skill] === 0) {
          found.push(skill);
          scores[skill] = score;
        } else scores[skill]! += score;
        matched[skill]!++;
      }
    }
    for (const id of found) matched[id] = 0;
    return found;
  }
}

/** Marks each term of `terms` that stands in some skill's name or description (by `starts`/`places`). */
function markAbout(terms: TermTable, starts: Uint32Array, places: Uint8Array): void {
  for (let id = 0; id < terms.size; id++)
    for (let at = starts[id]!; at < starts[id + 1]!; at++)
      if (places[at]! & ABOUT) {
        terms.markAbout(id);
        break;
      }
  terms.sealAbout();
}

/** Keys' ids in a lexicon (-1: not there), looked up once for every index interned in it. */
export interface KeyIds {
  readonly lexicon: Lexicon;
  readonly ids: Int32Array;
}

/** The ids of `keys` in `lexicon`. */
export const keyIds = (lexicon: Lexicon, keys: readonly Buffer[]): KeyIds => ({
  lexicon,
  ids: Int32Array.from(keys, (key) => lexicon.find(key)),
});

/**
 * `starts`, `ids` and `places` with their terms in another order: term `k` of the result is term `order[k]` of
 * these (a search file holds terms in their bytes' order, an index in memory in its lexicon's: searchFile.ts).
 */
export function reordered(
  starts: Uint32Array,
  ids: SkillIds,
  places: Uint8Array,
  order: Uint32Array,
  /** Where the starts and places are made (Postings keeps them in other forms); the ids are made on their own. */
  scratch: Scratch = FRESH,
) {
  const to = {
    starts: scratch.take(Uint32Array, starts.length),
    ids: new (ids.constructor as new (length: number) => SkillIds)(ids.length),
    places: scratch.take(Uint8Array, places.length),
  };
  // Element by element: a term holds a few pairs (3 on average at 100 skills), too few for a subarray each.
  let at = 0;
  for (let term = 0; term < order.length; term++) {
    const from = order[term]!;
    for (let pair = starts[from]!, end = starts[from + 1]!; pair < end; pair++, at++) {
      to.ids[at] = ids[pair]!;
      to.places[at] = places[pair]!;
    }
    to.starts[term + 1] = at;
  }
  return to;
}
