import { type Interned, type Lexicon, PROCESS_TERMS, type TermPool } from './lexicon.ts';

/**
 * An index's distinct terms, sorted by their UTF-8 bytes: a term's id is its rank, found by bisection. The bytes are
 * the process's lexicon's (lexicon.ts), each term held once however many indexes hold it; the table holds each
 * term's id there, 4 bytes a term. (Before: its own bytes, `\n` between them, and where each ended, about 12 bytes a
 * term; a Map of the same terms held 78 in all: 66 MiB at 50 sources of 100 real skills, so 1.3 GiB at 1,000.)
 */
export class TermTable implements Interned {
  #lexicon: Lexicon;
  /** Each term's id in the lexicon, in the table's order. */
  #ids: Uint32Array;

  private constructor(lexicon: Lexicon, ids: Uint32Array) {
    this.#lexicon = lexicon;
    this.#ids = ids;
  }

  /**
   * The table of `terms` (distinct, not empty, without `\n`), and each one's id: `ids[i]` is the id of `terms[i]`.
   * Interned in `pool`.
   */
  static of(
    terms: readonly string[],
    pool: TermPool = PROCESS_TERMS,
  ): { table: TermTable; ids: Uint32Array } {
    const encoded = terms.map((term) => Buffer.from(term, 'utf8'));
    const order = Array.from(terms.keys()).sort((x, y) => Buffer.compare(encoded[x]!, encoded[y]!));
    const ids = new Uint32Array(terms.length);
    for (const [rank, index] of order.entries()) ids[index] = rank;
    const lexicon = pool.lexiconFor(terms.length);
    const interned = Uint32Array.from(order, (index) => lexicon.intern(encoded[index]!));
    return { table: TermTable.#held(pool, lexicon, interned), ids };
  }

  /**
   * The table `bytes` hold (terms joined by `\n`, as a search file holds them; interned in `pool`), or undefined
   * unless they are distinct non-empty terms, ascending.
   */
  static read(bytes: Buffer, pool: TermPool = PROCESS_TERMS): TermTable | undefined {
    const ends: number[] = [];
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) ends.push(at);
    if (bytes.length > 0) ends.push(bytes.length);
    const lexicon = pool.lexiconFor(ends.length);
    const interned = new Uint32Array(ends.length);
    for (let id = 0, start = 0; id < ends.length; start = ends[id++]! + 1) {
      const end = ends[id]!;
      // No empty term, and each after the one before it (so ids are ranks and bisection finds every term): compared
      // here, a term is a few bytes (Buffer.compare's call into C++ was a third of loading a search file).
      if (end === start || (id > 0 && ascending(bytes, (ends[id - 2] ?? -1) + 1, start - 1, start, end) >= 0))
        return undefined;
      interned[id] = lexicon.intern(bytes, start, end);
    }
    return TermTable.#held(pool, lexicon, interned);
  }

  static #held(pool: TermPool, lexicon: Lexicon, ids: Uint32Array): TermTable {
    const table = new TermTable(lexicon, ids);
    pool.hold(table);
    return table;
  }

  moveTo(to: Lexicon): void {
    const from = this.#lexicon;
    this.#ids = this.#ids.map((id) => to.intern(from.bytesOf(id)));
    this.#lexicon = to;
  }

  get size(): number {
    return this.#ids.length;
  }

  /** Bytes the table holds of its own (the lexicon's are shared). */
  get byteLength(): number {
    return this.#ids.byteLength;
  }

  /** The terms, joined by `\n`: what a search file holds. */
  get bytes(): Buffer {
    const parts: Buffer[] = [];
    for (const [at, id] of this.#ids.entries()) {
      if (at > 0) parts.push(NEWLINE);
      parts.push(this.#lexicon.bytesOf(id));
    }
    return Buffer.concat(parts);
  }

  /** The term of id `id`. */
  term(id: number): string {
    return this.#lexicon.term(this.#ids[id]!);
  }

  /** The id of `term` (its UTF-8 bytes, or the string), or undefined when the table does not hold it. */
  idOf(term: string | Buffer): number | undefined {
    const key = typeof term === 'string' ? Buffer.from(term, 'utf8') : term;
    if (!this.#lexicon.holds(key)) return undefined;
    const id = this.lowerBound(key);
    return id < this.#ids.length && this.#lexicon.compare(key, this.#ids[id]!) === 0 ? id : undefined;
  }

  /** The first id whose term is not below `key` (the table's size when there is none). */
  lowerBound(key: Buffer): number {
    const lexicon = this.#lexicon;
    const ids = this.#ids;
    let low = 0;
    let high = ids.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (lexicon.compare(key, ids[middle]!) > 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Whether the term of id `id` begins with the bytes `key`. */
  startsWith(id: number, key: Buffer): boolean {
    return this.#lexicon.startsWith(this.#ids[id]!, key);
  }
}

const NEWLINE = Buffer.from('\n');

/** `bytes[a..aEnd)` against `bytes[b..bEnd)`, as Buffer.compare orders them. */
function ascending(bytes: Buffer, a: number, aEnd: number, b: number, bEnd: number): number {
  const length = Math.min(aEnd - a, bEnd - b);
  for (let at = 0; at < length; at++) {
    const order = bytes[a + at]! - bytes[b + at]!;
    if (order !== 0) return order;
  }
  return aEnd - a - (bEnd - b);
}
