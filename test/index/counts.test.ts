import { describe, expect, it } from 'vitest';
import { Counts } from '../../src/index/counts.ts';

/** Starts of `counts.length` terms from 0, each term holding its count of pairs. */
const startsOf = (counts: number[]) => {
  const starts = new Uint32Array(counts.length + 1);
  for (const [term, count] of counts.entries()) starts[term + 1] = starts[term]! + count;
  return starts;
};

describe('Counts', () => {
  it('gives back every start and count, across blocks, in a byte a term and 4 bytes a block', () => {
    // 200 terms: blocks of 64 (shift 6), so 4 blocks (the last holding the 8 past 192) and the end.
    const counts = Array.from({ length: 200 }, (_, term) => (term * 37) % 256);
    const starts = startsOf(counts);
    const held = Counts.of(starts, 6)!;
    expect(held.size).toBe(200);
    expect(held.byteLength).toBe(200 + 4 * 4);
    expect([...held.blocks]).toEqual([0, 64, 128, 192].map((term) => starts[term]));
    for (let term = 0; term <= 200; term++) expect(held.at(term)).toBe(starts[term]);
    for (let term = 0; term < 200; term++) expect(held.count(term)).toBe(counts[term]);
    expect(held.toArray()).toEqual(starts);
  });

  it('holds a count of 255, not one of 256; no terms at all', () => {
    expect(Counts.of(startsOf([3, 255, 0]), 6)?.at(3)).toBe(258);
    expect(Counts.of(startsOf([3, 256, 0]), 6)).toBeUndefined();
    const none = Counts.of(new Uint32Array([0]), 6)!;
    expect([none.size, none.at(0), [...none.toArray()], none.byteLength]).toEqual([0, 0, [0], 4]);
  });
});
