import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { constants, inflateSync } from 'node:zlib';
import { GitError } from '../errors.ts';
import { objectTooLarge } from '../failure.ts';
import { MAX_OBJECT_BYTES } from '../limits.ts';
import type { GitObject, ObjectType } from '../objects.ts';
import { byteLru } from '../../shared/byteLru.ts';
import { withAlternates } from './alternates.ts';
import { openPack, type ObjectCache, type Pack } from './pack.ts';
import { parsePackIndex } from './packIndex.ts';

/** Bytes of inflated objects kept for reuse (delta bases, trees): bounded whatever the repository. */
export const OBJECT_CACHE_BYTES = 32 * 1024 * 1024;
/** Objects larger than this are never cached. */
const CACHE_MAX_OBJECT = 1024 * 1024;

/**
 * After this many reads the pack listing is read again: packs that another program deleted (git gc, a push into
 * a local repository) are closed, so their disk space is freed, and new packs are found.
 */
export const CACHE_USES = 2000;

export interface ObjectDatabase {
  read(oid: string): Promise<GitObject | undefined>;
  has(oid: string): Promise<boolean>;
  /** The object's size from its header, its content not inflated; `undefined` when it is not there. */
  sizeOf(oid: string): Promise<number | undefined>;
  /** Forgets the pack listing: the next read lists `objects/pack` again. */
  refresh(): void;
  close(): Promise<void>;
}

/** Inflated objects kept by recent use, `limit` bytes of them at most, none over CACHE_MAX_OBJECT. */
export function objectCache(limit: number): ObjectCache {
  return byteLru<GitObject>(limit, CACHE_MAX_OBJECT, (object) => object.data.length);
}

const LOOSE_TYPES = new Set<string>(['commit', 'tree', 'blob', 'tag']);

/** A loose object's header: `<type> <size>` before the first NUL; `undefined` when it is not one. */
function looseHeader(raw: Buffer): { type: ObjectType; size: number; nul: number } | undefined {
  const nul = raw.indexOf(0);
  const header = /^([a-z]+) (\d+)$/.exec(raw.toString('latin1', 0, nul === -1 ? 0 : nul));
  if (header === null || !LOOSE_TYPES.has(header[1]!)) return undefined;
  return { type: header[1] as ObjectType, size: Number(header[2]), nul };
}

/** A loose object's size: only its first inflated bytes are read (a header is at most some 30 bytes). */
function looseSize(file: Buffer, oid: string): number {
  const head = inflateSync(file.subarray(0, 256), { finishFlush: constants.Z_SYNC_FLUSH });
  const header = looseHeader(head);
  if (header === undefined) throw new Error(`loose object ${oid} is corrupt`);
  return header.size;
}

