import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeDirectorySync } from '../../shared/fs.ts';

/** A process (one worker of it) as a lease or a process file names it. */
export interface Holder {
  pid: number;
  host: string;
  /** The process's start time as the OS keeps it (Linux: /proc/<pid>/stat field 22); tells a reused pid apart. */
  start?: string;
  /** When this holder joined, ISO 8601. */
  since: string;
  /** Tells two workers of one process apart (tests, a restart in one process). */
  nonce: string;
}

/** A holder on another host that has not touched its file for this long is taken for gone. */
export const HOLDER_STALE_MS = 60_000;
/** How often a holder touches its files, so that another host sees it alive. */
export const HOLDER_REFRESH_MS = 10_000;

/** Holders of this process that have not left: a same-pid holder missing here is a worker that stopped. */
const liveHere = new Set<string>();

/** When process `pid` started, in the OS's units; `undefined` where the OS does not say (not Linux, gone). */
export function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces or parentheses): state is field 3, starttime 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** A new holder for this process, live until `leftHere`. */
export function newHolder(): Holder {
  const nonce = randomBytes(6).toString('hex');
  liveHere.add(nonce);
  const start = processStart(process.pid);
  return { pid: process.pid, host: os.hostname(), start, since: new Date().toISOString(), nonce };
}

export function leftHere(holder: Holder): void {
  liveHere.delete(holder.nonce);
}

export const sameHolder = (a: Holder, b: Holder | undefined): boolean =>
  b !== undefined && a.pid === b.pid && a.host === b.host && a.nonce === b.nonce;

/**
 * Whether `holder` may still be running. On this host: its pid runs and started when it says (a pid reused by
 * another process is not it); on another host: it touched `file` within HOLDER_STALE_MS.
 */
export function holderAlive(holder: Holder, file: string): boolean {
  if (holder.host !== os.hostname()) {
    try {
      return Date.now() - statSync(file).mtimeMs < HOLDER_STALE_MS;
    } catch {
      return false;
    }
  }
  if (holder.pid === process.pid) return liveHere.has(holder.nonce);
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const start = processStart(holder.pid);
  return holder.start === undefined || start === undefined || start === holder.start;
}

/** What a holder file says, when it parses as one. */
export function readHolder<T extends Holder = Holder>(file: string): T | undefined {
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as T;
    return Number.isInteger(parsed.pid) && typeof parsed.host === 'string' && typeof parsed.nonce === 'string'
      ? parsed
      : undefined;
  } catch {
    return undefined;
  }
}

/** What taking a lease found: it is ours (`from`: the gone holder it was taken over from), or who holds it. */
export type Taken = { ours: true; from?: Holder } | { ours: false; holder: Holder };

/** Links `temp` (complete already) to `file` unless `file` exists: a reader never sees a half-written lease. */
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
 * Takes the lease `file` for `holder` with an atomic create (a link of a complete temp file). A lease of a holder
 * that is gone (pid dead on this host, or reused: its start time differs) is taken over; a live holder's is
 * left. Taking a lease already ours is ours again.
 */
export function takeLease(file: string, holder: Holder): Taken {
  makeDirectorySync(path.dirname(file));
  const temp = `${file}.${holder.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temp, `${JSON.stringify(holder)}\n`);
  try {
    return attempt(file, temp, holder);
  } finally {
    rmSync(temp, { force: true });
  }
}

function attempt(file: string, temp: string, holder: Holder): Taken {
  if (linkExclusive(temp, file)) return { ours: true };
  const stale = readHolder(file);
  if (stale !== undefined && sameHolder(holder, stale)) return { ours: true };
  if (stale !== undefined && holderAlive(stale, file)) return { ours: false, holder: stale };
  // Its holder is gone (or the file is unreadable). Takeovers go one at a time through a guard file, so two
  // processes that both saw the lease stale cannot both replace it.
  const guard = `${file}.takeover`;
  if (!linkExclusive(temp, guard)) {
    const taking = readHolder(guard);
    if (taking !== undefined && holderAlive(taking, guard)) return { ours: false, holder: taking };
    rmSync(guard, { force: true });
    return attempt(file, temp, holder);
  }
  try {
    const now = readHolder(file);
    if (now !== undefined && !sameHolder(now, stale)) return { ours: false, holder: now };
    // rename replaces in one step: a reader sees the stale lease or ours.
    renameSync(temp, file);
    return stale === undefined ? { ours: true } : { ours: true, from: stale };
  } finally {
    rmSync(guard, { force: true });
  }
}

/** Whether `file` still names `holder` (a lease taken over from us no longer does). */
export const holdsLease = (file: string, holder: Holder): boolean => sameHolder(holder, readHolder(file));

/** Gives the lease up if it is still ours: never one a later holder took over. */
export function releaseLease(file: string, holder: Holder): void {
  if (holdsLease(file, holder)) rmSync(file, { force: true });
}
