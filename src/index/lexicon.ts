/**
 * Terms interned once for the process: each search index's term table (termTable.ts) holds its terms as ids here,
 * 4 bytes a term, where it held their bytes and where each ended (about 12 bytes a term). 1,000 indexes of 100 real-
 * shaped skills hold 17.9 million terms between them, 52,000 of them distinct: 146 MiB of term bytes held once
 * instead (issue 38).
 *
 * A lexicon only grows; `TermPool` bounds what dead indexes leave in it by moving the live tables to a new one.
 */

/** A lexicon's terms: each id's UTF-8 bytes, one after another in an arena, found by a hash of the bytes. */
export class Lexicon {
  #arena = Buffer.allocUnsafe(1 << 16);
  #used = 0;
  /** Where each term ends in the arena (the next begins there). */
  #ends = new Uint32Array(1 << 12);
  /** Each term's first 6 bytes as a number, in their order: terms are sorted by it first, then by their bytes. */
  #heads = new Float64Array(1 << 12);
  #size = 0;
  /** Open addressing: id + 1 of the term in each slot, 0 for none; at most half full. */
  #slots = new Uint32Array(1 << 13);

  get size(): number {
    return this.#size;
  }

  #start(id: number): number {
    return id === 0 ? 0 : this.#ends[id - 1]!;
  }

  /** The id of the term `key`, or -1 when the lexicon does not hold it: a hash probe (a term no index holds, as most
   * of a query's variants' prefixes, is then looked up in none of them). */
  find(key: Uint8Array): number {
    return this.#slots[this.#slotOf(key, 0, key.length)]! - 1;
  }

  /** The id of the term `bytes[start..end)`, added when it is new. */
  intern(bytes: Uint8Array, start = 0, end = bytes.length): number {
    const slot = this.#slotOf(bytes, start, end);
    if (this.#slots[slot] !== 0) return this.#slots[slot]! - 1;
    const id = this.#add(bytes, start, end);
    this.#slots[slot] = id + 1;
    if (this.#size * 2 > this.#slots.length) this.#rehash();
    return id;
  }

  /** The slot holding the term `bytes[start..end)`, or the empty slot where it would go. */
  #slotOf(bytes: Uint8Array, start: number, end: number): number {
    const mask = this.#slots.length - 1;
    let slot = hash(bytes, start, end) & mask;
    for (let held = this.#slots[slot]!; held !== 0; held = this.#slots[slot]!) {
      if (compareBytes(this.#arena, this.#start(held - 1), this.#ends[held - 1]!, bytes, start, end) === 0)
        return slot;
      slot = (slot + 1) & mask;
    }
    return slot;
  }

  #add(bytes: Uint8Array, start: number, end: number): number {
    const length = end - start;
    if (this.#used + length > this.#arena.length) {
      const arena = Buffer.allocUnsafe(Math.max(this.#arena.length * 2, this.#used + length));
      this.#arena.copy(arena, 0, 0, this.#used);
      this.#arena = arena;
    }
    this.#arena.set(bytes.subarray(start, end), this.#used);
    this.#used += length;
    if (this.#size === this.#ends.length) {
      const ends = new Uint32Array(this.#ends.length * 2);
      ends.set(this.#ends);
      this.#ends = ends;
      const heads = new Float64Array(this.#ends.length);
      heads.set(this.#heads);
      this.#heads = heads;
    }
    this.#ends[this.#size] = this.#used;
    this.#heads[this.#size] = this.#head(this.#size);
    return this.#size++;
  }

  #rehash(): void {
    const slots = new Uint32Array(this.#slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.#size; id++) {
      let slot = hash(this.#arena, this.#start(id), this.#ends[id]!) & mask;
      while (slots[slot] !== 0) slot = (slot + 1) & mask;
      slots[slot] = id + 1;
    }
    this.#slots = slots;
  }

  /** One bit a term: set once the term stands in a name or description of some index interned here. */
  #about = new Uint8Array(1 << 9);
  /** The about terms sorted by their bytes, but for those marked since it was last settled (`#marked`). */
  #aboutSorted = new Uint32Array(0);
  #marked: number[] = [];

  /** Marks the term of id `id` as standing in some skill's name or description (of an index interned here). */
  markAbout(id: number): void {
    if (id >>> 3 >= this.#about.length) {
      const about = new Uint8Array(Math.max(this.#about.length * 2, (id >>> 3) + 1));
      about.set(this.#about);
      this.#about = about;
    }
    const bit = 1 << (id & 7);
    if ((this.#about[id >>> 3]! & bit) === 0) {
      this.#about[id >>> 3]! |= bit;
      this.#marked.push(id);
    }
  }

  /**
   * Puts the terms marked since the last time among the sorted ones: the marked sorted alone, then merged (an index
   * loaded settles its own, so the first search after a start sorts nothing).
   */
  settle(): void {
    if (this.#marked.length === 0) return;
    const order = (x: number, y: number) => this.compareIds(x, y);
    const marked = this.#marked.sort(order);
    const sorted = this.#aboutSorted;
    const merged = new Uint32Array(sorted.length + marked.length);
    // Each marked term's place among the sorted found by bisection, the sorted between copied whole: a load adds a
    // few terms to tens of thousands.
    let [at, from] = [0, 0];
    for (const id of marked) {
      let [low, high] = [from, sorted.length];
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (order(sorted[middle]!, id) < 0) low = middle + 1;
        else high = middle;
      }
      merged.set(sorted.subarray(from, low), at);
      at += low - from;
      from = low;
      merged[at++] = id;
    }
    merged.set(sorted.subarray(from), at);
    this.#aboutSorted = merged;
    this.#marked = [];
  }

  /** Whether the term of id `id` was marked as standing in a name or description. */
  isAbout(id: number): boolean {
    return id >= 0 && ((this.#about[id >>> 3] ?? 0) & (1 << (id & 7))) !== 0;
  }

  /**
   * The marked terms beginning with `prefix` (itself included) of at most `maxLength` characters, in their bytes'
   * order: where a query's variants are looked for (mcp/variants.ts), once for every index searched.
   */
  aboutWithPrefix(prefix: Uint8Array, maxLength: number): number[] {
    this.settle();
    const sorted = this.#aboutSorted;
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.compare(prefix, sorted[middle]!) > 0) low = middle + 1;
      else high = middle;
    }
    const found: number[] = [];
    for (let at = low; at < sorted.length && this.startsWith(sorted[at]!, prefix); at++)
      if (this.term(sorted[at]!).length <= maxLength) found.push(sorted[at]!);
    return found;
  }

  /** The first 6 bytes of the term of id `id` (0 past its end) as one number, in the order of the bytes. */
  #head(id: number): number {
    const start = this.#start(id);
    const end = this.#ends[id]!;
    let head = 0;
    for (let at = start; at < start + 6; at++) head = head * 256 + (at < end ? this.#arena[at]! : 0);
    return head;
  }

  /** The term of id `x` against the term of id `y`, as Buffer.compare orders them: their first 6 bytes as numbers,
   * then, where those are equal, their bytes. */
  compareIds(x: number, y: number): number {
    const arena = this.#arena;
    return (
      this.#heads[x]! - this.#heads[y]! ||
      compareBytes(arena, this.#start(x), this.#ends[x]!, arena, this.#start(y), this.#ends[y]!)
    );
  }

  /** The term of id `id`. */
  term(id: number): string {
    return this.#arena.toString('utf8', this.#start(id), this.#ends[id]);
  }

  /** The bytes of the term of id `id` (a view of the arena: valid until the next term is added). */
  bytesOf(id: number): Buffer {
    return this.#arena.subarray(this.#start(id), this.#ends[id]);
  }

  /** `key` against the term of id `id`, as Buffer.compare orders them. */
  compare(key: Uint8Array, id: number): number {
    return compareBytes(key, 0, key.length, this.#arena, this.#start(id), this.#ends[id]!);
  }

  /** Whether the term of id `id` begins with the bytes `key`. */
  startsWith(id: number, key: Uint8Array): boolean {
    const start = this.#start(id);
    if (this.#ends[id]! - start < key.length) return false;
    const arena = this.#arena;
    for (let at = 0; at < key.length; at++) if (arena[start + at] !== key[at]) return false;
    return true;
  }
}

/** `a[aStart..aEnd)` against `b[bStart..bEnd)`, as Buffer.compare orders them: compared here, a term is a few bytes
 * (Buffer.compare's call into C++ was 45% of a search over 1,000 namespaces, and a third of loading a search file). */
export function compareBytes(
  a: Uint8Array,
  aStart: number,
  aEnd: number,
  b: Uint8Array,
  bStart: number,
  bEnd: number,
): number {
  const length = Math.min(aEnd - aStart, bEnd - bStart);
  for (let at = 0; at < length; at++) {
    const order = a[aStart + at]! - b[bStart + at]!;
    if (order !== 0) return order;
  }
  return aEnd - aStart - (bEnd - bStart);
}

/** FNV-1a over `bytes[start..end)`. */
function hash(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let at = start; at < end; at++) h = Math.imul(h ^ bytes[at]!, 0x01000193);
  return h >>> 0;
}

/** What a pool moves to a new lexicon: a term table (termTable.ts). */
export interface Interned {
  /** Its terms' ids in the lexicon it is interned in now, ascending. */
  readonly lexiconIds: Uint32Array;
  /** Which of them stand in a name or description: one bit each, in the same order. */
  readonly aboutBits: Uint8Array;
  /** Takes `to` as its lexicon, each term's id `id` there now `ids[id]` (a map that keeps ids in their order). */
  moveTo(to: Lexicon, ids: Uint32Array): void;
}

/** Terms a pool's lexicon holds before it is replaced, at least (about 22 MiB at 8 bytes a term). */
export const MIN_POOL_TERMS = 1 << 20;

/**
 * The lexicon term tables are interned in, and the tables living in it. A lexicon only grows, so the terms of indexes
 * dropped since stay in it: when adding a table's terms would pass `limit`, the live tables are moved to a new
 * lexicon (their terms re-interned, in their own order: nothing else changes), and the old one goes with its last
 * reference. The limit is then twice the live terms (at least MIN_POOL_TERMS), so each term interned pays for its
 * move at most once on average; a lexicon never holds much more than twice what live tables need.
 */
export class TermPool {
  #lexicon = new Lexicon();
  #limit: number;
  readonly #live = new Set<WeakRef<Interned>>();
  readonly #gone = new FinalizationRegistry<WeakRef<Interned>>((ref) => this.#live.delete(ref));
  /** Lexicons replaced so far. */
  moves = 0;

  constructor(readonly minTerms = MIN_POOL_TERMS) {
    this.#limit = minTerms;
  }

  get lexicon(): Lexicon {
    return this.#lexicon;
  }

  /** The lexicon a table of `terms` more terms is interned in (a new one, the live tables moved there, when it would
   * pass its limit). */
  lexiconFor(terms: number): Lexicon {
    if (this.#lexicon.size + terms > this.#limit) {
      const from = this.#lexicon;
      const tables: Interned[] = [];
      for (const ref of this.#live) {
        const table = ref.deref();
        if (table === undefined) this.#live.delete(ref);
        else tables.push(table);
      }
      // The live terms, interned anew in the order of their old ids: each table's ids stay ascending, so no
      // table's postings move (they are in the order of its terms' ids).
      const live = new Uint8Array(from.size);
      for (const table of tables) for (const id of table.lexiconIds) live[id] = 1;
      const to = new Lexicon();
      const ids = new Uint32Array(from.size);
      for (let id = 0; id < from.size; id++) if (live[id] === 1) ids[id] = to.intern(from.bytesOf(id));
      for (const table of tables) {
        const about = table.aboutBits;
        for (const [at, id] of table.lexiconIds.entries())
          if (about[at >>> 3]! & (1 << (at & 7))) to.markAbout(ids[id]!);
        table.moveTo(to, ids);
      }
      to.settle();
      this.#lexicon = to;
      this.#limit = Math.max(this.minTerms, 2 * (to.size + terms));
      this.moves++;
    }
    return this.#lexicon;
  }

  /** Keeps `table` (interned in this pool's lexicon now) among the live tables, while it lives. */
  hold(table: Interned): void {
    const ref = new WeakRef(table);
    this.#live.add(ref);
    this.#gone.register(table, ref);
  }
}

/** The pool every term table of the process is interned in, unless it is given another (tests). */
export const PROCESS_TERMS = new TermPool();
