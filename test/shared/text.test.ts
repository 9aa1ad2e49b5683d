import { describe, expect, it } from 'vitest';
import { firstNotBefore, ownCopy } from '../../src/shared/text.ts';

describe('firstNotBefore', () => {
  it('finds the first place not before a value, 0 to the count, in a sorted list', () => {
    const sorted = [1, 3, 3, 5];
    const at = (value: number) => firstNotBefore(sorted.length, (place) => sorted[place]! < value);
    expect([0, 1, 2, 3, 4, 5, 6].map(at)).toEqual([0, 0, 1, 1, 3, 3, 4]);
    expect(firstNotBefore(0, () => true)).toBe(0);
  });
});

describe('ownCopy', () => {
  it('gives the same text', () => {
    const line = `100644 blob ${'a'.repeat(40)}\tskills/x/SKILL.md`;
    expect(ownCopy(line.slice(12, 52))).toBe('a'.repeat(40));
    expect(ownCopy('')).toBe('');
  });
});
