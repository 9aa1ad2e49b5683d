/**
 * An ascending array of unsigned 32-bit integers held in 2 bytes a value and 4 or 8 a block: a block is its first
 * value (its base), where it starts (kept only where some block ends early), and each of its values' 16-bit offset
 * from the base. A block holds `2^shift` values
 * at most, fewer where the next value is 65,536 or more past its base (a new block starts there). A search index holds
 * two such arrays: where each term's postings start (blocks of 256 terms, which hold fewer than 65,536 pairs in an
 * index of 256 skills or fewer), and its terms' lexicon ids (blocks of 64, ended early at a gap: a table's terms
 * shared with other indexes have low ids and its own are interned together, far past them).
 */
export class Ascending {
  private constructor(
    readonly shift: number,
    /** Each block's first value. */
    readonly base: Uint32Array,
    /** Where each block starts; undefined where every block but the last holds `2^shift` values. */
    readonly first: Uint32Array | undefined,
    readonly low: Uint16Array,
  ) {}

  /** `values` (ascending) held so. */
  static of(values: Uint32Array, shift: number): Ascending {
    const most = 2 ** shift;
    const bases: number[] = [];
    const firsts: number[] = [];
    const low = new Uint16Array(values.length);
    let regular = true;
    for (let at = 0; at < values.length; at++) {
      const value = values[at]!;
      const last = firsts.length - 1;
      if (last < 0 || at - firsts[last]! === most || value - bases[last]! > 0xffff) {
        if (last >= 0 && at - firsts[last]! < most) regular = false;
        bases.push(value);
        firsts.push(at);
      }
      low[at] = value - bases.at(-1)!;
    }
    return new Ascending(shift, Uint32Array.from(bases), regular ? undefined : Uint32Array.from(firsts), low);
  }

  get size(): number {
    return this.low.length;
  }

  get byteLength(): number {
    return this.base.byteLength + (this.first?.byteLength ?? 0) + this.low.byteLength;
  }

  /** The block holding place `at`. */
  #blockOf(at: number): number {
    return this.first === undefined ? at >>> this.shift : after(this.first, at, 0, this.first.length) - 1;
  }

  /** Where block `block` starts. */
  #start(block: number): number {
    return this.first === undefined ? block << this.shift : this.first[block]!;
  }

  at(at: number): number {
    return this.base[this.#blockOf(at)]! + this.low[at]!;
  }

  /** Where `value` is (-1: not held), by bisection of the blocks' bases and then of the block's offsets. */
  indexOf(value: number): number {
    const { base, low } = this;
    const block = after(base, value, 0, base.length) - 1;
    if (block < 0 || value - base[block]! > 0xffff) return -1;
    const offset = value - base[block]!;
    const end = block + 1 < base.length ? this.#start(block + 1) : low.length;
    // The first offset of the block not below `offset`.
    const at = after(low, offset - 1, this.#start(block), end);
    return at < end && low[at] === offset ? at : -1;
  }

  toArray(): Uint32Array {
    const values = new Uint32Array(this.size);
    for (let block = 0, at = 0; block < this.base.length; block++) {
      const end = block + 1 < this.base.length ? this.#start(block + 1) : values.length;
      for (; at < end; at++) values[at] = this.base[block]! + this.low[at]!;
    }
    return values;
  }
}

/** The first place in `values[from, to)` (ascending) whose value is past `value`: `to` when none is. */
export function after(values: Uint32Array | Uint16Array, value: number, from: number, to: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}
