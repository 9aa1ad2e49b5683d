import type { Config, SourceConfig } from '../config/index.ts';
import type { FetchProgress } from '../git/index.ts';
import type { IndexStore } from '../index/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { Damage } from './damage.ts';
import type { SyncOutcome } from '../shared/status.ts';
import { createFollower, type Follower } from './follower.ts';
import { openSource, type Source, type SourceDeps } from './source.ts';

/** A source as the worker runs it: its config, the source object (how) and its follower (when). */
export interface Followed {
  config: SourceConfig;
  source: Source;
  follower: Follower;
}

/** What the worker's caller may pass for every source (part of the worker's own options). */
export interface FollowHooks {
  onProgress?: (source: string, progress: FetchProgress | { phase: 'indexing' }) => void;
  /** Told after every sync of every source: served, recorded, and the next poll or retry set. */
  onSettled?: (outcome: SyncOutcome) => void;
  /** Randomness for retry jitter (tests pass a fixed one). */
  random?: () => number;
  /** The index files' store (tests make it fail like a full disk). */
  indexStore?: (dir: string) => IndexStore;
}

export interface FollowOptions {
  dataDir: string;
  clock: Clock;
  /** One sync of `followed`, settled (catalog and state updated). Never rejects. */
  sync: (followed: Followed, why: string) => Promise<SyncOutcome>;
  /** A read found a served commit of source `id` damaged. */
  onDamage: (id: string, damage: Damage) => void;
  hooks: FollowHooks;
  /** The store a `refs:` source shares with its refs, and what each ref names (absent: a source of its own). */
  shared?: (source: SourceConfig) => SourceDeps['shared'];
}

/** Opens `sourceConfig`'s source and a follower that syncs it through `options.sync`. */
export function followSource(sourceConfig: SourceConfig, config: Config, options: FollowOptions): Followed {
  const { id } = sourceConfig;
  const { hooks } = options;
  const source = openSource(sourceConfig, {
    shared: options.shared?.(sourceConfig),
    dataDir: options.dataDir,
    onDamage: (damage) => options.onDamage(id, damage),
    onProgress: (p) => hooks.onProgress?.(id, p),
    indexStore: hooks.indexStore,
  });
  const followed: Followed = {
    config: sourceConfig,
    source,
    follower: createFollower({
      sync: (why) => options.sync(followed, why),
      pollMs: sourceConfig.pollMs,
      retryMinMs: config.sync.retryMinMs,
      retryMaxMs: config.sync.retryMaxMs,
      random: hooks.random ?? Math.random,
      clock: options.clock,
      onSettled: hooks.onSettled,
    }),
  };
  return followed;
}

/**
 * Stops the followers (a running sync lands first), then ends their sources' git processes and packs. `now`:
 * the git processes end first, so running syncs end at once (a hanging remote cannot hold a shutdown).
 */
export async function unfollow(followed: readonly Followed[], { now = false } = {}): Promise<void> {
  const stopping = Promise.all(followed.map(({ follower }) => follower.stop()));
  if (now) await Promise.all(followed.map(({ source }) => source.close()));
  await stopping;
  // A later read of a closed source opens its repository again.
  await Promise.all(followed.map(({ source }) => source.close()));
}
