import { Gaps } from './gaps.ts';
import { compareBytes, type Interned, type Lexicon, PROCESS_TERMS, type TermPool } from './lexicon.ts';
import { FRESH, type Scratch } from './scratch.ts';

/**
 * An index's distinct terms, as ids of the process's lexicon (lexicon.ts), ascending: a term's id here is its place
 * among them, found by bisecting integers once the lexicon gave its id (a hash probe). The bytes are the lexicon's,
 * each term held once however many indexes hold it: about half a byte a term here (gaps.ts). (Before: the terms' own
 * bytes sorted, `\n` between them, and where each ended, about 12 bytes a term, each lookup a bisection comparing
 * bytes; a Map of the same terms held 78 in all: 66 MiB at 50 sources of 100 real skills, so 1.3 GiB at 1,000.)
 */
export class TermTable implements Interned {
  #lexicon: Lexicon;
  /** The terms' lexicon ids, ascending: 4 bits a term where the gap from the one before fits (gaps.ts). */
  #ids: Gaps;
  /** One bit a term, in its order: set where it stands in some skill's name or description (Postings sets them). */
  #about: Uint8Array;

  private constructor(lexicon: Lexicon, ids: Uint32Array) {
    this.#lexicon = lexicon;
    this.#ids = Gaps.of(ids, IDS_BLOCK_SHIFT);
    this.#about = new Uint8Array((ids.length + 7) >>> 3);
  }

  /**
   * The table of `terms` (distinct, not empty, without `\n`), and each one's id: `ids[i]` is the id of `terms[i]`.
   * Interned in `pool`.
   */
  static of(
    terms: readonly string[],
    pool: TermPool = PROCESS_TERMS,
  ): { table: TermTable; ids: Uint32Array } {
    const lexicon = pool.lexiconFor(terms.length);
    const interned = Uint32Array.from(terms, (term) => lexicon.intern(Buffer.from(term, 'utf8')));
    const { table, order } = TermTable.#held(pool, lexicon, interned);
    const ids = new Uint32Array(terms.length);
    for (const [id, index] of order.entries()) ids[index] = id;
    return { table, ids };
  }

