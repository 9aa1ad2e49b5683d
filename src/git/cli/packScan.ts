import pako from 'pako';
import { MAX_OBJECT_BYTES } from '../limits.ts';
import { entryHeader } from '../packEntry.ts';
import { OBJECTS_PER_TURN } from '../turns.ts';

/** pako 1's inflater with the two fields its typings leave out (as the isomorphic pack writer uses them). */
type StreamingInflate = pako.Inflate & { ended: boolean; strm: { avail_in: number } };

export interface PackScan {
  /**
   * Takes the pack's next bytes, as far as the end of OBJECTS_PER_TURN objects: returns how many it took, and the
   * size of an object over MAX_OBJECT_BYTES once its header (or its inflated bytes) says so.
   */
  push(bytes: Uint8Array): { used: number; oversized?: number };
}

/**
 * Follows a pack as git receives it (gitformat-pack(5)), object header by object header, never holding it: an
 * object over MAX_OBJECT_BYTES is known as soon as its header arrives, where git spends minutes inflating it to
 * hash it (a compression bomb). Each object's zlib stream is inflated only to find where it ends, its bytes
 * counted and dropped. A pack it cannot follow is git's to refuse: the scan then stops saying anything.
 */
export function packScanner(): PackScan {
  let phase: 'pack-header' | 'object-header' | 'data' | 'done' = 'pack-header';
  let header: number[] = [];
  let left = 0;
  let size = 0;
  let inflated = 0;
  let inflater: StreamingInflate | undefined;

  const startObject = () => {
    inflated = 0;
    inflater = new pako.Inflate() as StreamingInflate;
    // Counted and dropped (pako keeps every chunk by default).
    inflater.onData = (chunk) => {
      inflated += (chunk as Uint8Array).length;
    };
    inflater.onEnd = () => undefined;
  };

  return {
    push(bytes) {
      let at = 0;
      let objects = 0;
      while (at < bytes.length && objects < OBJECTS_PER_TURN && phase !== 'done') {
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
          if (found.size > MAX_OBJECT_BYTES) return { used: at, oversized: found.size };
          size = found.size;
          header = [];
          startObject();
          phase = 'data';
        } else {
          const rest = bytes.subarray(at);
          if (!inflater!.push(rest, false)) {
            phase = 'done';
            break;
          }
          if (inflated > size) return { used: at, oversized: inflated };
          at += inflater!.ended ? rest.length - inflater!.strm.avail_in : rest.length;
          if (!inflater!.ended) continue;
          objects++;
          phase = --left === 0 ? 'done' : 'object-header';
        }
      }
      return { used: phase === 'done' ? bytes.length : at };
    },
  };
}
