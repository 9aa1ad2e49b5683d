import path from 'node:path';
import { z } from 'zod';
import { FileRefusedError, readBounded } from '../../shared/boundedRead.ts';
import { latestWins, writeFileAtomic, type WriteFs } from '../../shared/fs.ts';
import { COMMIT_PATTERN } from '../../shared/patterns.ts';
import { isProblemReason, isSourceReason, type ReasonOf, type SourceReason } from '../../shared/reasons.ts';
import type { SkillProblem } from '../../shared/reasons.ts';
import { messageOf } from '../../shared/text.ts';
import { type Holder, releaseLease, takeLease } from './lease.ts';

/** One ref a `refs:` source serves: its full name, the source id it is served under, and what it names. */
export interface GroupRef {
  name: string;
  id: string;
  commit: string;
  /** The annotated tag the ref names, when it names one. */
  tag?: string;
}

/**
 * What a `refs:` source follows, as state.json remembers it (so a restart serves it without the network): the
 * refs that matched at the last listing, and the refs deleted since that stay served (not listed), newest first,
 * up to `keep`.
 */
export interface GroupListing {
  refs: GroupRef[];
  gone: GroupRef[];
  /** Refs that matched and are not served (an id taken twice or invalid, past maxRefs), each with why. */
  problems: SkillProblem[];
}

/** What skillpin remembers about a source between runs (dataDir/state.json). Never holds a secret. */
export interface SourceState {
  /** The commit served (listed) last. */
  current?: string;
  /** Earlier commits still served, newest first. */
  retained: string[];
  /** When a sync of this source last finished, ISO 8601. */
  lastSync?: string;
  /** When a sync of this source last succeeded. */
  lastSuccess?: string;
  /** Why the last sync failed; absent when it succeeded. */
  lastError?: { reason: SourceReason; detail: string; at: string };
  /** A `refs:` source: the refs it served at its last listing, and the deleted ones it still serves. */
  listing?: GroupListing;
}

export interface SyncState {
  version: 1;
  sources: Record<string, SourceState>;
}

const commit = z.string().regex(COMMIT_PATTERN);
const groupRef = z.object({
  name: z.string(),
  id: z.string(),
  commit,
  tag: z.string().regex(COMMIT_PATTERN).optional(),
});
const stateSchema = z.object({
  version: z.literal(1),
  sources: z.record(
    z.string(),
    z.object({
      current: commit.optional(),
      retained: z.array(commit),
      lastSync: z.string().optional(),
      lastSuccess: z.string().optional(),
      lastError: z
        .object({
          reason: z.string().refine(isSourceReason, 'not a source reason'),
          detail: z.string(),
          at: z.string(),
        })
        .optional(),
      listing: z
        .object({
          refs: z.array(groupRef),
          gone: z.array(groupRef),
          problems: z.array(
            z.object({
              path: z.string(),
              reason: z.string().refine(isProblemReason, 'not a reason'),
              severity: z.enum(['error', 'warning', 'info']),
              detail: z.string(),
            }),
          ),
        })
        .optional(),
    }),
  ),
});

/** state.json names a few commits and a listing per source: past this it is damaged, not read. */
export const STATE_FILE_MAX_BYTES = 64 * 1024 * 1024;

/** What reading state.json found: the state, or why there is none (then it is rebuilt from dataDir). */
export type StateRead =
  | { found: 'state'; state: SyncState }
  | { found: 'nothing'; state: SyncState }
  | { found: 'corrupt'; state: SyncState; reason: ReasonOf<'datadir'>; detail: string };

/** dataDir/state.json, shared by the processes on the dataDir: each writes the entries of the sources it leases. */
export interface StateFile {
  readonly file: string;
  read(): Promise<StateRead>;
  /** Writes `state`; a write asked for during another replaces any still waiting (the latest wins). */
  write(state: SyncState): Promise<void>;
  /**
   * Replaces the entries of `sources` (and removes those of `removed`), keeping every other source's entry as it
   * is on disk: read, change and written (temp and rename) under the state mutex, one merge at a time.
   */
  merge(holder: Holder, sources: Record<string, SourceState>, removed?: readonly string[]): Promise<void>;
}

/** Longest wait for the state mutex: it is held for one read and one write of state.json. */
export const STATE_MUTEX_WAIT_MS = 10_000;

/** Another live process held the state mutex for longer than STATE_MUTEX_WAIT_MS. */
export class StateMutexBusyError extends Error {
  constructor(file: string, holder: Holder) {
    super(`${file} is held by pid ${holder.pid} on ${holder.host} for longer than ${STATE_MUTEX_WAIT_MS} ms`);
    this.name = 'StateMutexBusyError';
  }
}

/**
 * Runs `work` holding `dataDir/state.mutex`, the short dataDir-wide mutex of state.json's read-modify-writes: a
 * holder that died with it is taken over; a live one is waited for.
 */
export async function withStateMutex<T>(dataDir: string, holder: Holder, work: () => Promise<T>): Promise<T> {
  const file = path.join(dataDir, 'state.mutex');
  const deadline = Date.now() + STATE_MUTEX_WAIT_MS;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    const taken = takeLease(file, holder);
    if (taken.ours) break;
    if (Date.now() > deadline) throw new StateMutexBusyError(file, taken.holder);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  try {
    return await work();
  } finally {
    releaseLease(file, holder);
  }
}

const EMPTY: SyncState = { version: 1, sources: {} };

export function openStateFile(dataDir: string, fs?: WriteFs): StateFile {
  const file = path.join(dataDir, 'state.json');
  const write = latestWins((text) => writeFileAtomic(file, text, fs));
  const text = (state: SyncState) => `${JSON.stringify(state, null, 2)}\n`;
  let merging: Promise<unknown> = Promise.resolve();
  const stateFile: StateFile = {
    file,
    async read() {
      const corrupt = (detail: string, reason: ReasonOf<'datadir'> = 'datadir-file-damaged'): StateRead => ({
        found: 'corrupt',
        state: EMPTY,
        reason,
        detail,
      });
      let text: string;
      try {
        text = await readBounded(file, STATE_FILE_MAX_BYTES);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { found: 'nothing', state: EMPTY };
        if (error instanceof FileRefusedError) return corrupt(error.detail, error.reason);
        return corrupt(messageOf(error));
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch (error) {
        return corrupt(messageOf(error));
      }
      const parsed = stateSchema.safeParse(json);
      if (!parsed.success) return corrupt(z.prettifyError(parsed.error).split('\n')[0]!);
      return { found: 'state', state: parsed.data as SyncState };
    },
    write: (state) => write(text(state)),
    merge(holder, sources, removed = []) {
      const merge = () =>
        withStateMutex(dataDir, holder, async () => {
          const all = { ...(await stateFile.read()).state.sources, ...sources };
          for (const id of removed) delete all[id];
          await writeFileAtomic(file, text({ version: 1, sources: all }), fs);
        });
      const done = merging.then(merge, merge);
      merging = done.catch(() => undefined);
      return done;
    },
  };
  return stateFile;
}
