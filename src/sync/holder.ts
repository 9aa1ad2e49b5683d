import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';

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
