/**
 * An index's distinct terms, sorted by their UTF-8 bytes and packed into one buffer, `\n` between them: a term's
 * id is its rank, found by bisection. 5 bytes a term beside its own; a Map of the same terms held 78 in all (a hash
 * table entry and a string each; 66 MiB at 50 sources of 100 real skills, so 1.3 GiB at 1,000: issue 38).
 */
export class TermTable {
  /** Where each term ends in `bytes` (the next begins one byte later). */
  readonly #ends: Uint32Array;

  private constructor(
    /** The terms, sorted, joined by `\n` (as a search file holds them). */
    readonly bytes: Buffer,
    ends: Uint32Array,
  ) {
    this.#ends = ends;
  }

  /** The table of `terms` (distinct, not empty, without `\n`), and each one's id: `ids[i]` is the id of `terms[i]`. */
  static of(terms: readonly string[]): { table: TermTable; ids: Uint32Array } {
    const encoded = terms.map((term) => Buffer.from(term, 'utf8'));
    const order = Array.from(terms.keys()).sort((x, y) => Buffer.compare(encoded[x]!, encoded[y]!));
    const ids = new Uint32Array(terms.length);
    for (const [rank, index] of order.entries()) ids[index] = rank;
    const table = TermTable.read(Buffer.from(order.map((index) => terms[index]!).join('\n'), 'utf8'));
    return { table: table!, ids };
  }

  /** The table `bytes` hold (its own copy), or undefined unless they are distinct non-empty terms, ascending. */
  static read(bytes: Buffer): TermTable | undefined {
    const own = Buffer.from(bytes);
    const ends: number[] = [];
    for (let at = own.indexOf(10); at !== -1; at = own.indexOf(10, at + 1)) ends.push(at);
    if (own.length > 0) ends.push(own.length);
    // No empty term (only the first could be, the others ascending after it).
    if (ends[0] === 0) return undefined;
    // Each term after the one before it, so ids are ranks and bisection finds every term.
    for (let id = 1; id < ends.length; id++) {
      const [start, end] = [(ends[id - 2] ?? -1) + 1, ends[id - 1]!];
      if (own.compare(own, end + 1, ends[id], start, end) >= 0) return undefined;
    }
    return new TermTable(own, Uint32Array.from(ends));
  }

  get size(): number {
    return this.#ends.length;
  }

  /** Bytes held: the terms and where each ends. */
  get byteLength(): number {
    return this.bytes.length + this.#ends.byteLength;
  }

  #start(id: number): number {
    return id === 0 ? 0 : this.#ends[id - 1]! + 1;
  }

  /** The term of id `id`. */
  term(id: number): string {
    return this.bytes.toString('utf8', this.#start(id), this.#ends[id]);
  }

  /** The id of `term` (its UTF-8 bytes, or the string), or undefined when the table does not hold it. */
  idOf(term: string | Buffer): number | undefined {
    const key = typeof term === 'string' ? Buffer.from(term, 'utf8') : term;
    const id = this.lowerBound(key);
    return id < this.#ends.length && this.#compare(key, this.#start(id), this.#ends[id]!) === 0
      ? id
      : undefined;
  }

  /** The first id whose term is not below `key` (the table's size when there is none). */
  lowerBound(key: Buffer): number {
    let low = 0;
    let high = this.#ends.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#compare(key, this.#start(middle), this.#ends[middle]!) > 0) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  /** Whether the term of id `id` begins with the bytes `key`. */
  startsWith(id: number, key: Buffer): boolean {
    const start = this.#start(id);
    if (this.#ends[id]! - start < key.length) return false;
    for (let at = 0; at < key.length; at++) if (this.bytes[start + at] !== key[at]) return false;
    return true;
  }

  /**
   * `key` against the term at `start`..`end`, as Buffer.compare orders them: compared here, a term is a few bytes
   * (Buffer.compare's call into C++ was 45% of a search over 1,000 namespaces).
   */
  #compare(key: Buffer, start: number, end: number): number {
    const { bytes } = this;
    const length = Math.min(key.length, end - start);
    for (let at = 0; at < length; at++) {
      const order = key[at]! - bytes[start + at]!;
      if (order !== 0) return order;
    }
    return key.length - (end - start);
  }
}
