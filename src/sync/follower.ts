import type { Config, SourceConfig } from '../config/index.ts';
import type { FetchProgress } from '../git/index.ts';
import type { IndexStore } from '../index/index.ts';
import type { Clock } from '../shared/clock.ts';
import type { FileRefusedError } from '../shared/boundedRead.ts';
import type { SyncOutcome } from '../shared/status.ts';
import type { Damage } from './damage.ts';
import type { LastChoice } from './groupStep.ts';
import { openSource, type Source, type SourceDeps } from './source.ts';

export interface FollowerOptions {
  /**
   * One sync of the source, settled (catalog and state updated), taking as fresh what its repository did since
   * `since` (performance.now(); absent: since it starts). Never rejects.
   */
  sync: (why: string, since?: number) => Promise<SyncOutcome>;
  /** Re-sync this long after a success; absent: only triggers and retries run it (a pinned commit). */
  pollMs?: number;
  retryMinMs: number;
  retryMaxMs: number;
  /** Randomness for retry jitter. */
  random: () => number;
  clock: Clock;
  /** Told after each sync, once the next poll or retry is set. */
  onSettled?: (outcome: SyncOutcome) => void;
}

/** Follows one source: one sync at a time, triggers merged, polls after a success, backoff after a failure. */
export interface Follower {
  /**
   * Syncs now, or once more right after the running sync; `undefined` once stopped. `since`: what the repository
   * did since then is fresh for it (a ref synced by its `refs:` source's listing takes what a sibling fetched).
   */
  trigger(why: string, since?: number): Promise<SyncOutcome> | undefined;
  /** Whether a sync is running (it started in the same tick as the trigger that asked for it). */
  readonly syncing: boolean;
  /** When the next poll or retry is due (ms since the epoch); `undefined` while syncing or when none is set. */
  readonly nextAt: number | undefined;
  /** Cancels the next poll or retry and waits for a running sync. */
  stop(): Promise<void>;
}

/** Exponential backoff with jitter: min·2^(attempt-1), capped at max, times a factor in [0.5, 1.5). */
export function retryDelay(attempt: number, minMs: number, maxMs: number, random: () => number): number {
  const base = Math.min(maxMs, minMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(base * (0.5 + random()));
}

type Phase =
  /** Between syncs; `attempt` counts the failures in a row, `cancel` stops the timer of the next poll or retry due `at`. */
  | { kind: 'waiting'; attempt: number; at?: number; cancel?: () => void }
  /** `again`: a trigger arrived during the sync, so one more follows it. */
  | { kind: 'running'; attempt: number; again: boolean; done: Promise<SyncOutcome> }
  | { kind: 'stopped'; done?: Promise<SyncOutcome> };

export function createFollower(options: FollowerOptions): Follower {
  const { clock } = options;
  let phase: Phase = { kind: 'waiting', attempt: 0 };

  const next = (outcome: SyncOutcome, attempt: number): Phase => {
    const delay = outcome.ok
      ? options.pollMs
      : retryDelay(attempt, options.retryMinMs, options.retryMaxMs, options.random);
    if (delay === undefined) return { kind: 'waiting', attempt };
    const why = outcome.ok ? 'poll' : `retry ${attempt}`;
    return {
      kind: 'waiting',
      attempt,
      at: clock.now() + delay,
      cancel: clock.after(delay, () => void trigger(why)),
    };
  };

  const loop = async (why: string, attempt: number, since?: number): Promise<SyncOutcome> => {
    let reason = why;
    let from = since;
    for (;;) {
      const outcome = await options.sync(reason, from);
      from = undefined;
      attempt = outcome.ok ? 0 : attempt + 1;
      if (phase.kind === 'running' && phase.again) {
        phase = { ...phase, again: false };
        options.onSettled?.(outcome);
        reason = 'triggered while syncing';
        continue;
      }
      // One assignment ends the run: no trigger can fall between the last look at `again` and it.
      if (phase.kind === 'running') phase = next(outcome, attempt);
      options.onSettled?.(outcome);
      return outcome;
    }
  };

  const trigger = (why: string, since?: number): Promise<SyncOutcome> | undefined => {
    if (phase.kind === 'stopped') return undefined;
    if (phase.kind === 'running') {
      phase = { ...phase, again: true };
      return phase.done;
    }
    phase.cancel?.();
    const done = loop(why, phase.attempt, since);
    phase = { kind: 'running', attempt: phase.attempt, again: false, done };
    return done;
  };

  return {
    trigger,
    get syncing() {
      return phase.kind === 'running';
    },
    get nextAt() {
      return phase.kind === 'waiting' ? phase.at : undefined;
    },
    async stop() {
      const before = phase;
      phase = { kind: 'stopped', done: before.kind === 'running' ? before.done : undefined };
      if (before.kind === 'waiting') before.cancel?.();
      if (before.kind === 'running') await before.done;
    },
  };
}

/** A source as the worker runs it: its config, the source object (how) and its follower (when). */
export interface Followed {
  config: SourceConfig;
  source: Source;
  follower: Follower;
  /** A `refs:` source's last listing and the refs chosen from it (groupStep.ts). */
  chosen: LastChoice;
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
  /**
   * One sync of `followed`, settled (catalog and state updated), taking as fresh what its repository did since
   * `since` (performance.now()). Never rejects.
   */
  sync: (followed: Followed, why: string, since: number) => Promise<SyncOutcome>;
  /** A read found a served commit of source `id` damaged. */
  onDamage: (id: string, damage: Damage) => void;
  /** An index file of source `id` was too large or no regular file: it is rebuilt. */
  onRefused?: (id: string, error: FileRefusedError) => void;
  /** A search index of source `id` could not be saved: it is built again at the next start. */
  onSearchUnsaved?: (id: string, error: unknown) => void;
  hooks: FollowHooks;
  /** The store a `refs:` source shares with its refs, and what each ref names (absent: a source of its own). */
  shared?: (source: SourceConfig) => SourceDeps['shared'];
  /** The indexes and search indexes every source of the worker shares (SourceDeps.held). */
  held?: SourceDeps['held'];
}

/** Opens `sourceConfig`'s source and a follower that syncs it through `options.sync`. */
export function followSource(sourceConfig: SourceConfig, config: Config, options: FollowOptions): Followed {
  const { id } = sourceConfig;
  const { hooks } = options;
  const source = openSource(sourceConfig, {
    shared: options.shared?.(sourceConfig),
    dataDir: options.dataDir,
    onDamage: (damage) => options.onDamage(id, damage),
    onRefused: (error) => options.onRefused?.(id, error),
    onSearchUnsaved: (error) => options.onSearchUnsaved?.(id, error),
    onProgress: (p) => hooks.onProgress?.(id, p),
    indexStore: hooks.indexStore,
    held: options.held,
  });
  const followed: Followed = {
    config: sourceConfig,
    source,
    chosen: {},
    follower: createFollower({
      sync: (why, since) => options.sync(followed, why, since ?? performance.now()),
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
