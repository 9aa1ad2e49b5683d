import { constants, inflateSync } from 'node:zlib';
import pako from 'pako';
import {
  deltaOversized,
  entryHeader,
  OFS_DELTA,
  type Oversized,
  REF_DELTA,
  type StreamingInflate,
  transferSizeRule,
} from '../packEntry.ts';
import { INFLATE_INPUT_BYTES, INFLATED_PER_TURN, OBJECTS_PER_TURN } from '../turns.ts';

export interface PackScan {
  /**
   * Takes the pack's next bytes, as far as the end of OBJECTS_PER_TURN objects or INFLATED_PER_TURN inflated
   * bytes: returns how many it took, and why the transfer is refused once a header (or inflated bytes) says so.
   */
  push(bytes: Uint8Array): { used: number; oversized?: Oversized };
  /** Every object of the pack was followed (or the scan gave up on it): nothing more to read. */
  done(): boolean;
}

/** Objects up to this size whose zlib stream is whole in the bytes at hand are inflated by zlib in one call. */
const WHOLE_INFLATE_MAX = 1024 * 1024;

/**
 * An object of `size` bytes whose zlib stream begins `bytes`, inflated in one call of the zlib binding (some four
 * times faster than pako's streaming): its bytes and how many of `bytes` its stream took; `'over'` when it
 * inflates past `size`; `undefined` when its stream does not end within `bytes` or is not zlib (pako follows it).
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

/**
 * Follows a pack as git receives it (gitformat-pack(5)), object header by object header, never holding it: the
 * transfer's size rule (`transferSizeRule`) is applied as soon as a header arrives, where git would spend minutes
 * inflating a compression bomb to hash it. Each object's zlib stream is inflated only to find where it ends (and a
 * delta's header), its bytes counted and dropped. A pack it cannot follow is git's to refuse: the scan then stops
 * saying anything.
 */
export function packScanner(): PackScan {
  let phase: 'pack-header' | 'object-header' | 'data' | 'done' = 'pack-header';
  let header: number[] = [];
  let left = 0;
  let size = 0;
  let delta = false;
  let inflated = 0;
  /** The delta being inflated needs an object over MAX_OBJECT_BYTES, as its header says. */
  let deltaTooLarge = false;
  let inflater: StreamingInflate | undefined;
  const sizeRule = transferSizeRule();

  const startObject = () => {
    inflated = 0;
    deltaTooLarge = false;
    inflater = new pako.Inflate() as StreamingInflate;
    // Counted and dropped (pako keeps every chunk by default); a delta's header is in its first chunk.
    inflater.onData = (chunk) => {
      if (delta && inflated === 0) deltaTooLarge = deltaOversized(chunk as Uint8Array);
      inflated += (chunk as Uint8Array).length;
    };
    inflater.onEnd = () => undefined;
  };

  return {
    push(bytes) {
      let at = 0;
      let objects = 0;
      let turnInflated = 0;
      while (
        at < bytes.length &&
        objects < OBJECTS_PER_TURN &&
        turnInflated < INFLATED_PER_TURN &&
        phase !== 'done'
      ) {
        if (phase === 'pack-header') {
          header.push(bytes[at++]!);
          if (header.length < 12) continue;
          left = Buffer.from(header).readUInt32BE(8);
          header = [];
          phase = left === 0 ? 'done' : 'object-header';
        } else if (phase === 'object-header') {
          header.push(bytes[at++]!);
          // A header longer than any real one: not a pack this scan follows.
          if (header.length > 64) phase = 'done';
          const found = entryHeader(header);
          if (found === undefined) continue;
          // A size field longer than any real one is git's to refuse.
          if (found === 'malformed') {
            phase = 'done';
            continue;
          }
          const oversized = sizeRule(found.type, found.size);
          if (oversized !== undefined) return { used: at, oversized };
          size = found.size;
          delta = found.type === OFS_DELTA || found.type === REF_DELTA;
          header = [];
          inflater = undefined;
          phase = 'data';
        } else {
          if (inflater === undefined) {
            const whole = size <= WHOLE_INFLATE_MAX ? inflatedWhole(bytes.subarray(at), size) : undefined;
            if (whole === 'over' || (whole !== undefined && delta && deltaOversized(whole.data)))
              return { used: at, oversized: 'object' };
            if (whole === undefined) startObject();
            else {
              at += whole.used;
              turnInflated += size;
              objects++;
              phase = --left === 0 ? 'done' : 'object-header';
              continue;
            }
          }
          const rest = bytes.subarray(at, at + INFLATE_INPUT_BYTES);
          const before = inflated;
          if (!inflater!.push(rest, false)) {
            phase = 'done';
            break;
          }
          // Past its own header's size (a bomb), or a delta needing an object over the limit.
          if (inflated > size || deltaTooLarge) return { used: at, oversized: 'object' };
          turnInflated += inflated - before;
          at += inflater!.ended ? rest.length - inflater!.strm.avail_in : rest.length;
          if (!inflater!.ended) continue;
          objects++;
          phase = --left === 0 ? 'done' : 'object-header';
        }
      }
      return { used: phase === 'done' ? bytes.length : at };
    },
    done: () => phase === 'done',
  };
}
