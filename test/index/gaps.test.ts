import { describe, expect, it } from 'vitest';
import { Gaps } from '../../src/index/gaps.ts';
import { readBack } from '../helpers/ascending.ts';

describe('Gaps', () => {
  it('holds each value as a 4-bit gap from the one before, in blocks of 2^shift, at and indexOf as the array would answer', () => {
    // Blocks of 4: gaps of 1 to 15 only.
    const values = Uint32Array.from([5, 6, 9, 24, 25, 40, 41, 42, 57]);
    const held = Gaps.of(values, 2);
    expect([[...held.base], [...held.first]]).toEqual([
      [5, 25, 57],
      [0, 4, 8],
    ]);
    // 9 gaps, two a byte (5 bytes), and 3 blocks of a base and a start.
    expect(held.byteLength).toBe(5 + 3 * 8);
    readBack(held, values, [0, 4, 7, 8, 10, 23, 26, 39, 43, 56, 58, 2 ** 32 - 1]);
  });

  it('ends a block early where a value is 16 or more past the one before, and at 2^32 - 1', () => {
    // 1, 2 | 18 (16 past 2), 33 (15 past) | 4e9 | 4e9 + 15, 2^32 - 1 (past 4e9 + 15 by far) in blocks of 4.
    const values = Uint32Array.from([1, 2, 18, 33, 4e9, 4e9 + 15, 2 ** 32 - 1]);
    const held = Gaps.of(values, 2);
    expect([[...held.base], [...held.first]]).toEqual([
      [1, 18, 4e9, 2 ** 32 - 1],
      [0, 2, 4, 6],
    ]);
    readBack(held, values, [0, 3, 17, 19, 32, 34, 4e9 - 1, 4e9 + 1, 4e9 + 14, 4e9 + 16, 2 ** 32 - 2]);
    // None, one, a block just full.
    readBack(Gaps.of(new Uint32Array(0), 6), new Uint32Array(0), [0, 1]);
    readBack(Gaps.of(Uint32Array.from([7]), 6), Uint32Array.from([7]), [0, 6, 8]);
    const four = Uint32Array.from([0, 15, 30, 45]);
    expect([...Gaps.of(four, 2).first]).toEqual([0]);
    readBack(Gaps.of(four, 2), four, [1, 14, 16, 44, 46]);
  });
});
