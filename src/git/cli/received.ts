import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Oversized } from '../packEntry.ts';
import { nextTurn } from '../turns.ts';
import { type PackScan, packScanner } from './packScan.ts';

/** How often the packs a running fetch writes are looked at (besides its progress, refreshed every second). */
const CHECK_MS = 100;
/** Bytes of a pack scanned at one look: the rest waits for the next. */
const SCAN_BYTES = 4 * 1024 * 1024;
/** Bytes of a pack given to the scan at once (it takes fewer when it inflated INFLATED_PER_TURN first). */
const SLICE_BYTES = 256 * 1024;

export interface ReceivedLimits {
  /** The bytes of every pack received so far, at each look. */
  bytes(total: number): void;
  /** An entry the transfer's size rule refuses arrived (its header says so, or its inflated bytes). */
  oversized(why: Oversized): void;
}

export interface ReceivedWatch {
  /**
   * Once git took the transfer: scans the rest of every pack it wrote (git may finish before a look saw all of
   * one, or saw it at all), so the size rule has seen every byte. Returns why it refuses the transfer, if it does.
   */
  finish(): Promise<Oversized | undefined>;
  /** Stops watching, and closes the packs it opened. */
  stop(): Promise<void>;
}

/** A pack being scanned: read through a handle of its own, which still reads it once git renamed it. */
interface Followed {
  scan: PackScan;
  at: number;
  file: FileHandle;
  ino: number;
}

/**
 * Watches the packs git receives into `gitdir` (its `objects/pack/tmp_pack_*` files, written as they come): their
 * size, and each object header as it lands, read after git wrote it (packScan). `before` is the packs the store
 * held before the transfer.
 */
export function watchReceived(
  gitdir: string,
  before: ReadonlySet<string>,
  limits: ReceivedLimits,
): ReceivedWatch {
  const dir = path.join(gitdir, 'objects', 'pack');
  const followed = new Map<string, Promise<Followed | undefined>>();
  let looking: Promise<void> | undefined;
  let stopped = false;

  const follow = (name: string): Promise<Followed | undefined> => {
    let found = followed.get(name);
    if (found === undefined) {
      found = fsp.open(path.join(dir, name), 'r').then(
        async (file) => ({ scan: packScanner(), at: 0, file, ino: (await file.stat()).ino }),
        () => undefined,
      );
      followed.set(name, found);
    }
    return found;
  };

  /** Scans what `size` says was written past what was scanned, SCAN_BYTES at most. */
  const scanned = async (state: Followed, size: number): Promise<Oversized | undefined> => {
    const length = Math.min(size - state.at, SCAN_BYTES);
    if (length <= 0 || state.scan.done()) return undefined;
    const { buffer, bytesRead } = await state.file.read(Buffer.alloc(length), 0, length, state.at);
    for (let from = 0; from < bytesRead && !state.scan.done(); await nextTurn()) {
      const { used, oversized } = state.scan.push(
        buffer.subarray(from, Math.min(bytesRead, from + SLICE_BYTES)),
      );
      if (oversized !== undefined) return oversized;
      from += used;
      state.at += used;
    }
    return undefined;
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
    for (const [i, name] of names.entries()) {
      if (stopped) return;
      const state = await follow(name);
      const oversized =
        state === undefined ? undefined : await scanned(state, sizes[i]!).catch(() => undefined);
      if (oversized !== undefined) return limits.oversized(oversized);
    }
  };

  const timer = setInterval(() => {
    // One look at a time: a scan may take longer than the interval.
    looking ??= look().finally(() => (looking = undefined));
  }, CHECK_MS);

  const stop = async () => {
    stopped = true;
    clearInterval(timer);
    await looking;
    const states = await Promise.all(followed.values());
    await Promise.all(states.map((state) => state?.file.close().catch(() => undefined)));
  };

  return {
    stop,
    async finish() {
      clearInterval(timer);
      await looking;
      const packs = (await fsp.readdir(dir).catch(() => [] as string[])).filter(
        (name) => /^pack-[0-9a-f]+\.pack$/.test(name) && !before.has(name.slice(0, -5)),
      );
      const states = (await Promise.all(followed.values())).filter((state) => state !== undefined);
      for (const name of packs) {
        const ino = await fsp.stat(path.join(dir, name)).then(
          (s) => s.ino,
          () => undefined,
        );
        const state = states.find((known) => known.ino === ino) ?? (await follow(name));
        if (state === undefined) continue;
        const { size } = await state.file.stat();
        for (let at = -1; state.at < size && state.at > at && !state.scan.done(); ) {
          at = state.at;
          const oversized = await scanned(state, size);
          if (oversized !== undefined) return oversized;
        }
      }
      return undefined;
    },
  };
}
