import type { SourceConfig } from '../config/index.ts';
import type { SourceState } from './state.ts';

/** How long a process that asked the lease holder for a sync waits for its publication, at most. */
export const ASKED_WAIT_MS = 10 * 60_000;
const LOOK_EVERY_MS = 50;

/**
 * Waits until the lease holder published a sync finished after `before` (the entry's `lastSync` when asked),
 * for up to `waitMs` (absent: the source's transfer deadline, or ASKED_WAIT_MS). `taken`: the holder went away
 * and `take` got the lease meanwhile (this process syncs then).
 */
export async function waitForPublication(
  entry: () => Promise<SourceState | undefined>,
  before: string | undefined,
  take: () => Promise<boolean>,
  waitMs: number | undefined,
  config: Pick<SourceConfig, 'deadlineMs'>,
): Promise<'published' | 'taken' | 'timeout'> {
  const deadline = Date.now() + (waitMs ?? config.deadlineMs ?? ASKED_WAIT_MS);
  for (;;) {
    const now = (await entry())?.lastSync;
    if (now !== undefined && now !== before) return 'published';
    if (await take()) return 'taken';
    if (Date.now() >= deadline) return 'timeout';
    await new Promise((resolve) => setTimeout(resolve, LOOK_EVERY_MS));
  }
}