  /**
   * The table of the terms `bytes` hold (joined by `\n`, ascending by their bytes, as a search file holds them;
   * interned in `pool`) and `order[id]`, the place in `bytes` of its term `id`; or undefined unless they are distinct
   * non-empty terms, ascending. What it works in, `order` too, is taken from `scratch` (valid until its next reset).
   */
  static read(
    bytes: Buffer,
    pool: TermPool = PROCESS_TERMS,
    scratch: Scratch = FRESH,
  ): { table: TermTable; order: Uint32Array } | undefined {
    let count = bytes.length > 0 ? 1 : 0;
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) count++;
    const ends = scratch.take(Uint32Array, count);
    for (let id = 0, at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) ends[id++] = at;
    if (count > 0) ends[count - 1] = bytes.length;
    // No empty term, and each after the one before it (so a file's terms are distinct).
    for (let id = 0, start = 0; id < ends.length; start = ends[id++]! + 1)
      if (
        ends[id] === start ||
        (id > 0 && compareBytes(bytes, (ends[id - 2] ?? -1) + 1, start - 1, bytes, start, ends[id]!) >= 0)
      )
        return undefined;
    const lexicon = pool.lexiconFor(ends.length);
    const interned = scratch.take(Uint32Array, ends.length);
    for (let id = 0, start = 0; id < ends.length; start = ends[id++]! + 1)
      interned[id] = lexicon.intern(bytes, start, ends[id]);
    return TermTable.#held(pool, lexicon, interned, scratch);
  }

  /** The table of the lexicon ids `interned` (distinct), and where each of its terms was in `interned`. */
  static #held(pool: TermPool, lexicon: Lexicon, interned: Uint32Array, scratch: Scratch = FRESH) {
    // Sorted as numbers (no comparator called): a term's lexicon id, then its place (below 2^21: MAX_INDEX_TERMS).
    // Loops, not TypedArray.from with a function (which iterates generically: most of a load's time).
    const keyed = scratch.take(Float64Array, interned.length);
    for (let at = 0; at < interned.length; at++) keyed[at] = interned[at]! * PLACES + at;
    keyed.sort();
    const order = scratch.take(Uint32Array, interned.length);
    // The table holds them in blocks (Gaps.of copies them).
    const ids = scratch.take(Uint32Array, interned.length);
    for (let at = 0; at < keyed.length; at++) {
      order[at] = keyed[at]! % PLACES;
      ids[at] = interned[order[at]!]!;
    }
    const table = new TermTable(lexicon, ids);
    pool.hold(table);
    return { table, order };
  }

  /** The terms' lexicon ids, ascending (a copy where they are held in blocks). */
  get lexiconIds(): Uint32Array {
    return this.#ids.toArray();
  }

  get aboutBits(): Uint8Array {
    return this.#about;
  }

  moveTo(to: Lexicon, ids: Uint32Array): void {
    this.#ids = Gaps.of(
      this.lexiconIds.map((id) => ids[id]!),
      IDS_BLOCK_SHIFT,
    );
    this.#lexicon = to;
    this.#aboutFilter = this.#filter();
  }

  /** Done marking: its filter of names' and descriptions' terms made and the lexicon's sorted (so a first search
   * does neither). */
  sealAbout(): void {
    this.#aboutFilter = this.#filter();
    this.#lexicon.settle();
  }

  /** Marks term `id` as standing in some skill's name or description (here and in the lexicon). */
  markAbout(id: number): void {
    this.#about[id >>> 3]! |= 1 << (id & 7);
    this.#lexicon.markAbout(this.#ids.at(id));
    this.#aboutFilter = undefined;
  }

  /** A Bloom filter of the lexicon ids of its terms of names and descriptions (made when sealed, or at its first use
   * after a term is marked). */
  #aboutFilter: Uint32Array | undefined;

  /**
   * Whether the term of lexicon id `lexiconId` may stand in a name or description here: false means it does not
   * (about 1 in 20 say true wrongly). A query's variants are checked against every index searched, most of which do
   * not hold a rare one: this answers them without a bisection each.
   */
  mayBeAbout(lexiconId: number): boolean {
    const filter = (this.#aboutFilter ??= this.#filter());
    const mask = filter.length * 32 - 1;
    const [one, two] = filterBits(lexiconId, mask);
    return (filter[one >>> 5]! & (1 << (one & 31))) !== 0 && (filter[two >>> 5]! & (1 << (two & 31))) !== 0;
  }

  /** 8 bits a term of a name or description (a power of two, 64 at least), two set for each. */
  #filter(): Uint32Array {
    let count = 0;
    for (let id = 0; id < this.size; id++) if (this.isAbout(id)) count++;
    let bits = 64;
    while (bits < count * 8) bits *= 2;
    const filter = new Uint32Array(bits / 32);
    for (let id = 0; id < this.size; id++)
      if (this.isAbout(id))
        for (const bit of filterBits(this.#ids.at(id), bits - 1)) filter[bit >>> 5]! |= 1 << (bit & 31);
    return filter;
  }

  /** Whether term `id` (-1: none) stands in some skill's name or description. */
  isAbout(id: number): boolean {
    return id >= 0 && (this.#about[id >>> 3]! & (1 << (id & 7))) !== 0;
  }

  get lexicon(): Lexicon {
    return this.#lexicon;
  }

  get size(): number {
    return this.#ids.size;
  }

  /** Bytes the table holds of its own (the lexicon's are shared). */
  get byteLength(): number {
    return this.#ids.byteLength + this.#about.byteLength + (this.#aboutFilter?.byteLength ?? 0);
  }

  /** The table's ids in the order of their terms' bytes: `byBytes()[i]` is the id of the i-th term so ordered. */
  byBytes(): Uint32Array {
    const lexicon = this.#lexicon;
    const ids = this.lexiconIds;
    return Uint32Array.from(ids.keys()).sort((x, y) => lexicon.compareIds(ids[x]!, ids[y]!));
  }

  /** The terms in the order `order` gives (byBytes()'s, unless given), joined by `\n`: what a search file holds. */
  joined(order: Uint32Array = this.byBytes()): Buffer {
    const parts: Buffer[] = [];
    for (const id of order) {
      if (parts.length > 0) parts.push(NEWLINE);
      parts.push(this.#lexicon.bytesOf(this.#ids.at(id)));
    }
    return Buffer.concat(parts);
  }

  /** The term of id `id`. */
  term(id: number): string {
    return this.#lexicon.term(this.#ids.at(id));
  }

  /** The id of `term` (its UTF-8 bytes, or the string), or undefined when the table does not hold it. */
  idOf(term: string | Buffer): number | undefined {
    const key = typeof term === 'string' ? Buffer.from(term, 'utf8') : term;
    const id = this.idOfLexicon(this.#lexicon.find(key));
    return id < 0 ? undefined : id;
  }

  /** The id here of the term of id `lexiconId` in this table's lexicon (-1: none, or not held here). */
  idOfLexicon(lexiconId: number): number {
    return lexiconId < 0 ? -1 : this.#ids.indexOf(lexiconId);
  }
}

/**
 * Terms of a block of a table's lexicon ids (gaps.ts): a lookup adds up to 63 gaps. At 1,000 indexes of 100 skills a
 * table holds about 18,000 of the lexicon's 309,492 terms, 99.86% of them within 15 ids of the one before; a block
 * ends early at a larger gap (25,583 of them in all). In blocks of 16-bit offsets (ascending.ts) the tables took
 * 41.4 MiB, held whole in 4 bytes a term 73.9.
 */
const IDS_BLOCK_SHIFT = 6;

const NEWLINE = Buffer.from('\n');

/** The two bits of a Bloom filter of `mask + 1` bits that lexicon id `id` sets. */
function filterBits(id: number, mask: number): [number, number] {
  return [(Math.imul(id, 0x9e3779b1) >>> 7) & mask, (Math.imul(id ^ 0x5bd1e995, 0x85ebca6b) >>> 11) & mask];
}

/** Places of a table's terms, at most (MAX_INDEX_TERMS is below it). */
const PLACES = 2 ** 21;
