import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { Oversized } from '../packEntry.ts';
import { nextTurn } from '../turns.ts';
import type { PackScan } from './packScan.ts';

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

/** One fetch's watch: the pack directory, the packs followed, the look under way. */
interface Watch {
  dir: string;
  before: ReadonlySet<string>;
  limits: ReceivedLimits;
  followed: Map<string, Promise<Followed | undefined>>;
  looking: Promise<void> | undefined;
  stopped: boolean;
  timer: NodeJS.Timeout | undefined;
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
  const watch: Watch = {
    dir: path.join(gitdir, 'objects', 'pack'),
    before,
    limits,
    followed: new Map(),
    looking: undefined,
    stopped: false,
    timer: undefined,
  };
  watch.timer = setInterval(() => {
    // One look at a time: a scan may take longer than the interval.
    watch.looking ??= look(watch).finally(() => (watch.looking = undefined));
  }, CHECK_MS);
  return { stop: () => stop(watch), finish: () => finish(watch) };
}

function follow(watch: Watch, name: string): Promise<Followed | undefined> {
  let found = watch.followed.get(name);
  if (found === undefined) {
    found = fsp.open(path.join(watch.dir, name), 'r').then(
      // The scanner (and pako with it) loads with the first pack a fetch receives: a server that never fetches
      // never loads it.
      async (file) => {
        const { packScanner } = await import('./packScan.ts');
        return { scan: packScanner(), at: 0, file, ino: (await file.stat()).ino };
      },
      () => undefined,
    );
    watch.followed.set(name, found);
  }
  return found;
}

/** Scans what `size` says was written past what was scanned, SCAN_BYTES at most. */
async function scanned(state: Followed, size: number): Promise<Oversized | undefined> {
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
}

/** One look at the packs being written: their bytes together, and the next slice of each scanned. */
async function look(watch: Watch): Promise<void> {
  const { dir, limits } = watch;
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
    if (watch.stopped) return;
    const state = await follow(watch, name);
    const oversized =
      state === undefined ? undefined : await scanned(state, sizes[i]!).catch(() => undefined);
    if (oversized !== undefined) {
      limits.oversized(oversized);
      return;
    }
  }
}

async function stop(watch: Watch): Promise<void> {
  watch.stopped = true;
  clearInterval(watch.timer);
  await watch.looking;
  const states = await Promise.all(watch.followed.values());
  await Promise.all(states.map((state) => state?.file.close().catch(() => undefined)));
}

async function finish(watch: Watch): Promise<Oversized | undefined> {
  const { dir } = watch;
  clearInterval(watch.timer);
  await watch.looking;
  const packs = (await fsp.readdir(dir).catch(() => [] as string[])).filter(
    (name) => /^pack-[0-9a-f]+\.pack$/.test(name) && !watch.before.has(name.slice(0, -5)),
  );
  const states = (await Promise.all(watch.followed.values())).filter((state) => state !== undefined);
  for (const name of packs) {
    const ino = await fsp.stat(path.join(dir, name)).then(
      (s) => s.ino,
      () => undefined,
    );
    const state = states.find((known) => known.ino === ino) ?? (await follow(watch, name));
    if (state === undefined) continue;
    const { size } = await state.file.stat();
    for (let at = -1; state.at < size && state.at > at && !state.scan.done(); ) {
      at = state.at;
      const oversized = await scanned(state, size);
      if (oversized !== undefined) return oversized;
    }
  }
  return undefined;
}
