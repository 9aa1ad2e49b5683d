import { describe, expect, it } from 'vitest';
import { heapGrowthFlag, SERVE_HEAP_GROWING_PERCENT } from '../../src/shared/heapGrowth.ts';

describe('heap growth while serving', () => {
  it('lets the old generation grow 50% past what the last full collection kept', () => {
    expect(SERVE_HEAP_GROWING_PERCENT).toBe(50);
    expect(heapGrowthFlag([])).toBe('--heap-growing-percent=50');
    expect(heapGrowthFlag(['--enable-source-maps', '--max-old-space-size=4096'])).toBe(
      '--heap-growing-percent=50',
    );
  });

  it("leaves node's own growth setting as it was started", () => {
    expect(heapGrowthFlag(['--heap-growing-percent=200'])).toBeUndefined();
    expect(heapGrowthFlag(['--heap_growing_percent=0'])).toBeUndefined();
  });
});
