/** A typed array's constructor: what `Scratch.take` makes. */
export interface TypedArrayKind<T> {
  readonly BYTES_PER_ELEMENT: number;
  new (length: number): T;
  new (buffer: ArrayBuffer, byteOffset: number, length: number): T;
}

/**
 * Typed arrays a synchronous decode works in and drops, cut from one buffer it keeps between decodes (reset at the
 * start of each): a search file's load made and dropped about ten arrays the size of its postings, each a malloc of
 * its own between the ones kept. (A warm restart of 1,000 indexes of 100 skills, glibc told to map every buffer of
 * 32 KiB or more on its own, had 50 to 100 MiB less RSS at ready: what such short-lived buffers left behind. This
 * scratch alone moved RSS within the runs' spread, 605 to 614 MiB.) An array past `keep` bytes is made on its own.
 */
export class Scratch {
  #buffer = new ArrayBuffer(0);
  #used = 0;

  constructor(readonly keep: number) {}

  /** Every array taken since is free again: a decode starts here. */
  reset(): void {
    this.#used = 0;
  }

  /** `count` zeroed items, valid until the next `reset`. */
  take<T extends { fill(value: number): T }>(Kind: TypedArrayKind<T>, count: number): T {
    const bytes = count * Kind.BYTES_PER_ELEMENT;
    if (bytes > this.keep) return new Kind(count);
    // Aligned to 8 bytes, so any kind of array can start there.
    let at = (this.#used + 7) & ~7;
    if (at + bytes > this.#buffer.byteLength) {
      // Arrays taken before stay in the old buffer (theirs until they are dropped); this one starts the new one.
      this.#buffer = new ArrayBuffer(
        Math.min(this.keep, Math.max(2 * this.#buffer.byteLength, 8 * bytes, 65_536)),
      );
      at = 0;
    }
    this.#used = at + bytes;
    return new Kind(this.#buffer, at, count).fill(0);
  }

  /** Bytes it keeps. */
  get byteLength(): number {
    return this.#buffer.byteLength;
  }
}

/** A scratch that keeps nothing: each array is made on its own (for callers that keep what they are given). */
export const FRESH = new Scratch(0);
