import path from 'node:path';
import type { Holder } from './holder.ts';
import { releaseLease, takeLease } from './lease.ts';

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
