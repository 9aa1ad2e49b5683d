/** A map that keeps its values by recent use, bounded by their bytes together. */
export interface ByteLru<V> {
  /** The value kept under `key`, now the most recently used; `undefined` when none is. */
  get(key: string): V | undefined;
  /** Keeps `value` (unless it alone is over `maxValueBytes`), dropping the least recently used past the limit. */
  set(key: string, value: V): void;
  /** Bytes of the values kept, all together. */
  readonly bytes: number;
}

/**
 * A least-recently-used map holding at most `limitBytes` of values (as `sizeOf` measures them); a value over
 * `maxValueBytes` is never kept.
 */
export function byteLru<V>(
  limitBytes: number,
  maxValueBytes: number,
  sizeOf: (value: V) => number,
): ByteLru<V> {
  // A Map iterates in insertion order: re-inserting on use makes the first key the least recently used.
  const entries = new Map<string, V>();
  let bytes = 0;
  const drop = (key: string, value: V) => {
    entries.delete(key);
    bytes -= sizeOf(value);
  };
  return {
    get(key) {
      const found = entries.get(key);
      if (found !== undefined) {
        entries.delete(key);
        entries.set(key, found);
      }
      return found;
    },
    set(key, value) {
      const size = sizeOf(value);
      if (size > maxValueBytes || size > limitBytes) return;
      const known = entries.get(key);
      if (known !== undefined) drop(key, known);
      entries.set(key, value);
      bytes += size;
      for (const [oldest, held] of entries) {
        if (bytes <= limitBytes) break;
        drop(oldest, held);
      }
    },
    get bytes() {
      return bytes;
    },
  };
}
