import type pako from 'pako';

/** pako 1's streaming inflater with the two fields its typings leave out (isomorphic-git's pack reader uses them). */
export type StreamingInflate = pako.Inflate & { ended: boolean; strm: { avail_in: number } };

/** The pack entry type of a blob (gitformat-pack(5)). */
export const BLOB = 3;
/** Pack entry types that are deltas (gitformat-pack(5)): against an earlier offset, or against an object id. */
export const OFS_DELTA = 6;
export const REF_DELTA = 7;

/**
 * A pack entry's header from the bytes received of it so far: its type and inflated size once the whole header has
 * come, a delta's base reference included; `undefined` while more bytes are needed; `'malformed'` for a size field
 * longer than any real one. The type is not checked: callers refuse or skip an unknown one.
 */
export function entryHeader(
  bytes: ArrayLike<number>,
): { type: number; size: number } | undefined | 'malformed' {
  let at = 0;
  let byte = bytes[at++]!;
  const type = (byte >> 4) & 7;
  let size = byte & 0x0f;
  for (let shift = 4; byte & 0x80; shift += 7) {
    if (at >= bytes.length) return undefined;
    if (shift > 49) return 'malformed';
    byte = bytes[at++]!;
    size += (byte & 0x7f) * 2 ** shift;
  }
  if (type === OFS_DELTA) {
    do if (at >= bytes.length) return undefined;
    while (bytes[at++]! & 0x80);
  } else if (type === REF_DELTA && bytes.length < at + 20) return undefined;
  return { type, size };
}

/** A base-128 little-endian size, as a delta's header holds it; `undefined` when `bytes` end before it does. */
function deltaSize(bytes: ArrayLike<number>, from: number): [size: number, next: number] | undefined {
  let size = 0;
  for (let at = from, shift = 0; at < bytes.length && shift < 64; at++, shift += 7) {
    size += (bytes[at]! & 0x7f) * 2 ** shift;
    if ((bytes[at]! & 0x80) === 0) return [size, at + 1];
  }
  return undefined;
}

/** The sizes a delta's header names, from the first bytes it inflates to: its base's, then its result's. */
export function deltaSizes(inflated: ArrayLike<number>): [base?: number, result?: number] {
  const base = deltaSize(inflated, 0);
  if (base === undefined) return [];
  return [base[0], deltaSize(inflated, base[1])?.[0]];
}
