import { constants, inflateSync } from 'node:zlib';
import pako from 'pako';
import type { FailureFacts } from './failure.ts';
import { MAX_LARGE_BLOB_BYTES, MAX_OBJECT_BYTES } from './limits.ts';
import { BLOB, deltaSizes, entryHeader, OFS_DELTA, REF_DELTA, type StreamingInflate } from './packEntry.ts';
import { INFLATE_INPUT_BYTES, INFLATED_PER_TURN, OBJECTS_PER_TURN } from './turns.ts';

/** Why a transfer is refused: the reason, what our sentence names (failure.ts), and a line for the log. */
export interface Refusal {
  reason: 'source-too-large' | 'source-pack-invalid' | 'source-timeout';
  facts: FailureFacts;
  why: string;
}

export interface TransferLimits {
  /** Bytes the transfer may bring (sync.maxFetchBytes). */
  maxBytes: number;
  /** Objects one of its packs may declare (sync.maxFetchObjects). */
  maxObjects: number;
  /** The transfer ends this long after it started, however its bytes move (sync.deadline). */
  deadlineMs: number;
  /** The clock, in ms (Date.now unless a test passes one). */
  now?: () => number;
}

/**
 * What one transfer may bring, whichever backend brings it: each rule a hostile remote meets is here, once. A
 * backend feeds it what it sees (bytes received, a count git printed, each pack's bytes as they arrive); the first
 * refusal is the transfer's, and every later question answers it again.
 */
export interface TransferGuard {
  /** The transfer has received `total` bytes so far: refused past maxBytes. */
  received(total: number): Refusal | undefined;
  /** A pack of the transfer declares `count` objects: refused past maxObjects. */
  objects(count: number): Refusal | undefined;
  /** Time left before the deadline, in ms (at most 0 once it passed). */
  remainingMs(): number;
  /** The deadline passed: its refusal (the transport's timer calls it; a pack's push finds it alone). */
  overtime(): Refusal;
  /** Follows one pack of the transfer from its first byte (gitformat-pack(5)). */
  pack(hooks?: PackHooks): PackGuard;
  /** The transfer's refusal, once it has one. */
  refused(): Refusal | undefined;
}

/** What a backend that writes the pack itself learns as the guard follows it; a scan passes none. */
export interface PackHooks {
  /** An object's header arrived: where it starts in the pack, its header's bytes, its type and declared size. */
  object?(offset: number, header: Uint8Array, type: number, size: number): void;
  /** The current object's compressed bytes, in order, as taken. */
  deflated?(bytes: Uint8Array): void;
  /** What the current object inflates to, in order. */
  inflated?(bytes: Uint8Array): void;
  /** The current object ended, inflated to its declared size. */
  ended?(): void;
  /** Every byte of the pack before its trailer, in order: what the trailer's SHA-1 covers. */
  body?(bytes: Uint8Array): void;
}

export interface PackGuard {
  /**
   * Takes the pack's next bytes, as far as the end of OBJECTS_PER_TURN objects or INFLATED_PER_TURN inflated
   * bytes: how many it took, and the transfer's refusal once it has one (or `source-pack-invalid`: this pack's
   * bytes are not a pack, which refuses nothing else of the transfer).
   */
  push(bytes: Uint8Array): { used: number; refused?: Refusal };
  /** Nothing more to follow: the pack's trailer came, or push said it is not a pack it can follow. */
  done(): boolean;
  /** Objects the pack's header declares (0 before it came), bytes taken, and the trailer once it came. */
  readonly total: number;
  readonly position: number;
  readonly trailer: Buffer;
}

const tooLarge = (why: string): Refusal => ({ reason: 'source-too-large', facts: {}, why });
const invalid = (why: string): Refusal => ({ reason: 'source-pack-invalid', facts: {}, why });

/** Whether a delta, by the sizes its header names, needs an object over MAX_OBJECT_BYTES as base or result. */
export function deltaOversized(inflated: ArrayLike<number>): boolean {
  const [base, result] = deltaSizes(inflated);
  return (base ?? 0) > MAX_OBJECT_BYTES || (result ?? 0) > MAX_OBJECT_BYTES;
}

