import type { SyncOutcome } from '../shared/status.ts';
import type { SyncStep } from './step.ts';

/** Runs one sync step and tells `onSynced` how long it ran, in seconds (metrics). */
export async function timedStep(
  step: () => Promise<SyncStep>,
  onSynced: ((outcome: SyncOutcome, seconds: number) => void) | undefined,
): Promise<SyncStep> {
  const started = performance.now();
  const done = await step();
  onSynced?.(done.outcome, (performance.now() - started) / 1000);
  return done;
}
