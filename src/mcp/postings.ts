/**
 * A search index's postings, held as a few typed arrays, and ranked by BM25 exactly as MiniSearch ranks one field
 * (k 1.2, b 0.7, the BM25+ lower bound d 0.5; a skill's length is its count of distinct terms; a skill's score is the
 * sum of its matched terms' scores, in query order, times how many of the query's terms it matched).
 *
 * Why not MiniSearch itself, which chose these rules: it keeps each (term, skill) pair as an entry of a Map of its
 * own per term, about 50 bytes, so an index of every skill's name, description and SKILL.md body held 70% of its
 * serving snapshot's heap (bench/search.ts, 5,040 realistic skills; 39% on 5,000 synthetic ones) and took 18% of the
 * commit's indexing time to build. Here a pair is 3 to 5 bytes: 2 or 4 for the skill, 1 for its count, in arrays
 * ordered by term. test/mcp/postings.test.ts holds every score and every order to MiniSearch's on bench's catalog.
 */

/** BM25's parameters as MiniSearch sets them by default: term saturation k, length normalisation b, lower bound d. */
export const BM25 = { k: 1.2, b: 0.7, d: 0.5 } as const;

/** How often a term counts in one skill at most (a place counts a term once, times its weight: 4 at most today). */
const MAX_COUNT = 0xff;

/**
 * Distinct terms one skill is indexed by, at most: the first ones it says (its name and description come first, so
 * they always count). 64 KiB of real prose (READMEs and changelogs, measured) say 1,100 to 1,800; 64 KiB of random
 * words say about 10,000, and a repository can hold thousands of such skills in a small pack (each blob a delta of
 * another): 200 of them made a MiniSearch index of 959 MiB, and one of 105 MiB here before these bounds.
 */