/**
 * The size rule of a transfer's object headers: an entry over MAX_OBJECT_BYTES is refused, unless it is a blob,
 * kept while the blobs over MAX_OBJECT_BYTES declare at most MAX_LARGE_BLOB_BYTES together (each is inflated once,
 * to hash it: this bounds that work). A delta is refused at that size whatever it builds (deltaOversized).
 */
export function transferSizeRule(): (type: number, size: number) => Refusal | undefined {
  let largeBlobs = 0;
  return (type, size) => {
    if (size <= MAX_OBJECT_BYTES) return undefined;
    if (type !== BLOB) return tooLarge(`an object declares ${size} bytes`);
    largeBlobs += size;
    if (largeBlobs <= MAX_LARGE_BLOB_BYTES) return undefined;
    return {
      reason: 'source-too-large',
      facts: { largeBlobs: true },
      why: `a blob of ${size} bytes takes the transfer's blobs over ${MAX_OBJECT_BYTES} bytes past ${MAX_LARGE_BLOB_BYTES}`,
    };
  };
}

export function transferGuard(limits: TransferLimits): TransferGuard {
  const now = limits.now ?? Date.now;
  const started = now();
  const sizeRule = transferSizeRule();
  let refusal: Refusal | undefined;
  const refuse = (why: Refusal | undefined) => {
    refusal ??= why;
    return refusal;
  };
  const guard: TransferGuard = {
    received: (total) =>
      refuse(
        total > limits.maxBytes
          ? { reason: 'source-too-large', facts: { maxBytes: limits.maxBytes }, why: `${total} bytes came` }
          : undefined,
      ),
    objects: (count) =>
      refuse(
        count > limits.maxObjects
          ? {
              reason: 'source-too-large',
              facts: { maxObjects: limits.maxObjects },
              why: `the pack holds ${count} objects`,
            }
          : undefined,
      ),
    remainingMs: () => Math.max(0, limits.deadlineMs - (now() - started)),
    overtime: () =>
      refuse({ reason: 'source-timeout', facts: { deadlineMs: limits.deadlineMs }, why: 'deadline' })!,
    pack: (hooks = {}) =>
      followPack(hooks, {
        sizeRule,
        objects: guard.objects,
        refuse,
        overtime: () => (guard.remainingMs() === 0 ? guard.overtime() : undefined),
      }),
    refused: () => refusal,
  };
  return guard;
}

/** The transfer's rules a pack answers to. */
interface Rules {
  sizeRule: ReturnType<typeof transferSizeRule>;
  objects(count: number): Refusal | undefined;
  refuse(why: Refusal | undefined): Refusal | undefined;
  overtime(): Refusal | undefined;
}

/** Objects up to this size whose zlib stream is whole in the bytes at hand are inflated by zlib in one call. */
const WHOLE_INFLATE_MAX = 1024 * 1024;
/** No real object header is longer (type and size, then a delta's base offset or id). */
const MAX_HEADER_BYTES = 64;

/** One pack being followed: where it is, and the object whose data is being inflated. */
interface Following {
  hooks: PackHooks;
  rules: Rules;
  phase: 'pack-header' | 'object-header' | 'data' | 'trailer' | 'done';
  header: number[];
  total: number;
  left: number;
  position: number;
  trailer: number[];
  /** The current object: its declared size, whether it is a delta, and its streaming inflater once it has one. */
  size: number;
  delta: boolean;
  offset: number;
  inflater: StreamingInflate | undefined;
  inflated: number;
  /** Why the pack cannot be followed further, once it cannot. */
  invalid: Refusal | undefined;
}

/** Where a push is in the bytes it was given, and what it did in this turn. */
interface Turn {
  bytes: Uint8Array;
  at: number;
  objects: number;
  inflated: number;
  /** Where the trailer starts in these bytes, once it does. */
  trailerAt: number | undefined;
}

