import pako from 'pako';
import type { FailureFacts } from '../failure.ts';
import { MAX_OBJECT_BYTES } from '../limits.ts';

/** Why a guarded response was stopped: the reason and the facts our sentence names. */
export class TransportStop extends Error {
  constructor(
    readonly reason:
      | 'source-too-large'
      | 'source-timeout'
      | 'source-insecure-redirect'
      | 'source-redirect-refused',
    readonly facts: FailureFacts,
    message: string,
  ) {
    super(message);
    this.name = 'TransportStop';
  }
}

/** pako 1's inflater with the two fields its typings leave out (isomorphic-git's pack reader uses them too). */
type StreamingInflate = pako.Inflate & { ended: boolean; strm: { avail_in: number } };

const OFS_DELTA = 6;
const REF_DELTA = 7;
const WHOLE = new Set([1, 2, 3, 4]);

/** A base-128 little-endian size, as a delta's header holds it; `undefined` when `bytes` end before it does. */
function deltaSize(bytes: Uint8Array, from: number): [size: number, next: number] | undefined {
  let size = 0;
  for (let at = from, shift = 0; at < bytes.length && shift < 64; at++, shift += 7) {
    size += (bytes[at]! & 0x7f) * 2 ** shift;
    if ((bytes[at]! & 0x80) === 0) return [size, at + 1];
  }
  return undefined;
}

/**
 * Reads a pack as it arrives (gitformat-pack(5)): each object's header, then its zlib stream inflated and
 * counted, never kept. Throws `TransportStop` for an object whose header, delta header or inflated bytes pass
 * MAX_OBJECT_BYTES, or that inflates past its own header's size (a compression bomb). A pack it cannot read is
 * left to isomorphic-git to refuse.
 */
function packReader(): (bytes: Uint8Array) => void {
  let header: number[] = [];
  let phase: 'pack-header' | 'object-header' | 'data' | 'trailer' | 'off' = 'pack-header';
  let objects = 0;
  let inflater: StreamingInflate | undefined;
  let declared = 0;
  let inflated = 0;
  let isDelta = false;

  const tooLarge = (size: number) =>
    new TransportStop('source-too-large', {}, `a pack object inflates to ${size} bytes or more`);

  /** Parses one object header from `header`; `false` while more bytes are needed. */
  const objectHeader = (): boolean => {
    let at = 0;
    let byte = header[at++]!;
    const type = (byte >> 4) & 7;
    let size = byte & 0x0f;
    for (let shift = 4; byte & 0x80; shift += 7) {
      if (at >= header.length) return false;
      byte = header[at++]!;
      size += (byte & 0x7f) * 2 ** shift;
    }
    if (type === OFS_DELTA) {
      do {
        if (at >= header.length) return false;
      } while (header[at++]! & 0x80);
    } else if (type === REF_DELTA) {
      if (header.length < at + 20) return false;
    } else if (!WHOLE.has(type)) {
      phase = 'off';
      return true;
    }
    if (size > MAX_OBJECT_BYTES) throw tooLarge(size);
    declared = size;
    inflated = 0;
    isDelta = !WHOLE.has(type);
    const next = new pako.Inflate() as StreamingInflate;
    // Binary input gives binary output: the chunks are bytes.
    next.onData = (data) => {
      const chunk = data as Uint8Array;
      // A delta's header names the size of the object it builds: that is what isomorphic-git will hold.
      if (isDelta && inflated === 0) {
        const base = deltaSize(chunk, 0);
        const result = base === undefined ? undefined : deltaSize(chunk, base[1]);
        if (result !== undefined && result[0] > MAX_OBJECT_BYTES) throw tooLarge(result[0]);
      }
      inflated += chunk.length;
      if (inflated > declared) throw tooLarge(inflated);
    };
    next.onEnd = () => undefined;
    inflater = next;
    phase = 'data';
    return true;
  };

  const feed = (bytes: Uint8Array): void => {
    let at = 0;
    while (at < bytes.length && phase !== 'off' && phase !== 'trailer') {
      if (phase === 'pack-header') {
        header.push(bytes[at++]!);
        if (header.length < 12) continue;
        const view = Buffer.from(header);
        if (view.toString('latin1', 0, 4) !== 'PACK') phase = 'off';
        else {
          objects = view.readUInt32BE(8);
          phase = objects === 0 ? 'trailer' : 'object-header';
        }
        header = [];
      } else if (phase === 'object-header') {
        header.push(bytes[at++]!);
        if (objectHeader()) header = [];
      } else {
        const rest = bytes.subarray(at);
        // false: not a zlib stream (isomorphic-git refuses the pack itself).
        if (!inflater!.push(rest, false)) {
          phase = 'off';
          return;
        }
        if (!inflater!.ended) return;
        at += rest.length - inflater!.strm.avail_in;
        inflater = undefined;
        phase = --objects === 0 ? 'trailer' : 'object-header';
      }
    }
  };
  return feed;
}

/**
 * Watches an upload-pack response on its way to isomorphic-git (which holds the whole pack in memory and
 * inflates each object whole): throws once an object of its pack would inflate past MAX_OBJECT_BYTES or past
 * its own declared size. The pack travels in pkt-lines, on side band 1; other lines (NAK, ACK, shallow,
 * progress) are passed over.
 */
export function packGuard(): (chunk: Uint8Array) => void {
  const pack = packReader();
  let mode: 'pkt' | 'raw' = 'pkt';
  let length: number[] = [];
  let payload = 0;
  let band: number | undefined;
  return (chunk) => {
    let at = 0;
    while (at < chunk.length) {
      if (mode === 'raw') {
        pack(chunk.subarray(at));
        return;
      }
      if (payload === 0) {
        length.push(chunk[at++]!);
        if (length.length < 4) continue;
        const text = Buffer.from(length).toString('latin1');
        length = [];
        // Without side-band the pack follows the last pkt-line as it is.
        if (text === 'PACK') {
          mode = 'raw';
          pack(Buffer.from(text, 'latin1'));
          continue;
        }
        const size = /^[0-9a-f]{4}$/i.test(text) ? Number.parseInt(text, 16) : Number.NaN;
        if (Number.isNaN(size)) return;
        payload = size > 4 ? size - 4 : 0;
        band = undefined;
        continue;
      }
      const take = Math.min(payload, chunk.length - at);
      let piece = chunk.subarray(at, at + take);
      at += take;
      payload -= take;
      if (band === undefined) {
        band = piece[0];
        piece = piece.subarray(1);
      }
      if (band === 1 && piece.length > 0) pack(piece);
    }
  };
}
