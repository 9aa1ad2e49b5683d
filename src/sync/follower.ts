import type { Clock } from '../shared/clock.ts';
import type { SyncOutcome } from '../shared/status.ts';

export interface FollowerOptions {
  /** One sync of the source, settled (catalog and state updated). Never rejects. */
  sync: (why: string) => Promise<SyncOutcome>;
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
  /** Syncs now, or once more right after the running sync; `undefined` once stopped. */
  trigger(why: string): Promise<SyncOutcome> | undefined;
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

  const loop = async (why: string, attempt: number): Promise<SyncOutcome> => {
    let reason = why;
    for (;;) {
      const outcome = await options.sync(reason);
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

  const trigger = (why: string): Promise<SyncOutcome> | undefined => {
    if (phase.kind === 'stopped') return undefined;
    if (phase.kind === 'running') {
      phase = { ...phase, again: true };
      return phase.done;
    }
    phase.cancel?.();
    const done = loop(why, phase.attempt);
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
      phase = { kind: 'stopped', ...(before.kind === 'running' ? { done: before.done } : {}) };
      if (before.kind === 'waiting') before.cancel?.();
      if (before.kind === 'running') await before.done;
    },
  };
}