function followPack(hooks: PackHooks, rules: Rules): PackGuard {
  const pack: Following = {
    hooks,
    rules,
    phase: 'pack-header',
    header: [],
    total: 0,
    left: 0,
    position: 0,
    trailer: [],
    size: 0,
    delta: false,
    offset: 0,
    inflater: undefined,
    inflated: 0,
    invalid: undefined,
  };
  return {
    push: (bytes) => push(pack, bytes),
    done: () => pack.phase === 'done' || pack.invalid !== undefined,
    get total() {
      return pack.total;
    },
    get position() {
      return pack.position;
    },
    get trailer() {
      return Buffer.from(pack.trailer);
    },
  };
}

function push(pack: Following, bytes: Uint8Array): { used: number; refused?: Refusal } {
  const turn: Turn = {
    bytes,
    at: 0,
    objects: 0,
    inflated: 0,
    trailerAt: pack.phase === 'trailer' || pack.phase === 'done' ? 0 : undefined,
  };
  let refused = pack.invalid ?? pack.rules.refuse(pack.rules.overtime());
  while (
    refused === undefined &&
    turn.at < bytes.length &&
    turn.objects < OBJECTS_PER_TURN &&
    turn.inflated < INFLATED_PER_TURN
  )
    refused = STEPS[pack.phase](pack, turn);
  // A pack the guard cannot follow is the pack's fault: the backend that indexes it refuses it, or leaves it to git.
  if (refused?.reason === 'source-pack-invalid') pack.invalid = refused;
  else refused = pack.rules.refuse(refused);
  pack.hooks.body?.(bytes.subarray(0, turn.trailerAt ?? turn.at));
  pack.position += turn.at;
  return refused === undefined ? { used: turn.at } : { used: turn.at, refused };
}

/** What each phase does with the next bytes; a refusal ends the transfer. */
const STEPS: Record<Following['phase'], (pack: Following, turn: Turn) => Refusal | undefined> = {
  'pack-header': packHeader,
  'object-header': objectHeader,
  data: (pack, turn) => (pack.inflater === undefined ? wholeObject(pack, turn) : streamed(pack, turn)),
  trailer: (pack, turn) => {
    pack.trailer.push(turn.bytes[turn.at++]!);
    if (pack.trailer.length === 20) pack.phase = 'done';
    return undefined;
  },
  done: () => invalid('bytes after the pack trailer'),
};

/** After the pack's header or an object: the next object's header, or the trailer after the last one. */
function nextObject(pack: Following, turn: Turn): void {
  pack.phase = pack.left === 0 ? 'trailer' : 'object-header';
  if (pack.left === 0) turn.trailerAt = turn.at;
}

function packHeader(pack: Following, turn: Turn): Refusal | undefined {
  pack.header.push(turn.bytes[turn.at++]!);
  if (pack.header.length < 12) return undefined;
  const view = Buffer.from(pack.header);
  pack.header = [];
  const version = view.readUInt32BE(4);
  if (view.toString('latin1', 0, 4) !== 'PACK' || (version !== 2 && version !== 3))
    return invalid('not a version 2 pack');
  pack.total = pack.left = view.readUInt32BE(8);
  nextObject(pack, turn);
  return pack.rules.objects(pack.total);
}

function objectHeader(pack: Following, turn: Turn): Refusal | undefined {
  pack.header.push(turn.bytes[turn.at++]!);
  const offset = pack.position + turn.at - pack.header.length;
  const found = pack.header.length > MAX_HEADER_BYTES ? 'malformed' : entryHeader(pack.header);
  if (found === undefined) return undefined;
  if (found === 'malformed') return invalid(`bad object header at ${offset}`);
  const { type, size } = found;
  if (type < 1 || type === 5 || type > 7) return invalid(`unknown object type ${type} at ${offset}`);
  const oversized = pack.rules.sizeRule(type, size);
  if (oversized !== undefined) return oversized;
  pack.hooks.object?.(offset, Uint8Array.from(pack.header), type, size);
  Object.assign(pack, { header: [], phase: 'data', size, offset, inflater: undefined, inflated: 0 });
  pack.delta = type === OFS_DELTA || type === REF_DELTA;
  return undefined;
}

/** An object ended, inflated to its declared size. */
function ended(pack: Following, turn: Turn): Refusal | undefined {
  if (pack.inflated !== pack.size) return invalid(`object at ${pack.offset} is not ${pack.size} bytes`);
  pack.hooks.ended?.();
  pack.inflater = undefined;
  turn.objects++;
  pack.left--;
  nextObject(pack, turn);
  return undefined;
}

