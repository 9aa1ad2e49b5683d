import { describe, expect, it } from 'vitest';
import { FRESH, Scratch } from '../../src/index/scratch.ts';

describe('Scratch', () => {
  it('hands out zeroed arrays that do not overlap until reset, aligned to 8 bytes, again after it', () => {
    const scratch = new Scratch(1024 * 1024);
    const a = scratch.take(Uint8Array, 3);
    const b = scratch.take(Float64Array, 5);
    const c = scratch.take(Uint32Array, 7);
    expect([a.buffer, b.buffer]).toEqual([c.buffer, c.buffer]);
    expect([a.byteOffset, b.byteOffset, c.byteOffset]).toEqual([0, 8, 48]);
    a.fill(1);
    b.fill(2);
    c.fill(3);
    expect([...a, ...b, ...c]).toEqual([1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3]);
    scratch.reset();
    const again = scratch.take(Uint16Array, 4);
    expect([again.buffer === c.buffer, again.byteOffset, [...again]]).toEqual([true, 0, [0, 0, 0, 0]]);
    expect(scratch.byteLength).toBe(65_536);
  });

  it('grows into a new buffer, leaving arrays taken before as they were; makes one past its bound on its own', () => {
    const scratch = new Scratch(1024 * 1024);
    const small = scratch.take(Uint8Array, 60_000).fill(7);
    // The first buffer holds 8 times the first array taken (480,000 bytes); this one does not fit after it.
    const large = scratch.take(Uint32Array, 110_000);
    expect(large.buffer).not.toBe(small.buffer);
    expect([small.buffer.byteLength, large.byteOffset, scratch.byteLength]).toEqual([
      480_000,
      0,
      1024 * 1024,
    ]);
    expect(small.every((value) => value === 7)).toBe(true);
    const past = scratch.take(Uint8Array, 1024 * 1024 + 1);
    expect([past.buffer === large.buffer, past.byteOffset, scratch.byteLength]).toEqual([
      false,
      0,
      1024 * 1024,
    ]);
    // FRESH keeps nothing: each array is its own.
    const [x, y] = [FRESH.take(Uint8Array, 4), FRESH.take(Uint8Array, 4)];
    expect(x.buffer).not.toBe(y.buffer);
    expect(FRESH.byteLength).toBe(0);
  });
});
