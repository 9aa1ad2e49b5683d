import type pako from 'pako';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from './limits.ts';

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

/** Why a transfer refuses an entry by its size: an object over MAX_OBJECT_BYTES, or large blobs past their bound. */
export type Oversized = 'object' | 'large-blobs';

/**
 * The size rule of one transfer, applied to each entry's header as it arrives: an entry over MAX_OBJECT_BYTES is
 * refused (`'object'`), unless it is a blob, which is kept while the blobs over MAX_OBJECT_BYTES of the transfer
 * declare at most MAX_LARGE_BLOB_BYTES together (`'large-blobs'` past that). A delta is refused at that size
 * whatever it builds; what it builds is checked by `deltaOversized`.
 */
export function transferSizeRule(): (type: number, size: number) => Oversized | undefined {
  let largeBlobs = 0;
  return (type, size) => {
    if (size <= MAX_OBJECT_BYTES) return undefined;
    if (type !== BLOB) return 'object';
    largeBlobs += size;
    return largeBlobs > MAX_LARGE_BLOB_BYTES ? 'large-blobs' : undefined;
  };
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

/**
 * Whether a delta, by the first bytes it inflates to (its header: the sizes of its base and of what it builds),
 * needs an object over MAX_OBJECT_BYTES, as base or as result: resolving it would hold that object whole.
 */
export function deltaOversized(inflated: ArrayLike<number>): boolean {
  const base = deltaSize(inflated, 0);
  const result = base === undefined ? undefined : deltaSize(inflated, base[1]);
  return (
    (base !== undefined && base[0] > MAX_OBJECT_BYTES) ||
    (result !== undefined && result[0] > MAX_OBJECT_BYTES)
  );
}