/** The first bytes of a loose object's file (enough for its header), `undefined` when it is gone. */
async function readHead(file: string): Promise<Buffer | undefined> {
  const handle = await fsp.open(file, 'r').catch(() => undefined);
  if (handle === undefined) return undefined;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(256), 0, 256, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** A loose object: zlib of `<type> <size>\0<content>`, its size checked against MAX_OBJECT_BYTES first. */
function parseLoose(file: Buffer, oid: string): GitObject {
  const size = looseSize(file, oid);
  // The header said how much follows: a stream that inflates to more is cut there and refused below.
  const raw = inflateSync(file, { maxOutputLength: size + 64, finishFlush: constants.Z_SYNC_FLUSH });
  const header = looseHeader(raw);
  if (header === undefined || header.size !== raw.length - header.nul - 1)
    throw new Error(`loose object ${oid} is corrupt`);
  return { type: header.type, data: raw.subarray(header.nul + 1) };
}

/** A pack as opened from its files, and which index file that was. */
interface Opened {
  stamp: string;
  pack: Promise<Pack>;
  failed: boolean;
}

/** One repository's objects: its directories, the packs opened from its listing, and the cache they share. */
interface Odb {
  objectsDir: string;
  packDir: string;
  cache: ObjectCache;
  open: Map<string, Opened>;
  listing: Promise<Pack[]> | undefined;
  /** Reads since the pack listing was last read. */
  reads: number;
}

/**
 * The objects of one repository, read the way git reads them: each pack's index in memory, objects at their
 * offsets (positioned reads), loose objects from their files, then the stores its alternates name. Memory grows
 * with the objects read, never with the size of the packs.
 */
export function openObjectDatabase(gitdir: string): ObjectDatabase {
  return withAlternates(path.join(gitdir, 'objects'), openStore);
}

/** The objects of one store (`objects/` folder), its alternates left out. */
function openStore(objectsDir: string): ObjectDatabase {
  const odb: Odb = {
    objectsDir,
    packDir: path.join(objectsDir, 'pack'),
    cache: objectCache(OBJECT_CACHE_BYTES),
    open: new Map(),
    listing: undefined,
    reads: 0,
  };
  return {
    read: (oid) => read(odb, oid),
    sizeOf: (oid) => sizeOf(odb, oid),
    has: async (oid) => (await locate(odb, oid)) !== undefined,
    refresh() {
      odb.listing = undefined;
    },
    async close() {
      // A listing under way opens packs: they are closed with the others, not left for garbage collection.
      await odb.listing?.catch(() => undefined);
      const packs = [...odb.open.values()];
      odb.open = new Map();
      odb.listing = undefined;
      await Promise.allSettled(packs.map(async (opened) => (await opened.pack).close()));
    },
  };
}

async function openOne(odb: Odb, name: string): Promise<Pack> {
  const file = await fsp.open(path.join(odb.packDir, `${name}.pack`), 'r');
  try {
    const [idx, stat] = await Promise.all([fsp.readFile(path.join(odb.packDir, `${name}.idx`)), file.stat()]);
    return openPack(name, file, parsePackIndex(idx, stat.size), odb.cache, (oid) => read(odb, oid));
  } catch (error) {
    await file.close();
    throw error;
  }
}

/** Which file a pack's index is now: one rewritten under the same name (a repair) is another. */
const stampOf = (packDir: string, name: string) =>
  fsp.stat(path.join(packDir, `${name}.idx`)).then(
    (stat) => `${stat.ino}:${stat.size}:${stat.mtimeMs}`,
    () => 'gone',
  );

/** Lists `objects/pack`: packs opened before from the same files are kept, the others opened (and the gone closed). */
async function listPacks(odb: Odb): Promise<Pack[]> {
  const names = (await fsp.readdir(odb.packDir).catch(() => [] as string[]))
    .filter((file) => file.endsWith('.idx'))
    .map((file) => file.slice(0, -4));
  const stamps = await Promise.all(names.map((name) => stampOf(odb.packDir, name)));
  const next = new Map<string, Opened>();
  for (const [i, name] of names.entries()) {
    const known = odb.open.get(name);
    // Opened before from the same file, and it opened: kept. One that failed, or was rewritten, is opened again.
    if (known !== undefined && known.stamp === stamps[i] && !known.failed) {
      next.set(name, known);
      continue;
    }
    const opened: Opened = { stamp: stamps[i]!, pack: openOne(odb, name), failed: false };
    // A pack that cannot be opened (half-written, deleted since the listing) is not fatal: skip it.
    opened.pack.catch(() => {
      opened.failed = true;
    });
    next.set(name, opened);
  }
  for (const [name, old] of odb.open)
    if (next.get(name) !== old)
      void old.pack.then(
        (p) => p.close(),
        () => undefined,
      );
  odb.open = next;
  const packs = await Promise.allSettled([...next.values()].map((opened) => opened.pack));
  return packs.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
}

/** The packs as last listed; listed again every CACHE_USES reads. */
function packs(odb: Odb): Promise<Pack[]> {
  if (++odb.reads > CACHE_USES) {
    odb.reads = 0;
    odb.listing = undefined;
  }
  odb.listing ??= listPacks(odb);
  return odb.listing;
}

function fromPacks(key: Buffer, current: Pack[]): { pack: Pack; offset: number } | undefined {
  for (const pack of current) {
    const offset = pack.index.offsetOf(key);
    if (offset !== undefined) return { pack, offset };
  }
  return undefined;
}

const loosePath = (odb: Odb, oid: string) => path.join(odb.objectsDir, oid.slice(0, 2), oid.slice(2));

async function locate(odb: Odb, oid: string): Promise<{ pack: Pack; offset: number } | 'loose' | undefined> {
  const key = Buffer.from(oid, 'hex');
  const known = await packs(odb);
  const found = fromPacks(key, known);
  if (found !== undefined) return found;
  if (
    await fsp.access(loosePath(odb, oid)).then(
      () => true,
      () => false,
    )
  )
    return 'loose';
  // Not where it was: list the packs again, in case another program wrote or repacked the store.
  odb.listing = listPacks(odb);
  return fromPacks(key, await odb.listing);
}

async function read(odb: Odb, oid: string): Promise<GitObject | undefined> {
  const where = await locate(odb, oid);
  if (where === undefined) return undefined;
  if (where === 'loose') {
    const head = await readHead(loosePath(odb, oid));
    if (head === undefined) return undefined;
    const size = looseSize(head, oid);
    if (size > MAX_OBJECT_BYTES) throw objectTooLarge(`object ${oid}`, size);
    const file = await fsp.readFile(loosePath(odb, oid)).catch(() => undefined);
    return file === undefined ? undefined : parseLoose(file, oid);
  }
  try {
    return await where.pack.readAt(where.offset);
  } catch (error) {
    // Named by its id, as the git binary's reader names it.
    if (error instanceof GitError && error.code === 'source-too-large')
      throw objectTooLarge(`object ${oid}`, await where.pack.sizeAt(where.offset));
    throw error;
  }
}

async function sizeOf(odb: Odb, oid: string): Promise<number | undefined> {
  const where = await locate(odb, oid);
  if (where === undefined) return undefined;
  if (where === 'loose') {
    const head = await readHead(loosePath(odb, oid));
    return head === undefined ? undefined : looseSize(head, oid);
  }
  return where.pack.sizeAt(where.offset);
}
