import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import pako from 'pako';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from '../limits.ts';
import {
  deltaOversized,
  entryHeader,
  OFS_DELTA,
  type Oversized,
  REF_DELTA,
  type StreamingInflate,
  transferSizeRule,
} from '../packEntry.ts';
import type { GitObject } from '../objects.ts';
import type { FetchProgress } from '../repository.ts';
import type { IndexedObject } from './packIndex.ts';
import { TransportStop } from './stop.ts';
import { INFLATE_INPUT_BYTES, INFLATED_PER_TURN, OBJECTS_PER_TURN } from '../turns.ts';

const TYPE_NAMES: Record<number, GitObject['type']> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

/** One object of the pack as it arrived: where, its CRC, and its id once known (a delta's after resolving). */
export interface Arrived extends Partial<IndexedObject> {
  offset: number;
  crc: number;
}

/** The object whose zlib stream is being inflated: counted, and hashed unless it is a delta. */
interface Inflating {
  entry: Arrived;
  inflater: StreamingInflate;
  size: number;
  inflated: number;
  hash: Hash | undefined;
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
export const invalid = (why: string) => new TransportStop('source-pack-invalid', {}, why);
const tooMany = (count: number, maxObjects: number) =>
  new TransportStop('source-too-large', { maxObjects }, `the pack holds ${count} objects`);

/** A pack followed as its bytes arrive (gitformat-pack(5)): where it is, and what arrived of it. */
export interface PackStream {
  phase: 'pack-header' | 'object-header' | 'data' | 'trailer' | 'done';
  /** The bytes of the header being read: the pack's, then each object's. */
  header: number[];
  /** Objects the pack's header names, and how many of them are still to come. */
  total: number;
  left: number;
  trailer: number[];
  current: Inflating | undefined;
  arrived: Arrived[];
  /** Bytes of the pack taken so far: where the next slice starts. */
  position: number;
  maxObjects: number;
  sizeRule: ReturnType<typeof transferSizeRule>;
  lastPercent: number;
  onProgress: ((progress: FetchProgress) => void) | undefined;
}

export function packStream(
  maxObjects: number,
  onProgress: ((progress: FetchProgress) => void) | undefined,
): PackStream {
  return {
    phase: 'pack-header',
    header: [],
    total: 0,
    left: 0,
    trailer: [],
    current: undefined,
    arrived: [],
    position: 0,
    maxObjects,
    sizeRule: transferSizeRule(),
    lastPercent: -1,
    onProgress,
  };
}

/** Reports `loaded` of the pack's objects, once per percent (and at the last one). */
export function reportProgress(stream: PackStream, phaseName: string, loaded: number): void {
  const { total } = stream;
  const percent = Math.floor((loaded * 100) / Math.max(total, 1));
  if (percent === stream.lastPercent && loaded !== total) return;
  stream.lastPercent = percent;
  stream.onProgress?.({ phase: phaseName, loaded, total, bytes: stream.position });
}

/** Where `parse` is in the slice it was given, and what it did in this turn. */
interface Turn {
  bytes: Uint8Array;
  at: number;
  objects: number;
  inflated: number;
  trailerAt: number | undefined;
}

/**
 * Follows `bytes` (which start at `stream.position`) through the pack, up to the end of OBJECTS_PER_TURN objects
 * or INFLATED_PER_TURN inflated bytes: returns how many of them it took (`used`), and where in those the trailer
 * begins.
 */
export function parse(stream: PackStream, bytes: Uint8Array): { used: number; trailerAt: number } {
  const turn: Turn = {
    bytes,
    at: 0,
    objects: 0,
    inflated: 0,
    trailerAt: stream.phase === 'trailer' || stream.phase === 'done' ? 0 : undefined,
  };
  while (turn.at < bytes.length && turn.objects < OBJECTS_PER_TURN && turn.inflated < INFLATED_PER_TURN)
    STEPS[stream.phase](stream, turn);
  return { used: turn.at, trailerAt: turn.trailerAt ?? turn.at };
}

/** What each phase does with the next bytes. */
const STEPS: Record<PackStream['phase'], (stream: PackStream, turn: Turn) => void> = {
  'pack-header': packHeader,
  'object-header': (stream, turn) => {
    stream.header.push(turn.bytes[turn.at++]!);
    if (!objectHeader(stream, stream.position + turn.at - stream.header.length)) return;
    stream.header = [];
    stream.phase = 'data';
  },
  data: objectData,
  trailer: (stream, turn) => {
    stream.trailer.push(turn.bytes[turn.at++]!);
    if (stream.trailer.length === 20) stream.phase = 'done';
  },
  done: () => {
    throw invalid('bytes after the pack trailer');
  },
};

/** After the pack's header or an object: the next object's header, or the trailer after the last one. */
function nextObject(stream: PackStream, turn: Turn): void {
  stream.phase = stream.left === 0 ? 'trailer' : 'object-header';
  if (stream.left === 0) turn.trailerAt = turn.at;
}

function packHeader(stream: PackStream, turn: Turn): void {
  stream.header.push(turn.bytes[turn.at++]!);
  if (stream.header.length < 12) return;
  const view = Buffer.from(stream.header);
  const version = view.readUInt32BE(4);
  if (view.toString('latin1', 0, 4) !== 'PACK' || (version !== 2 && version !== 3))
    throw invalid('not a version 2 pack');
  stream.total = stream.left = view.readUInt32BE(8);
  if (stream.total > stream.maxObjects) throw tooMany(stream.total, stream.maxObjects);
  nextObject(stream, turn);
  stream.header = [];
}

/** Reads an object header from `stream.header`; `false` while more bytes are needed. */
function objectHeader(stream: PackStream, offset: number): boolean {
  const found = entryHeader(stream.header);
  if (found === undefined) return false;
  if (found === 'malformed') throw invalid(`bad object header at ${offset}`);
  const { type, size } = found;
  if (type !== OFS_DELTA && type !== REF_DELTA && TYPE_NAMES[type] === undefined)
    throw invalid(`unknown object type ${type} at ${offset}`);
  const oversized = stream.sizeRule(type, size);
  if (oversized !== undefined) throw refused(oversized, size);
  const entry: Arrived = { offset, crc: crc32(Buffer.from(stream.header)) };
  const name = TYPE_NAMES[type];
  const hash = name === undefined ? undefined : createHash('sha1').update(`${name} ${size}\0`);
  const inflater = new pako.Inflate() as StreamingInflate;
  const state: Inflating = { entry, inflater, size, inflated: 0, hash };
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
  stream.current = state;
  return true;
}

/** Inflates the current object's next bytes (at most INFLATE_INPUT_BYTES); at its end, records it. */
function objectData(stream: PackStream, turn: Turn): void {
  const state = stream.current!;
  const rest = turn.bytes.subarray(turn.at, turn.at + INFLATE_INPUT_BYTES);
  const before = state.inflated;
  // false: not a zlib stream.
  if (!state.inflater.push(rest, false)) throw invalid(`corrupt object data at ${state.entry.offset}`);
  turn.inflated += state.inflated - before;
  const used = state.inflater.ended ? rest.length - state.inflater.strm.avail_in : rest.length;
  state.entry.crc = crc32(rest.subarray(0, used), state.entry.crc);
  turn.at += used;
  if (!state.inflater.ended) return;
  if (state.inflated !== state.size)
    throw invalid(`object at ${state.entry.offset} is not ${state.size} bytes`);
  if (state.hash !== undefined) state.entry.oid = state.hash.digest('hex');
  stream.arrived.push(state.entry);
  turn.objects++;
  stream.current = undefined;
  reportProgress(stream, 'Receiving objects', stream.total - --stream.left);
  nextObject(stream, turn);
}
