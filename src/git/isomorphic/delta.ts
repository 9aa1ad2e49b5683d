import { objectTooLarge } from '../failure.ts';
import { MAX_OBJECT_BYTES } from '../limits.ts';

/** Reads one of the delta format's little-endian base-128 sizes. */
function size(delta: Buffer, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  for (;;) {
    if (at >= delta.length || shift > 49) throw new Error('the delta is malformed');
    const byte = delta[at++]!;
    value += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if ((byte & 0x80) === 0) return [value, at];
  }
}

/** The size of the object a delta builds, from its header: `undefined` when `delta` ends before it does. */
export function deltaResultSize(delta: Uint8Array): number | undefined {
  try {
    const [, at] = size(Buffer.from(delta.buffer, delta.byteOffset, delta.byteLength), 0);
    return size(Buffer.from(delta.buffer, delta.byteOffset, delta.byteLength), at)[0];
  } catch {
    return undefined;
  }
}

/** Applies a git delta (gitformat-pack(5), "Deltified representation") to `base`; every bound is checked. */
export function applyDelta(base: Buffer, delta: Buffer): Buffer {
  let [baseSize, at] = size(delta, 0);
  if (baseSize !== base.length) throw new Error('the delta does not fit its base');
  let resultSize: number;
  [resultSize, at] = size(delta, at);
  if (resultSize > MAX_OBJECT_BYTES) throw objectTooLarge('a delta-built object', resultSize);
  const result = Buffer.allocUnsafe(resultSize);
  let out = 0;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      // Copy from the base: up to four offset bytes and three size bytes, each present when its bit is set.
      let offset = 0;
      let length = 0;
      for (let bit = 0; bit < 4; bit++) if (op & (1 << bit)) offset += delta[at++]! * 2 ** (8 * bit);
      for (let bit = 0; bit < 3; bit++) if (op & (0x10 << bit)) length += delta[at++]! * 2 ** (8 * bit);
      if (length === 0) length = 0x10000;
      if (at > delta.length || offset + length > base.length || out + length > resultSize)
        throw new Error('the delta copies out of bounds');
      base.copy(result, out, offset, offset + length);
      out += length;
    } else if (op !== 0) {
      if (at + op > delta.length || out + op > resultSize) throw new Error('the delta inserts out of bounds');
      delta.copy(result, out, at, at + op);
      at += op;
      out += op;
    } else throw new Error('the delta holds a reserved instruction');
  }
  if (out !== resultSize) throw new Error('the delta is short of its declared size');
  return result;
}
