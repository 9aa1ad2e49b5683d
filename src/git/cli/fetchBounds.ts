import type { FailureFacts } from '../failure.ts';
import type { Oversized } from '../packEntry.ts';
import type { FetchProgress } from '../repository.ts';
import { watchReceived } from './received.ts';
import type { GitRunResult } from './run.ts';

export interface FetchBounds {
  /** Aborted once the fetch passes a bound: the git child is then stopped. */
  signal: AbortSignal;
  /** Each progress line git prints: the bytes received, and the objects its pack header counts. */
  progress(progress: FetchProgress): void;
  /**
   * After git ended: the bound the transfer passed, if it passed one (`stopped: 'aborted'`, or the size rule over
   * the rest of what git took before a look saw it, once git succeeded).
   */
  passed(result: GitRunResult): Promise<FailureFacts | undefined>;
  /** Stops watching the store's packs. */
  stop(): Promise<void>;
}

/**
 * The bounds of one `git fetch` into `gitdir` (which held the packs `before`): `maxBytes` (the packs git writes,
 * and its progress), `maxObjects` (the pack header's count, in its progress), and the transfer's size rule (each
 * object header as it lands on disk, then every byte git took).
 */
export function fetchBounds(
  gitdir: string,
  before: ReadonlySet<string>,
  maxBytes: number,
  maxObjects: number,
): FetchBounds {
  const over = new AbortController();
  let passed: 'bytes' | 'objects' | Oversized = 'bytes';
  const stop = (why: typeof passed) => {
    if (!over.signal.aborted) passed = why;
    over.abort();
  };
  // git writes what it receives to objects/pack/tmp_pack_*: its size is the bytes received so far, and its
  // object headers say at once what git would spend minutes inflating.
  const watch = watchReceived(gitdir, before, {
    bytes: (bytes) => bytes > maxBytes && stop('bytes'),
    oversized: stop,
  });
  const facts = (): FailureFacts =>
    ({
      bytes: { maxBytes },
      objects: { maxObjects },
      object: {},
      'large-blobs': { largeBlobs: true },
    })[passed];
  return {
    signal: over.signal,
    progress(progress) {
      if ((progress.bytes ?? 0) > maxBytes) stop('bytes');
      // index-pack counts what it receives against its pack header's count, shown with the first object.
      if (progress.phase === 'Receiving objects' && progress.total > maxObjects) stop('objects');
    },
    async passed(result) {
      if (result.stopped === 'aborted') return facts();
      if (result.code !== 0 || result.stopped !== undefined) return undefined;
      // git may take a pack before a look saw all of it: the transfer holds once the size rule passed every byte.
      const refused = await watch.finish();
      if (refused === undefined) return undefined;
      stop(refused);
      return facts();
    },
    stop: () => watch.stop(),
  };
}
