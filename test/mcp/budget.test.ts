import { describe, expect, it } from 'vitest';
import { allowances } from '../../src/mcp/budget.ts';
import { utf8Prefix } from '../../src/shared/text.ts';

describe('allowances', () => {
  it('gives each entry its size up to the per-entry cap when the call fits', () => {
    expect(allowances([10, 20, 5], 15, 100)).toEqual([10, 15, 5]);
  });

  it('shares the call budget by water-filling: small entries whole, large ones an equal share', () => {
    expect(allowances([10, 90, 90], 100, 100)).toEqual([10, 45, 45]);
    expect(allowances([90, 10, 90], 100, 100)).toEqual([45, 10, 45]);
  });

  it('does not depend on the order of the entries', () => {
    const sizes = [700, 300, 1200, 50, 900];
    const forward = allowances(sizes, 1000, 2000);
    const backward = allowances([...sizes].reverse(), 1000, 2000).reverse();
    expect(forward).toEqual(backward);
    expect(forward.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(2000);
  });
});

describe('utf8Prefix', () => {
  it('never splits a character', () => {
    const bytes = new TextEncoder().encode('aé€😀');
    expect(
      [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) =>
        new TextDecoder('utf-8', { fatal: true }).decode(utf8Prefix(bytes, n)),
      ),
    ).toEqual(['a', 'a', 'aé', 'aé', 'aé', 'aé€', 'aé€', 'aé€', 'aé€', 'aé€😀']);
  });
});
