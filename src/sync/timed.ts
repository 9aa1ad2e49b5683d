import type { SyncOutcome } from './follower.ts';
import type { SyncStep } from './step.ts';

/** Runs one sync step and tells `onSynced` how long it ran, in seconds (metrics). */
export async function timedStep(
  step: () => Promise<SyncStep>,
  onSynced: ((outcome: SyncOutcome, seconds: number) => void) | undefined,
  now: () => number = () => performance.now(),
): Promise<SyncStep> {
  const started = now();
  const done = await step();
  onSynced?.(done.outcome, (now() - started) / 1000);
  return done;
}
