import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import type { GitObject } from '../objects.ts';
import type { PackGuard, PackHooks } from '../packGuard.ts';
import type { FetchProgress } from '../repository.ts';
import type { IndexedObject } from './packIndex.ts';

const TYPE_NAMES: Record<number, GitObject['type']> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };

/** One object of the pack as it arrived: where, its CRC, and its id once known (a delta's after resolving). */
export interface Arrived extends Partial<IndexedObject> {
  offset: number;
  crc: number;
}

/** What the pack writer records of a pack as the guard follows it: what its index needs, and the progress shown. */
export interface Arrivals {
  hooks: PackHooks;
  arrived: Arrived[];
  /** The guard following the pack, once the writer has it: the progress names its count and position. */
  guard: PackGuard | undefined;
  /** Reports `loaded` of the pack's objects, once per percent (and at the last one). */
  progress(phase: string, loaded: number): void;
}

/** Each object's offset and CRC-32 (header and compressed bytes), and the id of each whole object, hashed as it inflates. */
export function arrivals(onProgress: ((progress: FetchProgress) => void) | undefined): Arrivals {
  const arrived: Arrived[] = [];
  let current: { entry: Arrived; hash: Hash | undefined } | undefined;
  let last = { phase: '', percent: -1 };
  const record: Arrivals = {
    arrived,
    guard: undefined,
    progress(phase, loaded) {
      const total = record.guard?.total ?? 0;
      const percent = Math.floor((loaded * 100) / Math.max(total, 1));
      if (phase === last.phase && percent === last.percent && loaded !== total) return;
      last = { phase, percent };
      onProgress?.({ phase, loaded, total, bytes: record.guard?.position ?? 0 });
    },
    hooks: {
      object(offset, header, type, size) {
        const name = TYPE_NAMES[type];
        // A delta's id is the hash of what it builds: known once it is resolved.
        const hash = name === undefined ? undefined : createHash('sha1').update(`${name} ${size}\0`);
        current = { entry: { offset, crc: crc32(header) }, hash };
      },
      deflated: (bytes) => {
        current!.entry.crc = crc32(bytes, current!.entry.crc);
      },
      inflated: (bytes) => current!.hash?.update(bytes),
      ended() {
        const { entry, hash } = current!;
        if (hash !== undefined) entry.oid = hash.digest('hex');
        arrived.push(entry);
        current = undefined;
        record.progress('Receiving objects', arrived.length);
      },
    },
  };
  return record;
}