/** An object inflating past the size its header declares (a bomb behind a small header): never inflated further. */
const pastHeader = (pack: Following) =>
  invalid(`the object at ${pack.offset} inflates past the ${pack.size} bytes its header declares`);

/** Counts what the current object inflated to: past its declared size (a bomb), or a delta over the limit. */
function inflatedChunk(pack: Following, chunk: Uint8Array): Refusal | undefined {
  if (pack.delta && pack.inflated === 0 && deltaOversized(chunk))
    return tooLarge(`the delta at ${pack.offset} needs an object over the limit`);
  pack.inflated += chunk.length;
  if (pack.inflated > pack.size) return pastHeader(pack);
  pack.hooks.inflated?.(chunk);
  return undefined;
}

/**
 * An object of at most WHOLE_INFLATE_MAX bytes whose zlib stream ends within the bytes at hand, inflated in one call
 * of the zlib binding (some four times faster than pako's streaming); else its streaming inflater starts.
 */
function wholeObject(pack: Following, turn: Turn): Refusal | undefined {
  const rest = turn.bytes.subarray(turn.at);
  const whole = pack.size <= WHOLE_INFLATE_MAX ? inflatedWhole(rest, pack.size) : undefined;
  if (whole === 'over') return pastHeader(pack);
  if (whole === undefined) {
    startInflate(pack);
    return undefined;
  }
  const refused = inflatedChunk(pack, whole.data);
  if (refused !== undefined) return refused;
  pack.hooks.deflated?.(rest.subarray(0, whole.used));
  turn.at += whole.used;
  turn.inflated += whole.data.length;
  return ended(pack, turn);
}

/**
 * `bytes` inflated in one call when they begin a zlib stream of exactly `size` bytes that ends before they do;
 * `'over'` when it inflates past `size`; `undefined` when it does not end within them or is not zlib (pako
 * follows it, and says which).
 */
function inflatedWhole(bytes: Uint8Array, size: number): { used: number; data: Buffer } | 'over' | undefined {
  try {
    // With `info`, zlib gives its engine too: `bytesWritten` is the input its stream took.
    const { buffer, engine } = inflateSync(bytes, {
      info: true,
      maxOutputLength: Math.max(size, 1),
      finishFlush: constants.Z_SYNC_FLUSH,
    }) as unknown as { buffer: Buffer; engine: { bytesWritten: number } };
    // Its stream ended before `bytes` did: whole (else its end may be in the bytes to come).
    return buffer.length === size && engine.bytesWritten < bytes.length
      ? { used: engine.bytesWritten, data: buffer }
      : undefined;
  } catch (error) {
    return error instanceof RangeError ? 'over' : undefined;
  }
}

function startInflate(pack: Following): void {
  const inflater = new pako.Inflate() as StreamingInflate;
  let refused: Refusal | undefined;
  // Counted and passed on, never kept (pako keeps every chunk by default); binary input gives binary chunks.
  inflater.onData = (chunk) => {
    refused ??= inflatedChunk(pack, chunk as Uint8Array);
  };
  inflater.onEnd = () => undefined;
  pack.inflater = Object.assign(inflater, { refused: () => refused });
}

/** The current object's next compressed bytes (at most INFLATE_INPUT_BYTES) through its streaming inflater. */
function streamed(pack: Following, turn: Turn): Refusal | undefined {
  const inflater = pack.inflater as StreamingInflate & { refused(): Refusal | undefined };
  const rest = turn.bytes.subarray(turn.at, turn.at + INFLATE_INPUT_BYTES);
  const before = pack.inflated;
  // false: not a zlib stream.
  if (!inflater.push(rest, false)) return invalid(`corrupt object data at ${pack.offset}`);
  const refused = inflater.refused();
  if (refused !== undefined) return refused;
  const used = inflater.ended ? rest.length - inflater.strm.avail_in : rest.length;
  pack.hooks.deflated?.(rest.subarray(0, used));
  turn.inflated += pack.inflated - before;
  turn.at += used;
  return inflater.ended ? ended(pack, turn) : undefined;
}
