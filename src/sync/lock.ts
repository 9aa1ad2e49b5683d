import { randomBytes } from 'node:crypto';
import { linkSync, promises as fsp, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock, type Clock } from './clock.ts';

/** Who holds a dataDir: written into `dataDir/lock` by the process that holds it. */
export interface LockHolder {
  pid: number;
  host: string;
  command: string;
  since: string;
}

/** Another live process holds the dataDir. */
export class DataDirBusyError extends Error {
  readonly holder: LockHolder;
  constructor(dataDir: string, holder: LockHolder) {
    const other = holder.host === os.hostname() ? '' : ` on host ${holder.host}`;
    super(
      `dataDir ${dataDir} is in use by skillpin ${holder.command} (pid ${holder.pid}${other}, since ${holder.since}); ` +
        `stop it, or remove ${path.join(dataDir, 'lock')} if that process is gone`,
    );
    this.name = 'DataDirBusyError';
    this.holder = holder;
  }
}

export interface DataDirLock {
  /** Removes the lock if it is still ours. Also done when the process exits. */
  release(): void;
}

/** The holder touches its lock this often; one from another host untouched for LOCK_STALE_MS is taken over. */
export const LOCK_REFRESH_MS = 10_000;
export const LOCK_STALE_MS = 60_000;

/** dataDirs this process holds: a second lock of one of them fails like another process's would. */
const heldHere = new Map<string, LockHolder>();

function holderOf(file: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as LockHolder;
    return Number.isInteger(parsed.pid) && typeof parsed.host === 'string' ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** Who holds `dataDir` now, if a process that may still be running does (what `skillpin reload` signals). */
export function dataDirHolder(dataDir: string): LockHolder | undefined {
  const file = path.join(path.resolve(dataDir), 'lock');
  const holder = holderOf(file);
  return holder !== undefined && alive(holder, file) ? holder : undefined;
}

/** Whether the holder may still be running: on this host a signal 0 tells; elsewhere, whether it touched the lock lately. */
function alive(holder: LockHolder, file: string): boolean {
  if (holder.host !== os.hostname()) {
    try {
      return Date.now() - statSync(file).mtimeMs < LOCK_STALE_MS;
    } catch {
      return false;
    }
  }
  // Our own pid in a lock we do not hold: a previous process of ours that had the same pid (a container restart).
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Links `temp` (complete already) to `file` unless `file` exists: a reader never sees a half-written lock. */
function linkExclusive(temp: string, file: string): boolean {
  try {
    linkSync(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/**
 * Takes `dataDir/lock` for this process, so that two processes never write one dataDir. A lock left by a
 * process that is gone (same host: pid not running; another host: not touched for LOCK_STALE_MS) is taken
 * over; one of a live process throws
 * DataDirBusyError naming it. With `waitMs`, a busy lock is retried until then (`onWait` is told once).
 */
export async function lockDataDir(
  dataDir: string,
  command: string,
  options: { waitMs?: number; retryMs?: number; onWait?: (holder: LockHolder) => void; clock?: Clock } = {},
): Promise<DataDirLock> {
  const dir = path.resolve(dataDir);
  const file = path.join(dir, 'lock');
  await fsp.mkdir(dir, { recursive: true });
  const holder: LockHolder = {
    pid: process.pid,
    host: os.hostname(),
    command,
    since: new Date().toISOString(),
  };
  const text = `${JSON.stringify(holder)}\n`;
  const temp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await fsp.writeFile(temp, text);
  const deadline = Date.now() + (options.waitMs ?? 0);
  try {
    for (let tries = 0; ; tries++) {
      const other = heldHere.get(dir) ?? tryLock(file, temp);
      if (other === undefined) break;
      if (Date.now() >= deadline) throw new DataDirBusyError(dataDir, other);
      if (tries === 0) options.onWait?.(other);
      await new Promise((resolve) => setTimeout(resolve, options.retryMs ?? 100));
    }
  } finally {
    await fsp.rm(temp, { force: true });
  }
  heldHere.set(dir, holder);
  const clock = options.clock ?? systemClock;
  let stopTouching = () => {};
  const touchLater = () => {
    stopTouching = clock.after(LOCK_REFRESH_MS, () => {
      const now = new Date(clock.now());
      try {
        utimesSync(file, now, now);
      } catch {
        // Gone or replaced: release() decides what is ours.
      }
      touchLater();
    });
  };
  touchLater();
  const release = () => {
    stopTouching();
    process.off('exit', release);
    if (!heldHere.delete(dir)) return;
    // Only our own lock: never one a later process took over after us.
    if (same(holder, holderOf(file))) rmSync(file, { force: true });
  };
  process.on('exit', release);
  return { release };
}

/** One attempt: `undefined` when the lock is now ours, else who holds it. */
function tryLock(file: string, temp: string): LockHolder | undefined {
  if (linkExclusive(temp, file)) return undefined;
  const stale = holderOf(file);
  if (stale !== undefined && alive(stale, file)) return stale;
  // Its process is gone (or the file is unreadable). Takeovers go one at a time through a guard file, so two
  // processes that both saw the lock stale cannot both replace it.
  const guard = `${file}.takeover`;
  if (!linkExclusive(temp, guard)) {
    const taking = holderOf(guard);
    if (taking !== undefined && alive(taking, guard)) return taking;
    rmSync(guard, { force: true });
    return tryLock(file, temp);
  }
  try {
    const now = holderOf(file);
    if (now !== undefined && !same(now, stale)) return now;
    // rename replaces in one step: a reader sees the stale lock or ours.
    renameSync(temp, file);
    return undefined;
  } finally {
    rmSync(guard, { force: true });
  }
}

const same = (a: LockHolder, b: LockHolder | undefined) =>
  b !== undefined && a.pid === b.pid && a.host === b.host && a.since === b.since;
