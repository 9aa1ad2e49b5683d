import { readSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { constants, inflateSync } from 'node:zlib';
import { objectTooLarge } from '../failure.ts';
import { MAX_OBJECT_BYTES } from '../limits.ts';
import { OFS_DELTA, REF_DELTA } from '../packEntry.ts';
import type { GitObject, ObjectType } from '../objects.ts';
import { applyDelta, deltaResultSize } from './delta.ts';
import type { PackIndex } from './packIndex.ts';

const TYPES: Record<number, ObjectType> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
/** git's own limit on a delta chain is 4095 (pack.depth); a longer chain is a corrupt or hostile pack. */
const MAX_CHAIN = 4096;
/** Entries up to this size are read synchronously. */
const SYNC_READ_MAX = 64 * 1024;
/** Bytes that hold an entry's header (type and size: at most 10). */
const HEADER_BYTES = 16;

/** One entry of a pack as stored: a whole object, or a delta against a base found by offset or by id. */
type Entry =
  | { kind: 'whole'; type: ObjectType; data: Buffer }
  | { kind: 'delta'; delta: Buffer; base: { offset: number } | { oid: string } };

/** Objects already inflated, bounded in bytes: delta bases (trees above all) are read again and again. */
export interface ObjectCache {
  get(key: string): GitObject | undefined;
  set(key: string, object: GitObject): void;
}

export interface Pack {
  readonly name: string;
  readonly index: PackIndex;
  /** The object at `offset`, its delta chain resolved. */
  readAt(offset: number): Promise<GitObject>;
  /** The size of the object at `offset`, from its header (a delta's: from the delta's own header). */
  sizeAt(offset: number): Promise<number>;
  close(): Promise<void>;
}

/** An open pack and what reading it needs: its index, the shared cache, and where bases by id are found. */
interface PackFile {
  name: string;
  file: FileHandle;
  index: PackIndex;
  cache: ObjectCache;
  baseById: (oid: string) => Promise<GitObject | undefined>;
}

/**
 * Reads objects from a `.pack` at their offsets with positioned reads: memory is the objects read (and the
 * bounded cache), never the pack. `baseById` finds the base of a REF_DELTA, which may live in another pack.
 */
export function openPack(
  name: string,
  file: FileHandle,
  index: PackIndex,
  cache: ObjectCache,
  baseById: (oid: string) => Promise<GitObject | undefined>,
): Pack {
  const pack: PackFile = { name, file, index, cache, baseById };
  return {
    name,
    index,
    readAt: (offset) => readAt(pack, offset),
    sizeAt: (offset) => sizeAt(pack, offset),
    close: () => file.close(),
  };
}

/** The entry's bytes from `offset`: all of them, or only the first `limit`. */
async function readBytes(pack: PackFile, offset: number, limit = Number.POSITIVE_INFINITY): Promise<Buffer> {
  const { name, file } = pack;
  const end = pack.index.endOf(offset);
  if (!(end > offset)) throw new Error(`pack ${name} has no object at ${offset}`);
  // zlib never grows data by more than a few bytes per 16 KiB: a longer entry inflates past the limit.
  if (limit > end - offset && end - offset > MAX_OBJECT_BYTES + 65_536)
    throw objectTooLarge(`the object at ${offset} of ${name}`, end - offset);
  const bytes = Buffer.allocUnsafe(Math.min(end - offset, limit));
  // A small read from the page cache costs less than the thread-pool round trip of an asynchronous one.
  const bytesRead =
    bytes.length <= SYNC_READ_MAX
      ? readSync(file.fd, bytes, 0, bytes.length, offset)
      : (await file.read(bytes, 0, bytes.length, offset)).bytesRead;
  if (bytesRead !== bytes.length) throw new Error(`pack ${name} is truncated`);
  return bytes;
}

/** An entry's header: type in bits 4-6 of the first byte, size in base-128 little-endian after its low 4 bits. */
function headerOf(name: string, bytes: Buffer, offset: number): { type: number; size: number; at: number } {
  let at = 0;
  let byte = bytes[at++]!;
  const type = (byte >> 4) & 7;
  let size = byte & 0x0f;
  let shift = 4;
  while (byte & 0x80) {
    if (at >= bytes.length || shift > 49) throw new Error(`pack ${name}: bad header at ${offset}`);
    byte = bytes[at++]!;
    size += (byte & 0x7f) * 2 ** shift;
    shift += 7;
  }
  return { type, size, at };
}

/** A delta's base, from the bytes after its entry's header (`at`); `at` is then where the delta's data starts. */
function deltaBase(
  name: string,
  bytes: Buffer,
  type: number,
  offset: number,
  from: number,
): { base: { offset: number } | { oid: string } | undefined; at: number } {
  let at = from;
  if (type === OFS_DELTA) {
    // The base's distance back, in git's offset encoding (each continuation adds one before shifting).
    let byte = bytes[at++]!;
    let distance = byte & 0x7f;
    while (byte & 0x80) {
      if (at >= bytes.length || distance > 2 ** 45) throw new Error(`pack ${name}: bad delta at ${offset}`);
      byte = bytes[at++]!;
      distance = (distance + 1) * 128 + (byte & 0x7f);
    }
    if (distance <= 0 || distance > offset) throw new Error(`pack ${name}: bad delta base at ${offset}`);
    return { base: { offset: offset - distance }, at };
  }
  if (type === REF_DELTA) {
    if (at + 20 > bytes.length) throw new Error(`pack ${name}: bad delta at ${offset}`);
    return { base: { oid: bytes.toString('hex', at, at + 20) }, at: at + 20 };
  }
  if (TYPES[type] === undefined) throw new Error(`pack ${name}: unknown type ${type} at ${offset}`);
  return { base: undefined, at };
}

async function readEntry(pack: PackFile, offset: number): Promise<Entry> {
  const { name } = pack;
  // A long entry's header comes first: an object over the limit is refused before its bytes are read.
  if (pack.index.endOf(offset) - offset > SYNC_READ_MAX) {
    const { size } = headerOf(name, await readBytes(pack, offset, HEADER_BYTES), offset);
    if (size > MAX_OBJECT_BYTES) throw objectTooLarge(`the object at ${offset} of ${name}`, size);
  }
  const bytes = await readBytes(pack, offset);
  const header = headerOf(name, bytes, offset);
  const { type, size } = header;
  if (size > MAX_OBJECT_BYTES) throw objectTooLarge(`the object at ${offset} of ${name}`, size);
  const { base, at } = deltaBase(name, bytes, type, offset, header.at);
  const data = inflateSync(bytes.subarray(at), { maxOutputLength: Math.max(size, 1) });
  if (data.length !== size) throw new Error(`pack ${name}: object at ${offset} is not ${size} bytes`);
  return base === undefined
    ? { kind: 'whole', type: TYPES[type]!, data }
    : { kind: 'delta', delta: data, base };
}

async function readAt(pack: PackFile, offset: number): Promise<GitObject> {
  const { name, cache } = pack;
  // Walk down the chain to a whole object (or a cached one), then apply the deltas back up.
  const deltas: Array<{ offset: number; delta: Buffer }> = [];
  let found: GitObject | undefined;
  let at = offset;
  while (found === undefined) {
    if (deltas.length > MAX_CHAIN) throw new Error(`pack ${name}: delta chain too long at ${offset}`);
    found = cache.get(`${name}:${at}`);
    if (found !== undefined) break;
    const entry = await readEntry(pack, at);
    if (entry.kind === 'whole') {
      found = { type: entry.type, data: entry.data };
      if (deltas.length > 0) cache.set(`${name}:${at}`, found);
      break;
    }
    deltas.push({ offset: at, delta: entry.delta });
    if ('offset' in entry.base) at = entry.base.offset;
    else {
      found = await pack.baseById(entry.base.oid);
      if (found === undefined) throw new Error(`pack ${name}: delta base ${entry.base.oid} is missing`);
    }
  }
  for (let i = deltas.length - 1; i >= 0; i--) {
    found = { type: found.type, data: applyDelta(found.data, deltas[i]!.delta) };
    if (i > 0) cache.set(`${name}:${deltas[i]!.offset}`, found);
  }
  return found;
}

/** At most this much of an entry is read for its size: a delta's header lies in its first inflated bytes. */
const SIZE_PREFIX = 4096;

async function sizeAt(pack: PackFile, offset: number): Promise<number> {
  const bytes = await readBytes(pack, offset, SIZE_PREFIX);
  const { type, size, at } = headerOf(pack.name, bytes, offset);
  if (type !== OFS_DELTA && type !== REF_DELTA) return size;
  let start = at;
  if (type === REF_DELTA) start += 20;
  else {
    while (start < bytes.length && bytes[start]! & 0x80) start++;
    start++;
  }
  // Inflating a prefix (no more than some 4 MiB of output from 4 KiB) gives the delta's two sizes.
  const prefix = inflateSync(bytes.subarray(start), { finishFlush: constants.Z_SYNC_FLUSH });
  return deltaResultSize(prefix) ?? (await readAt(pack, offset)).data.length;
}
