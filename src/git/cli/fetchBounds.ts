import type { Refusal, TransferLimits } from '../packGuard.ts';
import type { FetchProgress } from '../repository.ts';
import { watchReceived } from './received.ts';
import type { GitRunResult } from './run.ts';

export interface FetchBounds {
  /** Aborted once the guard refuses the transfer: the git child is then stopped. */
  signal: AbortSignal;
  /** Each progress line git prints: the bytes received, and the objects its pack header counts. */
  progress(progress: FetchProgress): void;
  /**
   * After git ended: the guard's refusal, if it refused the transfer (`stopped: 'aborted'`, or once it followed
   * every byte git took, whether git succeeded or failed on its own).
   */
  passed(result: GitRunResult): Promise<Refusal | undefined>;
  /** Stops watching the store's packs. */
  stop(): Promise<void>;
}

/**
 * The pack guard of one `git fetch` into `gitdir` (which held the packs `before`), fed what git shows of the
 * transfer: its progress (bytes, the pack header's count) and the packs it writes, as they land on disk.
 */
export async function fetchBounds(
  gitdir: string,
  before: ReadonlySet<string>,
  limits: TransferLimits,
): Promise<FetchBounds> {
  // The guard (and pako with it) loads with the first fetch: a server that never fetches never loads it.
  const { transferGuard } = await import('../packGuard.ts');
  const guard = transferGuard(limits);
  const over = new AbortController();
  const stop = (refusal: Refusal | undefined) => refusal !== undefined && over.abort();
  const watch = watchReceived(gitdir, before, guard, stop);
  return {
    signal: over.signal,
    progress(progress) {
      stop(guard.received(progress.bytes ?? 0));
      // index-pack counts what it receives against its pack header's count, shown with the first object.
      if (progress.phase === 'Receiving objects') stop(guard.objects(progress.total));
    },
    async passed(result) {
      if (result.stopped === 'aborted') return guard.refused();
      // Stopped by its own bounds (idle, deadline, closed): git's failure says which.
      if (result.stopped !== undefined) return undefined;
      // git may take a pack, or refuse one, before a look saw all of it: the guard's verdict on every byte holds.
      return watch.finish();
    },
    stop: () => watch.stop(),
  };
}
