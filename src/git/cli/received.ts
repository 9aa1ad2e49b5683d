import { promises as fsp } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { PackGuard, Refusal, TransferGuard } from '../packGuard.ts';
import { nextTurn } from '../turns.ts';

/** How often the packs a running fetch writes are looked at (besides its progress, refreshed every second). */
const CHECK_MS = 100;
/** Bytes of a pack followed at one look: the rest waits for the next. */
const SCAN_BYTES = 4 * 1024 * 1024;
/** Bytes of a pack given to the guard at once (it takes fewer when it inflated INFLATED_PER_TURN first). */
const SLICE_BYTES = 256 * 1024;

export interface ReceivedWatch {
  /**
   * Once git ended: follows the rest of every pack it wrote (git may finish, or fail, before a look saw all of one,
   * or saw it at all), so the guard has seen every byte git took. Returns the transfer's refusal, if it has one.
   */
  finish(): Promise<Refusal | undefined>;
  /** Stops watching, and closes the packs it opened. */
  stop(): Promise<void>;
}

/** A pack being followed: read through a handle of its own, which still reads it once git renamed or removed it. */
interface Followed {
  pack: PackGuard;
  at: number;
  file: FileHandle;
  ino: number;
}

/** One fetch's watch: the pack directory, the packs followed, the look under way. */
interface Watch {
  dir: string;
  before: ReadonlySet<string>;
  guard: TransferGuard;
  refused: (refusal: Refusal) => void;
  followed: Map<string, Promise<Followed | undefined>>;
  looking: Promise<void> | undefined;
  stopped: boolean;
  timer: NodeJS.Timeout | undefined;
}

/**
 * Feeds `guard` what git receives into `gitdir` (its `objects/pack/tmp_pack_*` files, written as they come): their
 * size, and each pack's bytes, read after git wrote them. `before` is the packs the store held before the transfer;
 * `refused` hears the guard's refusal as soon as a look meets it. A pack the guard cannot follow is git's to refuse.
 */
export function watchReceived(
  gitdir: string,
  before: ReadonlySet<string>,
  guard: TransferGuard,
  refused: (refusal: Refusal) => void,
): ReceivedWatch {
  const watch: Watch = {
    dir: path.join(gitdir, 'objects', 'pack'),
    before,
    guard,
    refused,
    followed: new Map(),
    looking: undefined,
    stopped: false,
    timer: undefined,
  };
  watch.timer = setInterval(() => {
    // One look at a time: following a pack may take longer than the interval.
    watch.looking ??= look(watch).finally(() => (watch.looking = undefined));
  }, CHECK_MS);
  return { stop: () => stop(watch), finish: () => finish(watch) };
}

function follow(watch: Watch, name: string): Promise<Followed | undefined> {
  let found = watch.followed.get(name);
  if (found === undefined) {
    found = fsp.open(path.join(watch.dir, name), 'r').then(
      async (file) => ({ pack: watch.guard.pack(), at: 0, file, ino: (await file.stat()).ino }),
      () => undefined,
    );
    watch.followed.set(name, found);
  }
  return found;
}

/** Follows what `size` says was written past what was followed, SCAN_BYTES at most. */
async function scanned(state: Followed, size: number): Promise<Refusal | undefined> {
  const length = Math.min(size - state.at, SCAN_BYTES);
  if (length <= 0 || state.pack.done()) return undefined;
  const { buffer, bytesRead } = await state.file.read(Buffer.alloc(length), 0, length, state.at);
  for (let from = 0; from < bytesRead && !state.pack.done(); await nextTurn()) {
    const { used, refused } = state.pack.push(buffer.subarray(from, Math.min(bytesRead, from + SLICE_BYTES)));
    if (refused !== undefined) return refused.reason === 'source-pack-invalid' ? undefined : refused;
    from += used;
    state.at += used;
  }
  return undefined;
}

/** Names in the pack folder a transfer wrote: git's packs being received, and the packs it completed. */
async function written(watch: Watch, completed: boolean): Promise<string[]> {
  return (await fsp.readdir(watch.dir).catch(() => [] as string[])).filter(
    (name) =>
      name.startsWith('tmp_pack_') ||
      (completed && /^pack-[0-9a-f]+\.pack$/.test(name) && !watch.before.has(name.slice(0, -5))),
  );
}

const sizeOf = (file: string) =>
  fsp.stat(file).then(
    (s) => s.size,
    () => 0,
  );

/** One look at the packs being written: their bytes together, and the next slice of each followed. */
async function look(watch: Watch): Promise<void> {
  const names = await written(watch, false);
  const sizes = await Promise.all(names.map((name) => sizeOf(path.join(watch.dir, name))));
  const over = watch.guard.received(sizes.reduce((sum, size) => sum + size, 0));
  if (over !== undefined) return watch.refused(over);
  for (const [i, name] of names.entries()) {
    if (watch.stopped) return;
    const state = await follow(watch, name);
    const refusal = state === undefined ? undefined : await scanned(state, sizes[i]!).catch(() => undefined);
    if (refusal !== undefined) return watch.refused(refusal);
  }
}

async function stop(watch: Watch): Promise<void> {
  watch.stopped = true;
  clearInterval(watch.timer);
  await watch.looking;
  const states = await Promise.all(watch.followed.values());
  await Promise.all(states.map((state) => state?.file.close().catch(() => undefined)));
}

async function finish(watch: Watch): Promise<Refusal | undefined> {
  const { dir, guard } = watch;
  clearInterval(watch.timer);
  await watch.looking;
  const names = await written(watch, true);
  const sizes = await Promise.all(names.map((name) => sizeOf(path.join(dir, name))));
  if (guard.received(sizes.reduce((sum, size) => sum + size, 0)) !== undefined) return guard.refused();
  const states = (await Promise.all(watch.followed.values())).filter((state) => state !== undefined);
  for (const name of names) {
    const ino = await fsp.stat(path.join(dir, name)).then(
      (s) => s.ino,
      () => undefined,
    );
    const state = states.find((known) => known.ino === ino) ?? (await follow(watch, name));
    if (state === undefined) continue;
    const { size } = await state.file.stat();
    for (let at = -1; state.at < size && state.at > at && !state.pack.done(); ) {
      at = state.at;
      if ((await scanned(state, size)) !== undefined) return guard.refused();
    }
  }
  return guard.refused();
}
