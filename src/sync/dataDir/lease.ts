import { randomBytes } from 'node:crypto';
import { linkSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileRefusedError, readBoundedSync } from '../../shared/boundedRead.ts';
import type { ReasonOf } from '../../shared/reasons.ts';
import { messageOf } from '../../shared/text.ts';
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

/**
 * A holder that has not touched its file for this long is taken for gone, on any host: a running pid alone does
 * not prove a holder is skillpin (anyone who can write next to us can name any process), its renewals do.
 */
export const HOLDER_STALE_MS = 60_000;
/** How often a holder touches (renews) its files, so that the others see it alive. */
export const HOLDER_REFRESH_MS = 10_000;
/** A lease names a holder and what it runs: a few hundred bytes (the config's path at most 4 KiB). */
export const LEASE_FILE_MAX_BYTES = 64 * 1024;

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

/** Why a holder is taken for gone: its process is not running, or it stopped renewing its file. */
export type GoneReason = 'lease-holder-gone' | 'lease-not-renewed';

/** Whether `file` was touched within HOLDER_STALE_MS; a time in the future is no renewal (a `touch -d` forever). */
function renewed(file: string): boolean {
  try {
    const age = Date.now() - statSync(file).mtimeMs;
    return age < HOLDER_STALE_MS && age > -HOLDER_STALE_MS;
  } catch {
    return false;
  }
}

/**
 * Why `holder` is taken for gone, or `undefined` while it may still run. In this process: it has not left. Any
 * other: it renewed `file` within HOLDER_STALE_MS and, on this host, its pid runs and started when it says (a pid
 * reused by another process is not it).
 */
export function holderGone(holder: Holder, file: string): GoneReason | undefined {
  if (holder.host === os.hostname()) {
    if (holder.pid === process.pid) return liveHere.has(holder.nonce) ? undefined : 'lease-holder-gone';
    try {
      process.kill(holder.pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'lease-holder-gone';
    }
    const start = processStart(holder.pid);
    if (holder.start !== undefined && start !== undefined && start !== holder.start)
      return 'lease-holder-gone';
  }
  return renewed(file) ? undefined : 'lease-not-renewed';
}

export const holderAlive = (holder: Holder, file: string): boolean => holderGone(holder, file) === undefined;

/** A file of the dataDir that is not what skillpin writes: too large, not a regular file, or not its JSON. */
export interface DamagedFile {
  file: string;
  /** What is wrong with it, without its path. */
  reason: ReasonOf<'datadir'>;
  detail: string;
}

/** What a holder file holds: a holder, nothing (no such file), or damage. Read with a bound of `max` bytes. */
export function readHolderFile<T extends Holder = Holder>(
  file: string,
  max = LEASE_FILE_MAX_BYTES,
): { holder: T } | { damaged: DamagedFile } | undefined {
  let text: string;
  try {
    text = readBoundedSync(file, max);
  } catch (error) {
    if (error instanceof FileRefusedError)
      return { damaged: { file, reason: error.reason, detail: error.detail } };
    return undefined;
  }
  const damaged = (detail: string) => ({
    damaged: { file, reason: 'datadir-file-damaged' as const, detail },
  });
  let parsed: T;
  try {
    parsed = JSON.parse(text) as T;
  } catch (error) {
    return damaged(`not JSON: ${messageOf(error)}`);
  }
  return Number.isInteger(parsed?.pid) && typeof parsed.host === 'string' && typeof parsed.nonce === 'string'
    ? { holder: parsed }
    : damaged('names no holder (pid, host, nonce)');
}

/** What a holder file says, when it parses as one. */
export function readHolder<T extends Holder = Holder>(
  file: string,
  max = LEASE_FILE_MAX_BYTES,
): T | undefined {
  const read = readHolderFile<T>(file, max);
  return read !== undefined && 'holder' in read ? read.holder : undefined;
}

/**
 * What taking a lease found: it is ours (`from`: the gone holder it was taken over from, and why; `damaged`: the
 * file it replaced was not a lease), or who holds it.
 */
export type Taken =
  | { ours: true; from?: Holder; why?: GoneReason; damaged?: DamagedFile }
  | { ours: false; holder: Holder };

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
  const read = readHolderFile(file);
  const stale = read !== undefined && 'holder' in read ? read.holder : undefined;
  if (stale !== undefined && sameHolder(holder, stale)) return { ours: true };
  const why = stale === undefined ? undefined : holderGone(stale, file);
  if (stale !== undefined && why === undefined) return { ours: false, holder: stale };
  // Its holder is gone (or the file is damaged). Takeovers go one at a time through a guard file, so two
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
    if (stale !== undefined) return { ours: true, from: stale, why };
    return read !== undefined && 'damaged' in read ? { ours: true, damaged: read.damaged } : { ours: true };
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
