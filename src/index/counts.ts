/**
 * Where each term's postings start, held as each term's count of pairs (a byte each) and the start of every
 * `2^shift`-th term: a term's start is its block's plus the counts before it in the block. An index of at most 255
 * skills holds no term more than 255 times: its starts take a byte a term, where blocks of offsets (ascending.ts) took
 * two (1,000 indexes of 100 skills hold 18.0 million terms).
 */
export class Counts {
  private constructor(
    readonly shift: number,
    /** Each term's count of pairs. */
    readonly counts: Uint8Array,
    /** Where each block's first term starts. */
    readonly blocks: Uint32Array,
  ) {}

  /** `starts` (ascending, the last where the last term ends) held so, or undefined when a count passes 255. */
  static of(starts: Uint32Array, shift: number): Counts | undefined {
    const terms = Math.max(0, starts.length - 1);
    const counts = new Uint8Array(terms);
    const blocks = new Uint32Array((terms >>> shift) + 1);
    for (let term = 0; term < terms; term++) {
      const count = starts[term + 1]! - starts[term]!;
      if (count > 0xff) return undefined;
      counts[term] = count;
    }
    for (let block = 0; block < blocks.length; block++)
      blocks[block] = starts[Math.min(block << shift, terms)]!;
    return new Counts(shift, counts, blocks);
  }

  /** Terms held. */
  get size(): number {
    return this.counts.length;
  }

  get byteLength(): number {
    return this.counts.byteLength + this.blocks.byteLength;
  }

  /** Where term `term` starts (`term` up to the count of terms: where the last one ends). */
  at(term: number): number {
    let at = this.blocks[term >>> this.shift]!;
    for (let before = (term >>> this.shift) << this.shift; before < term; before++)
      at += this.counts[before]!;
    return at;
  }

  /** How many pairs term `term` holds. */
  count(term: number): number {
    return this.counts[term]!;
  }

  /** Every start, the last where the last term ends (a copy). */
  toArray(): Uint32Array {
    const starts = new Uint32Array(this.counts.length + 1);
    starts[0] = this.blocks[0] ?? 0;
    for (let term = 0; term < this.counts.length; term++)
      starts[term + 1] = starts[term]! + this.counts[term]!;
    return starts;
  }
}
