import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { nextTurn } from '../turns.ts';
import { type PackScan, packScanner } from './packScan.ts';

/** How often the packs a running fetch writes are looked at (besides its progress, refreshed every second). */
const CHECK_MS = 100;
/** Bytes of a pack scanned at one look: the rest waits for the next. */
const SCAN_BYTES = 4 * 1024 * 1024;
/** Bytes inflated between two turns of the event loop (a large object's stream goes in slices). */
const SLICE_BYTES = 256 * 1024;

export interface ReceivedLimits {
  /** The bytes of every pack received so far, at each look. */
  bytes(total: number): void;
  /** An object over MAX_OBJECT_BYTES arrived (its header says so, or its inflated bytes). */
  oversized(size: number): void;
}

/**
 * Watches the packs git receives into `gitdir` (its `objects/pack/tmp_pack_*` files, written as they come): their
 * size, and each object header as it lands, read after git wrote it (packScan). Returns the function that stops it.
 */
export function watchReceived(gitdir: string, limits: ReceivedLimits): () => void {
  const dir = path.join(gitdir, 'objects', 'pack');
  const scans = new Map<string, { scan: PackScan; at: number }>();
  let looking = false;
  let stopped = false;

  const scanned = async (name: string, size: number) => {
    const state = scans.get(name) ?? { scan: packScanner(), at: 0 };
    scans.set(name, state);
    if (state.at >= size) return;
    const length = Math.min(size - state.at, SCAN_BYTES);
    const file = await fsp.open(path.join(dir, name), 'r');
    try {
      const { buffer, bytesRead } = await file.read(Buffer.alloc(length), 0, length, state.at);
      for (let from = 0; from < bytesRead && !stopped; await nextTurn()) {
        const { used, oversized } = state.scan.push(
          buffer.subarray(from, Math.min(bytesRead, from + SLICE_BYTES)),
        );
        if (oversized !== undefined) return limits.oversized(oversized);
        from += used;
        state.at += used;
      }
    } finally {
      await file.close();
    }
  };

  const look = async () => {
    const names = (await fsp.readdir(dir).catch(() => [] as string[])).filter((name) =>
      name.startsWith('tmp_pack_'),
    );
    const sizes = await Promise.all(
      names.map((name) =>
        fsp.stat(path.join(dir, name)).then(
          (s) => s.size,
          () => 0,
        ),
      ),
    );
    limits.bytes(sizes.reduce((sum, size) => sum + size, 0));
    for (const [i, name] of names.entries())
      if (!stopped) await scanned(name, sizes[i]!).catch(() => undefined);
  };

  const timer = setInterval(() => {
    // One look at a time: a scan may take longer than the interval.
    if (looking) return;
    looking = true;
    void look().finally(() => (looking = false));
  }, CHECK_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
