import { createHash, type Hash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import pako from 'pako';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from '../limits.ts';
import {
  deltaOversized,
  entryHeader,
  OFS_DELTA,
  type Oversized,
  REF_DELTA,
  transferSizeRule,
} from '../packEntry.ts';
import type { GitObject } from '../objects.ts';
import type { FetchProgress } from '../repository.ts';
import { objectCache } from './odb.ts';
import { openPack } from './pack.ts';
import { type IndexedObject, type PackIndex, serializePackIndex } from './packIndex.ts';
import { TransportStop } from './stop.ts';
import { INFLATE_INPUT_BYTES, INFLATED_PER_TURN, nextTurn, OBJECTS_PER_TURN } from '../turns.ts';

/** pako 1's inflater with the two fields its typings leave out (isomorphic-git's pack reader uses them too). */
type StreamingInflate = pako.Inflate & { ended: boolean; strm: { avail_in: number } };

const TYPE_NAMES: Record<number, GitObject['type']> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
/** Bytes of objects kept while deltas are resolved (their bases, above all). */
const RESOLVE_CACHE_BYTES = 32 * 1024 * 1024;

/** One object of the pack as it arrived: where, its CRC, and its id once known (a delta's after resolving). */
interface Arrived extends Partial<IndexedObject> {
  offset: number;
  crc: number;
}

const tooLarge = (size: number) =>
  new TransportStop('source-too-large', {}, `a pack object inflates to ${size} bytes or more`);
const refused = (why: Oversized, size: number) =>
  why === 'object'
    ? tooLarge(size)
    : new TransportStop(
        'source-too-large',
        { largeBlobs: true },
        `a blob of ${size} bytes takes the transfer's blobs over ${MAX_OBJECT_BYTES} bytes past ${MAX_LARGE_BLOB_BYTES}`,
      );
const invalid = (why: string) => new TransportStop('source-pack-invalid', {}, why);
const tooMany = (count: number, maxObjects: number) =>
  new TransportStop('source-too-large', { maxObjects }, `the pack holds ${count} objects`);

export interface PackWriter {
  /** The pack's next bytes: checked object by object as they come, and written to a temporary file. */
  write(bytes: Uint8Array): Promise<void>;
  /** After the transfer: checks the pack, resolves its deltas, writes its index; both go into objects/pack. */
  finish(): Promise<void>;
  /** A failed transfer: the temporary file goes. */
  abort(): Promise<void>;
}

export interface PackWriterOptions {
  gitdir: string;
  /** A delta's base that is not in the pack (the store holds it). */
  baseById: (oid: string) => Promise<GitObject | undefined>;
  /** Objects the pack may hold (its header says how many): past it the transfer stops (`source-too-large`). */
  maxObjects: number;
  onProgress?: (progress: FetchProgress) => void;
}

/**
 * Takes a pack as it arrives (gitformat-pack(5)) and writes it to disk, never holding it: each object's header is
 * read and its zlib stream inflated in slices and counted (a whole object hashed on the way), never kept. Stops the
 * transfer (`TransportStop`) for an entry the transfer's size rule refuses (`transferSizeRule`: over
 * MAX_OBJECT_BYTES, unless a blob within MAX_LARGE_BLOB_BYTES), a delta that needs an object over MAX_OBJECT_BYTES,
 * or an object that inflates past its own header's size (a compression bomb). Then, as `git index-pack` does,
 * checks the trailer, resolves the deltas by reading them back, and writes the `.idx`; the pack is named by its
 * trailer and its index is renamed into place last. Memory is the objects being resolved (bounded cache), whatever
 * the size of the pack.
 */
export function packWriter(options: PackWriterOptions): PackWriter {
  const packDir = path.join(options.gitdir, 'objects', 'pack');
  // A name the store's sweep removes if the process dies before the pack is whole.
  const temp = path.join(packDir, `tmp_pack_iso_${randomBytes(6).toString('hex')}`);
  let file: FileHandle | undefined;
  // The temp file a first write is opening: an abort meanwhile waits for it, and closes it.
  let opening: Promise<FileHandle> | undefined;
  let aborted = false;
  const whole = createHash('sha1');
  const arrived: Arrived[] = [];
  let position = 0;
  let phase: 'pack-header' | 'object-header' | 'data' | 'trailer' | 'done' = 'pack-header';
  let header: number[] = [];
  let total = 0;
  let left = 0;
  const trailer: number[] = [];
  let current:
    | { entry: Arrived; inflater: StreamingInflate; size: number; inflated: number; hash?: Hash }
    | undefined;
  let lastPercent = -1;
  const sizeRule = transferSizeRule();

  const progress = (phaseName: string, loaded: number) => {
    const percent = Math.floor((loaded * 100) / Math.max(total, 1));
    if (percent === lastPercent && loaded !== total) return;
    lastPercent = percent;
    options.onProgress?.({ phase: phaseName, loaded, total, bytes: position });
  };

  /** Reads an object header from `header`; `false` while more bytes are needed. */
  const objectHeader = (offset: number): boolean => {
    const found = entryHeader(header);
    if (found === undefined) return false;
    if (found === 'malformed') throw invalid(`bad object header at ${offset}`);
    const { type, size } = found;
    if (type !== OFS_DELTA && type !== REF_DELTA && TYPE_NAMES[type] === undefined)
      throw invalid(`unknown object type ${type} at ${offset}`);
    const oversized = sizeRule(type, size);
    if (oversized !== undefined) throw refused(oversized, size);
    const entry: Arrived = { offset, crc: crc32(Buffer.from(header)) };
    const name = TYPE_NAMES[type];
    const hash = name === undefined ? undefined : createHash('sha1').update(`${name} ${size}\0`);
    const inflater = new pako.Inflate() as StreamingInflate;
    const state = { entry, inflater, size, inflated: 0, ...(hash === undefined ? {} : { hash }) };
    // Binary input gives binary output: the chunks are bytes.
    inflater.onData = (data) => {
      const chunk = data as Uint8Array;
      // A delta's header names the sizes of its base and of the object it builds: what resolving it will hold.
      if (hash === undefined && state.inflated === 0 && deltaOversized(chunk))
        throw new TransportStop(
          'source-too-large',
          {},
          `the delta at ${offset} needs an object over the limit`,
        );
      state.inflated += chunk.length;
      if (state.inflated > size) throw tooLarge(state.inflated);
      hash?.update(chunk);
    };
    inflater.onEnd = () => undefined;
    current = state;
    return true;
  };

  /**
   * Follows `bytes` (which start at `position`) through the pack, up to the end of OBJECTS_PER_TURN objects or
   * INFLATED_PER_TURN inflated bytes: returns how many of them it took (`used`), and where in those the trailer
   * begins.
   */
  const parse = (bytes: Uint8Array): { used: number; trailerAt: number } => {
    let at = 0;
    let trailerAt = phase === 'trailer' || phase === 'done' ? 0 : undefined;
    let objects = 0;
    let inflated = 0;
    while (at < bytes.length && objects < OBJECTS_PER_TURN && inflated < INFLATED_PER_TURN) {
      if (phase === 'pack-header') {
        header.push(bytes[at++]!);
        if (header.length < 12) continue;
        const view = Buffer.from(header);
        const version = view.readUInt32BE(4);
        if (view.toString('latin1', 0, 4) !== 'PACK' || (version !== 2 && version !== 3))
          throw invalid('not a version 2 pack');
        total = left = view.readUInt32BE(8);
        if (total > options.maxObjects) throw tooMany(total, options.maxObjects);
        phase = left === 0 ? 'trailer' : 'object-header';
        if (left === 0) trailerAt = at;
        header = [];
      } else if (phase === 'object-header') {
        header.push(bytes[at++]!);
        if (objectHeader(position + at - header.length)) {
          header = [];
          phase = 'data';
        }
      } else if (phase === 'data') {
        const state = current!;
        const rest = bytes.subarray(at, at + INFLATE_INPUT_BYTES);
        const before = state.inflated;
        // false: not a zlib stream.
        if (!state.inflater.push(rest, false)) throw invalid(`corrupt object data at ${state.entry.offset}`);
        inflated += state.inflated - before;
        const used = state.inflater.ended ? rest.length - state.inflater.strm.avail_in : rest.length;
        state.entry.crc = crc32(rest.subarray(0, used), state.entry.crc);
        at += used;
        if (!state.inflater.ended) continue;
        if (state.inflated !== state.size)
          throw invalid(`object at ${state.entry.offset} is not ${state.size} bytes`);
        if (state.hash !== undefined) state.entry.oid = state.hash.digest('hex');
        arrived.push(state.entry);
        objects++;
        current = undefined;
        progress('Receiving objects', total - --left);
        phase = left === 0 ? 'trailer' : 'object-header';
        if (left === 0) trailerAt = at;
      } else if (phase === 'trailer') {
        trailer.push(bytes[at++]!);
        if (trailer.length === 20) phase = 'done';
      } else throw invalid('bytes after the pack trailer');
    }
    return { used: at, trailerAt: trailerAt ?? at };
  };

  /** Offsets in pack order: where each object ends, for the reader. */
  const provisionalIndex = (byOid: Map<string, number>, size: number): PackIndex => {
    const offsets = arrived.map((entry) => entry.offset);
    return {
      count: arrived.length,
      offsetOf: (oid) => byOid.get(oid.toString('hex')),
      endOf(offset) {
        let low = 0;
        let high = offsets.length;
        while (low < high) {
          const mid = (low + high) >>> 1;
          if (offsets[mid]! <= offset) low = mid + 1;
          else high = mid;
        }
        return low < offsets.length ? offsets[low]! : size - 20;
      },
    };
  };

  /** Each delta read back and built, its id the hash of what it builds; bases by id may be in the store. */
  const resolve = async (handle: FileHandle, size: number): Promise<void> => {
    const byOid = new Map(
      arrived.flatMap((entry) => (entry.oid === undefined ? [] : [[entry.oid, entry.offset]])),
    );
    const cache = objectCache(RESOLVE_CACHE_BYTES);
    let pending = arrived.filter((entry) => entry.oid === undefined);
    const reader = openPack('incoming', handle, provisionalIndex(byOid, size), cache, async (oid) => {
      const offset = byOid.get(oid);
      return offset === undefined ? options.baseById(oid) : reader.readAt(offset);
    });
    let resolved = arrived.length - pending.length;
    lastPercent = -1;
    // A base named by id may itself be a delta later in the pack: rounds until none is left or none moves.
    while (pending.length > 0) {
      const next: Arrived[] = [];
      for (const [i, entry] of pending.entries()) {
        // Small entries are read synchronously: the loop gives the event loop its turn.
        if (i % OBJECTS_PER_TURN === OBJECTS_PER_TURN - 1) await nextTurn();
        let built: GitObject;
        try {
          built = await reader.readAt(entry.offset);
        } catch (error) {
          if (error instanceof TransportStop || (error as { code?: string }).code === 'source-too-large')
            throw error;
          next.push(entry);
          continue;
        }
        entry.oid = createHash('sha1')
          .update(`${built.type} ${built.data.length}\0`)
          .update(built.data)
          .digest('hex');
        byOid.set(entry.oid, entry.offset);
        progress('Resolving deltas', ++resolved);
      }
      if (next.length === pending.length)
        throw invalid(`${next.length} delta(s) whose base is not in the pack or the store`);
      pending = next;
    }
  };

  const abort = async () => {
    aborted = true;
    const handle = file ?? (await opening?.catch(() => undefined));
    file = undefined;
    await handle?.close().catch(() => undefined);
    await fsp.rm(temp, { force: true });
    await fsp.rm(temp.replace('tmp_pack_', 'tmp_idx_'), { force: true });
  };

  return {
    abort,
    async write(bytes) {
      // After an abort the transfer has failed: nothing more is written.
      if (bytes.length === 0 || aborted) return;
      if (file === undefined) {
        opening ??= fsp.mkdir(packDir, { recursive: true }).then(() => fsp.open(temp, 'wx+'));
        const opened = await opening;
        if (aborted) return;
        file = opened;
      }
      await file.write(bytes);
      // In slices of OBJECTS_PER_TURN objects, the event loop running between them.
      for (let from = 0; from < bytes.length; ) {
        if (from > 0) await nextTurn();
        const slice = bytes.subarray(from);
        const { used, trailerAt } = parse(slice);
        // Everything before the trailer is what the trailer's SHA-1 covers.
        whole.update(slice.subarray(0, trailerAt));
        position += used;
        from += used;
      }
    },
    async finish() {
      if (file === undefined) return;
      const handle = file;
      try {
        if (phase !== 'done') throw invalid('the pack ended early');
        const sha = whole.digest();
        if (!sha.equals(Buffer.from(trailer))) throw invalid('the pack does not match its trailer');
        await handle.sync();
        await resolve(handle, position);
        const index = await serializePackIndex(arrived as IndexedObject[], sha);
        const name = path.join(packDir, `pack-${sha.toString('hex')}`);
        const indexTemp = `${temp.replace('tmp_pack_', 'tmp_idx_')}`;
        await fsp.writeFile(indexTemp, index, { flag: 'wx' });
        await handle.close();
        file = undefined;
        // The index last: a reader finds a pack by its index.
        await fsp.rename(temp, `${name}.pack`);
        await fsp.rename(indexTemp, `${name}.idx`);
      } finally {
        if (file !== undefined) await abort();
      }
    },
  };
}
