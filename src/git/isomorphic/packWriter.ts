import { createHash, randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { GitObject } from '../objects.ts';
import type { FetchProgress } from '../repository.ts';
import { objectCache } from './odb.ts';
import { openPack } from './pack.ts';
import type { PackGuard, TransferGuard } from '../packGuard.ts';
import { nextTurn, OBJECTS_PER_TURN } from '../turns.ts';
import { type Arrivals, type Arrived, arrivals } from './arrived.ts';
import { type IndexedObject, type PackIndex, serializePackIndex } from './packIndex.ts';
import { stopOf, TransportStop } from './stop.ts';

/** Bytes of objects kept while deltas are resolved (their bases, above all). */
const RESOLVE_CACHE_BYTES = 32 * 1024 * 1024;

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
  /** The transfer's guard: it follows the pack as it arrives, and its refusal stops the transfer. */
  guard: TransferGuard;
  onProgress?: (progress: FetchProgress) => void;
}

/** One pack being written: its temporary file, and the pack as it arrived. */
interface Writing {
  packDir: string;
  temp: string;
  baseById: PackWriterOptions['baseById'];
  file: FileHandle | undefined;
  /** The temp file a first write is opening: an abort meanwhile waits for it, and closes it. */
  opening: Promise<FileHandle> | undefined;
  aborted: boolean;
  /** The SHA-1 of everything before the trailer. */
  whole: ReturnType<typeof createHash>;
  pack: PackGuard;
  arrivals: Arrivals;
}

const invalid = (why: string) => new TransportStop('source-pack-invalid', {}, why);

/**
 * Takes a pack as it arrives (gitformat-pack(5)) and writes it to disk, never holding it: the transfer's guard
 * follows it (packGuard: every rule a hostile pack meets) and stops the transfer (`TransportStop`) when it refuses;
 * what the index needs is recorded on the way (arrived.ts). Then, as `git index-pack` does, checks the trailer,
 * resolves the deltas by reading them back, and writes the `.idx`; the pack is named by its trailer and its index is
 * renamed into place last. Memory is the objects being resolved (bounded cache), whatever the size of the pack.
 */
export function packWriter(options: PackWriterOptions): PackWriter {
  const packDir = path.join(options.gitdir, 'objects', 'pack');
  const whole = createHash('sha1');
  const recorded = arrivals(options.onProgress);
  // Everything before the trailer is what the trailer's SHA-1 covers.
  const pack = options.guard.pack({ ...recorded.hooks, body: (bytes) => whole.update(bytes) });
  recorded.guard = pack;
  const writing: Writing = {
    packDir,
    // A name the store's sweep removes if the process dies before the pack is whole.
    temp: path.join(packDir, `tmp_pack_iso_${randomBytes(6).toString('hex')}`),
    baseById: options.baseById,
    file: undefined,
    opening: undefined,
    aborted: false,
    whole,
    pack,
    arrivals: recorded,
  };
  return {
    write: (bytes) => write(writing, bytes),
    finish: () => finish(writing),
    abort: () => abort(writing),
  };
}

async function write(writing: Writing, bytes: Uint8Array): Promise<void> {
  // After an abort the transfer has failed: nothing more is written.
  if (bytes.length === 0 || writing.aborted) return;
  if (writing.file === undefined) {
    writing.opening ??= fsp
      .mkdir(writing.packDir, { recursive: true })
      .then(() => fsp.open(writing.temp, 'wx+'));
    const opened = await writing.opening;
    if (writing.aborted) return;
    writing.file = opened;
  }
  await writing.file.write(bytes);
  // In slices of OBJECTS_PER_TURN objects, the event loop running between them.
  for (let from = 0; from < bytes.length; ) {
    if (from > 0) await nextTurn();
    const { used, refused } = writing.pack.push(bytes.subarray(from));
    if (refused !== undefined) throw stopOf(refused);
    from += used;
  }
}

const indexTempOf = (temp: string) => temp.replace('tmp_pack_', 'tmp_idx_');

async function finish(writing: Writing): Promise<void> {
  if (writing.file === undefined) return;
  const handle = writing.file;
  const { pack, arrivals } = writing;
  try {
    if (!pack.done()) throw invalid('the pack ended early');
    const sha = writing.whole.digest();
    if (!sha.equals(pack.trailer)) throw invalid('the pack does not match its trailer');
    await handle.sync();
    await resolveDeltas(arrivals, pack.position, handle, writing.baseById);
    const index = await serializePackIndex(arrivals.arrived as IndexedObject[], sha);
    const name = path.join(writing.packDir, `pack-${sha.toString('hex')}`);
    const indexTemp = indexTempOf(writing.temp);
    await fsp.writeFile(indexTemp, index, { flag: 'wx' });
    await handle.close();
    writing.file = undefined;
    // The index last: a reader finds a pack by its index.
    await fsp.rename(writing.temp, `${name}.pack`);
    await fsp.rename(indexTemp, `${name}.idx`);
  } finally {
    if (writing.file !== undefined) await abort(writing);
  }
}

async function abort(writing: Writing): Promise<void> {
  writing.aborted = true;
  const handle = writing.file ?? (await writing.opening?.catch(() => undefined));
  writing.file = undefined;
  await handle?.close().catch(() => undefined);
  await fsp.rm(writing.temp, { force: true });
  await fsp.rm(indexTempOf(writing.temp), { force: true });
}

/** Offsets in pack order: where each object ends, for the reader. */
function provisionalIndex(arrived: readonly Arrived[], byOid: Map<string, number>, size: number): PackIndex {
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
}

/**
 * Each delta read back from the pack written to `handle` and built, its id the hash of what it builds; bases by id
 * may be in the store.
 */
async function resolveDeltas(
  recorded: Arrivals,
  packSize: number,
  handle: FileHandle,
  baseById: PackWriterOptions['baseById'],
): Promise<void> {
  const { arrived } = recorded;
  const byOid = new Map(
    arrived.flatMap((entry) => (entry.oid === undefined ? [] : [[entry.oid, entry.offset]])),
  );
  const cache = objectCache(RESOLVE_CACHE_BYTES);
  let pending = arrived.filter((entry) => entry.oid === undefined);
  const index = provisionalIndex(arrived, byOid, packSize);
  const reader = openPack('incoming', handle, index, cache, async (oid) => {
    const offset = byOid.get(oid);
    return offset === undefined ? baseById(oid) : reader.readAt(offset);
  });
  let resolved = arrived.length - pending.length;
  // A base named by id may itself be a delta later in the pack: rounds until none is left or none moves.
  while (pending.length > 0) {
    const next: Arrived[] = [];
    for (const [i, entry] of pending.entries()) {
      // Small entries are read synchronously: the loop gives the event loop its turn.
      if (i % OBJECTS_PER_TURN === OBJECTS_PER_TURN - 1) await nextTurn();
      const built = await reader.readAt(entry.offset).catch((error: unknown) => {
        if (error instanceof TransportStop || (error as { code?: string }).code === 'source-too-large')
          throw error;
        return undefined;
      });
      if (built === undefined) {
        next.push(entry);
        continue;
      }
      entry.oid = createHash('sha1')
        .update(`${built.type} ${built.data.length}\0`)
        .update(built.data)
        .digest('hex');
      byOid.set(entry.oid, entry.offset);
      recorded.progress('Resolving deltas', ++resolved);
    }
    if (next.length === pending.length)
      throw invalid(`${next.length} delta(s) whose base is not in the pack or the store`);
    pending = next;
  }
}