export const MAX_SKILL_TERMS = 4096;
/** Distinct terms one index holds, at most (a term table entry is about 70 bytes: 35 MiB at most). */
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
  readonly #termIds = new Map<string, number>();
  /** Skills holding each term, by term id. */
  readonly #skillsOf: number[] = [];
  /** Each skill's pairs, one skill after another (`#ends[i]` is where skill i's end): term ids, and counts. */
  #terms = new Uint32Array(1024);
  #counts = new Uint8Array(1024);
  #size = 0;
  readonly #ends: number[] = [];
  readonly #lengths: number[] = [];
  #averageLength = 0;
  readonly #said = new Map<string, number>();
  #cut = 0;

  /** Skills some of whose terms were left out (past MAX_SKILL_TERMS, MAX_INDEX_TERMS or MAX_INDEX_POSTINGS). */
  get cut(): number {
    return this.#cut;
  }

  /** Adds skill `id` (the count of skills added so far) with its terms, each as often as it counts. */
  add(id: number, terms: readonly string[]): void {
    if (id !== this.#ends.length) throw new Error(`skill ${id} added as skill ${this.#ends.length}`);
    const said = this.#said;
    const known = this.#termIds;
    const room = this.#size < MAX_INDEX_POSTINGS ? MAX_SKILL_TERMS : MIN_SKILL_TERMS;
    let cut = false;
    let unknown = 0;
    for (const term of terms) {
      const count = said.get(term);
      if (count !== undefined) said.set(term, count + 1);
      else if (said.size === room) cut = true;
      else if (known.has(term)) said.set(term, 1);
      else if (known.size + unknown < MAX_INDEX_TERMS) {
        said.set(term, 1);
        unknown++;
      } else cut = true;
    }
    if (cut) this.#cut++;
    this.#reserve(said.size);
    for (const [term, count] of said) {
      let termId = known.get(term);
      if (termId === undefined) {
        termId = this.#skillsOf.length;
        known.set(term, termId);
        this.#skillsOf.push(0);
      }
      this.#skillsOf[termId]!++;
      this.#terms[this.#size] = termId;
      this.#counts[this.#size++] = Math.min(count, MAX_COUNT);
    }
    this.#ends.push(this.#size);
    // The running mean, computed as MiniSearch computes it (the same float, to the last bit).
    const added = this.#lengths.length;
    this.#averageLength = (this.#averageLength * added + said.size) / (added + 1);
    this.#lengths.push(said.size);
    said.clear();
  }

  /** Room for `more` pairs: the arrays double as they fill. */
  #reserve(more: number): void {
    if (this.#size + more <= this.#terms.length) return;
    const length = Math.max(this.#terms.length * 2, this.#size + more);
    const terms = new Uint32Array(length);
    terms.set(this.#terms.subarray(0, this.#size));
    const counts = new Uint8Array(length);
    counts.set(this.#counts.subarray(0, this.#size));
    this.#terms = terms;
    this.#counts = counts;
  }

  done(): Postings {
    const skills = this.#ends.length;
    const terms = this.#skillsOf.length;
    const starts = new Uint32Array(terms + 1);
    for (let term = 0; term < terms; term++) starts[term + 1] = starts[term]! + this.#skillsOf[term]!;
    const ids = skills <= 0x10000 ? new Uint16Array(this.#size) : new Uint32Array(this.#size);
    const counts = new Uint8Array(this.#size);
    const next = starts.slice(0, terms);
    let at = 0;
    for (let skill = 0; skill < skills; skill++)
      for (const end = this.#ends[skill]!; at < end; at++) {
        const slot = next[this.#terms[at]!]!++;
        ids[slot] = skill;
        counts[slot] = this.#counts[at]!;
      }
    return new Postings(
      this.#termIds,
      starts,
      ids,
      counts,
      Uint32Array.from(this.#lengths),
      this.#averageLength,
    );
  }
}

/** An index's postings: each term's skills (ascending) and counts, and each skill's length. */
export class Postings {
  /** A score per skill and how many query terms it matched, reused by every ranking (each runs to its end at once). */
  readonly #scores: Float64Array;
  readonly #matched: Uint8Array;

  constructor(
    readonly termIds: ReadonlyMap<string, number>,
    /** Where each term's postings start in `ids` and `counts`; the last entry is where the last term's end. */
    private readonly starts: Uint32Array,
    private readonly ids: Uint16Array | Uint32Array,
    private readonly counts: Uint8Array,
    private readonly lengths: Uint32Array,
    private readonly averageLength: number,
  ) {
    this.#scores = new Float64Array(lengths.length);
    this.#matched = new Uint8Array(lengths.length);
  }

  get termCount(): number {
    return this.termIds.size;
  }

  /** Bytes of the typed arrays (postings, lengths, the ranking's scratch); the term table (a Map) aside. */
  get bytes(): number {
    return [this.starts, this.ids, this.counts, this.lengths, this.#scores, this.#matched].reduce(
      (sum, array) => sum + array.byteLength,
      0,
    );
  }

  /**
   * Every skill holding one of `terms` (distinct, at most 255), best first, equal scores by id: each as `hit(id,
   * score)` makes it (one object per skill found: a query of common words finds most of a catalog).
   */
  rank<T>(terms: readonly string[], hit: (id: number, score: number) => T): T[] {
    const { k, b, d } = BM25;
    const skills = this.lengths.length;
    const scores = this.#scores;
    const matched = this.#matched;
    const found: number[] = [];
    for (const term of terms) {
      const termId = this.termIds.get(term);
      if (termId === undefined) continue;
      const from = this.starts[termId]!;
      const to = this.starts[termId + 1]!;
      const held = to - from;
      const idf = Math.log(1 + (skills - held + 0.5) / (held + 0.5));
      for (let at = from; at < to; at++) {
        const skill = this.ids[at]!;
        const count = this.counts[at]!;
        const length = this.lengths[skill]!;
        const score =
          idf * (d + (count * (k + 1)) / (count + k * (1 - b + (b * length) / this.averageLength)));
        if (matched[skill] === 0) {
          found.push(skill);
          scores[skill] = score;
        } else scores[skill]! += score;
        matched[skill]!++;
      }
    }
    for (const id of found) {
      scores[id]! *= matched[id]!;
      matched[id] = 0;
    }
    found.sort((x, y) => scores[y]! - scores[x]! || x - y);
    return found.map((id) => hit(id, scores[id]!));
  }
}
