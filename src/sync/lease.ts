import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { type Holder, holderAlive, readHolder, sameHolder } from './holder.ts';

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
  mkdirSync(path.dirname(file), { recursive: true });
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
