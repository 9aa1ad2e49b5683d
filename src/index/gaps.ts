import { after } from './ascending.ts';

/** The largest gap a nibble holds. */
const MOST = 0xf;

/**
 * An ascending array of distinct unsigned 32-bit integers held as each value's gap from the one before it, 4 bits a
 * value, in blocks: a block is its first value (its base) and where it starts, and holds `2^shift` values at most,
 * fewer where the next value is 16 or more past the one before (a new block starts there). A value is its block's
 * base plus the gaps before it in the block; a lookup bisects the bases, then adds up to `2^shift - 1` gaps. A term
 * table's lexicon ids are so (termTable.ts): at 1,000 indexes of 100 skills, 17,986,230 of their 18,011,813 gaps are
 * below 16 (the lexicon numbers a catalog's words densely), so they take half a byte a term, where blocks of 16-bit
 * offsets (ascending.ts) took two.
 */
export class Gaps {
  private constructor(
    readonly shift: number,
    /** Each block's first value. */
    readonly base: Uint32Array,
    /** Where each block starts. */
    readonly first: Uint32Array,
    /** Each value's gap from the one before it (0 for a block's first), two a byte, the even place's low. */
    readonly gaps: Uint8Array,
    readonly size: number,
  ) {}

  /** `values` (ascending, distinct) held so. */
  static of(values: Uint32Array, shift: number): Gaps {
    const most = 2 ** shift;
    const bases: number[] = [];
    const firsts: number[] = [];
    const gaps = new Uint8Array((values.length + 1) >>> 1);
    for (let at = 0; at < values.length; at++) {
      const gap = at === 0 ? Number.POSITIVE_INFINITY : values[at]! - values[at - 1]!;
      if (gap > MOST || at - firsts.at(-1)! === most) {
        bases.push(values[at]!);
        firsts.push(at);
      } else gaps[at >>> 1]! |= gap << ((at & 1) << 2);
    }
    return new Gaps(shift, Uint32Array.from(bases), Uint32Array.from(firsts), gaps, values.length);
  }

  get byteLength(): number {
    return this.base.byteLength + this.first.byteLength + this.gaps.byteLength;
  }

  #gap(at: number): number {
    return (this.gaps[at >>> 1]! >>> ((at & 1) << 2)) & MOST;
  }

  /** Where block `block` ends. */
  #end(block: number): number {
    return block + 1 < this.first.length ? this.first[block + 1]! : this.size;
  }

  at(at: number): number {
    const block = after(this.first, at, 0, this.first.length) - 1;
    let value = this.base[block]!;
    for (let place = this.first[block]! + 1; place <= at; place++) value += this.#gap(place);
    return value;
  }

  /** Where `value` is (-1: not held): the block by bisection of the bases, then its gaps added up to it. */
  indexOf(value: number): number {
    const block = after(this.base, value, 0, this.base.length) - 1;
    if (block < 0) return -1;
    let held = this.base[block]!;
    const end = this.#end(block);
    for (let at = this.first[block]!; ; ) {
      if (held === value) return at;
      if (held > value || ++at === end) return -1;
      held += this.#gap(at);
    }
  }

  toArray(): Uint32Array {
    const values = new Uint32Array(this.size);
    for (let block = 0; block < this.base.length; block++) {
      const end = this.#end(block);
      let value = this.base[block]!;
      values[this.first[block]!] = value;
      for (let at = this.first[block]! + 1; at < end; at++) values[at] = value += this.#gap(at);
    }
    return values;
  }
}
