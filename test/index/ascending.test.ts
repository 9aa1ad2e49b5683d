import { describe, expect, it } from 'vitest';
import { Ascending } from '../../src/index/ascending.ts';
import { readBack } from '../helpers/ascending.ts';

describe('Ascending', () => {
  it('holds each value in 2 bytes and each block of 2^shift in 4, at and indexOf as the array would answer', () => {
    // Blocks of 4 whose values spread up to 65,535 past their first.
    const values = Uint32Array.from([5, 6, 9, 65_540, 70_000, 70_001, 100_000, 135_535, 4e9, 4e9 + 1]);
    const held = Ascending.of(values, 2);
    expect([held.byteLength, held.first]).toEqual([values.length * 2 + 3 * 4, undefined]);
    readBack(held, values, [0, 4, 7, 65_539, 65_541, 69_999, 135_534, 3e9, 4e9 + 2, 2 ** 32 - 1]);
  });

  it('ends a block early where the next value is 65,536 or more past its first, and says where each starts', () => {
    // 1, 2 | 65,538 (65,537 past 1), 65,539, 65,540, 65,541 | 65,542 | 200,000 (a gap in a block of its own).
    const values = Uint32Array.from([1, 2, 65_538, 65_539, 65_540, 65_541, 65_542, 200_000]);
    const held = Ascending.of(values, 2);
    expect([...held.base]).toEqual([1, 65_538, 65_542, 200_000]);
    expect([...held.first!]).toEqual([0, 2, 6, 7]);
    expect(held.byteLength).toBe(values.length * 2 + 4 * 8);
    readBack(held, values, [0, 3, 65_537, 65_543, 131_078, 199_999, 200_001]);
    // None, one, a block just full.
    readBack(Ascending.of(new Uint32Array(0), 6), new Uint32Array(0), [0, 1]);
    readBack(Ascending.of(Uint32Array.from([7]), 6), Uint32Array.from([7]), [0, 6, 8]);
    const four = Uint32Array.from([0, 1, 2, 3]);
    expect(Ascending.of(four, 2).first).toBeUndefined();
    readBack(Ascending.of(four, 2), four, [4]);
  });
});
