import { describe, expect, it } from 'vitest';
import { byteLru } from '../../src/shared/byteLru.ts';

const bytes = (n: number) => new Uint8Array(n);
const lru = (limit: number, maxValue: number) =>
  byteLru<Uint8Array>(limit, maxValue, (value) => value.length);

describe('the byte-bounded LRU', () => {
  it('drops the least recently used values once their bytes pass the limit', () => {
    const cache = lru(10, 10);
    cache.set('a', bytes(4));
    cache.set('b', bytes(4));
    // Reading `a` makes `b` the least recently used.
    expect(cache.get('a')?.length).toBe(4);
    cache.set('c', bytes(4));
    expect([cache.get('a')?.length, cache.get('b'), cache.get('c')?.length, cache.bytes]).toEqual([
      4,
      undefined,
      4,
      8,
    ]);
  });

  it('never keeps a value over its per-value bound or the whole limit', () => {
    const cache = lru(10, 6);
    cache.set('big', bytes(7));
    cache.set('huge', bytes(11));
    cache.set('fits', bytes(6));
    expect([cache.get('big'), cache.get('huge'), cache.get('fits')?.length, cache.bytes]).toEqual([
      undefined,
      undefined,
      6,
      6,
    ]);
  });

  it('counts a key set twice once', () => {
    const cache = lru(10, 10);
    cache.set('a', bytes(4));
    cache.set('a', bytes(5));
    cache.set('b', bytes(5));
    expect([cache.get('a')?.length, cache.get('b')?.length, cache.bytes]).toEqual([5, 5, 10]);
  });
});
