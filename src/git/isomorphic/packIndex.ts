import { createHash } from 'node:crypto';
import { nextTurn, OBJECTS_PER_TURN } from '../turns.ts';

/** A pack's `.idx` (version 2), held in memory: 28 bytes an object, whatever the size of the pack. */
export interface PackIndex {
  readonly count: number;
  /** The offset of `oid` in the pack, or `undefined` when the pack does not hold it. */
  offsetOf(oid: Buffer): number | undefined;
  /** Where the object at `offset` ends: the next object's offset, or the pack's trailer. */
  endOf(offset: number): number;
}

const MAGIC = 0xff744f63; // "\377tOc"

/** Parses an `.idx` file (gitformat-pack(5), version 2). `packSize` is the size of its `.pack`. */
export function parsePackIndex(idx: Buffer, packSize: number): PackIndex {
  if (idx.length < 8 + 1024 + 40 || idx.readUInt32BE(0) !== MAGIC || idx.readUInt32BE(4) !== 2)
    throw new Error('not a version 2 pack index');
  const fanout = (byte: number) => (byte < 0 ? 0 : idx.readUInt32BE(8 + byte * 4));
  const count = fanout(255);
  const names = 8 + 1024;
  const offsets = names + count * 24; // after the names (20 bytes each) and the CRCs (4 bytes each)
  const large = offsets + count * 4;
  if (idx.length < large + 40) throw new Error('the pack index is truncated');
  const offsetAt = (i: number): number => {
    const small = idx.readUInt32BE(offsets + i * 4);
    if ((small & 0x80000000) === 0) return small;
    const at = large + (small & 0x7fffffff) * 8;
    if (at + 8 > idx.length - 40) throw new Error('the pack index is corrupt');
    return Number(idx.readBigUInt64BE(at));
  };
  let sorted: Float64Array | undefined;
  return {
    count,
    offsetOf(oid) {
      let low = fanout(oid[0]! - 1);
      let high = fanout(oid[0]!);
      while (low < high) {
        const mid = (low + high) >>> 1;
        const order = idx.compare(oid, 0, 20, names + mid * 20, names + mid * 20 + 20);
        if (order === 0) return offsetAt(mid);
        if (order < 0) low = mid + 1;
        else high = mid;
      }
      return undefined;
    },
    endOf(offset) {
      // Offsets in pack order, built on first use (git keeps the same thing in a `.rev` file).
      if (sorted === undefined) {
        sorted = new Float64Array(count);
        for (let i = 0; i < count; i++) sorted[i] = offsetAt(i);
        sorted.sort();
      }
      let low = 0;
      let high = count;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if (sorted[mid]! <= offset) low = mid + 1;
        else high = mid;
      }
      return low < count ? sorted[low]! : packSize - 20;
    },
  };
}

/** One object of a pack, as its index records it. */
export interface IndexedObject {
  oid: string;
  offset: number;
  /** CRC-32 of the object's bytes in the pack (header and compressed data). */
  crc: number;
}

/**
 * Writes an `.idx` file (version 2) for a pack whose trailer is `packSha`: objects sorted by id, 64-bit offsets
 * past 2 GiB. Sorted one first byte at a time, the event loop running between them: a pack of millions of objects
 * stalls nothing else.
 */
export async function serializePackIndex(
  objects: readonly IndexedObject[],
  packSha: Buffer,
): Promise<Buffer> {
  const buckets: IndexedObject[][] = Array.from({ length: 256 }, () => []);
  for (const [i, object] of objects.entries()) {
    if (i % (OBJECTS_PER_TURN * 64) === 0) await nextTurn();
    buckets[Number.parseInt(object.oid.slice(0, 2), 16)]!.push(object);
  }
  const count = objects.length;
  const large = objects.filter((o) => o.offset >= 0x80000000).length;
  const out = Buffer.alloc(8 + 1024 + count * 28 + large * 8 + 40);
  out.writeUInt32BE(MAGIC, 0);
  out.writeUInt32BE(2, 4);
  for (let byte = 0, total = 0; byte < 256; byte++)
    out.writeUInt32BE((total += buckets[byte]!.length), 8 + byte * 4);
  const names = 8 + 1024;
  const crcs = names + count * 20;
  const offsets = crcs + count * 4;
  const wide = offsets + count * 4;
  let next = 0;
  let i = 0;
  for (const bucket of buckets) {
    await nextTurn();
    bucket.sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
    for (const { oid, offset, crc } of bucket) {
      out.write(oid, names + i * 20, 'hex');
      out.writeUInt32BE(crc >>> 0, crcs + i * 4);
      if (offset < 0x80000000) out.writeUInt32BE(offset, offsets + i * 4);
      else {
        out.writeUInt32BE((0x80000000 | next) >>> 0, offsets + i * 4);
        out.writeBigUInt64BE(BigInt(offset), wide + next++ * 8);
      }
      i++;
    }
  }
  packSha.copy(out, out.length - 40);
  createHash('sha1')
    .update(out.subarray(0, out.length - 20))
    .digest()
    .copy(out, out.length - 20);
  return out;
}
