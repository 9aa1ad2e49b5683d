import { describe, expect, it } from 'vitest';
import type { SyncOutcome } from '../../src/shared/status.ts';
import { createFollower, retryDelay } from '../../src/sync/follower.ts';
import { manualClock } from '../helpers/clock.ts';

const ok = (commit: string): SyncOutcome => ({ id: 's', ok: true, commit, changed: true });
const failed: SyncOutcome = { id: 's', ok: false, reason: 'source-unreachable', detail: 'down' };

/** A sync whose runs finish when the test says, recording why each ran and how many ran at once. */
function scriptedSync() {
  const runs: Array<{ why: string; finish(outcome: SyncOutcome): void }> = [];
  let active = 0;
  let most = 0;
  return {
    runs,
    most: () => most,
    sync: (why: string) =>
      new Promise<SyncOutcome>((resolve) => {
        most = Math.max(most, ++active);
        runs.push({
          why,
          finish: (outcome) => {
            active--;
            resolve(outcome);
          },
        });
      }),
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('retryDelay', () => {
  it('doubles from the minimum up to the maximum, with jitter in [0.5, 1.5)', () => {
    expect([1, 2, 3, 4, 10].map((attempt) => retryDelay(attempt, 1000, 5000, () => 0.5))).toEqual([
      1000, 2000, 4000, 5000, 5000,
    ]);
    expect(retryDelay(1, 1000, 5000, () => 0)).toBe(500);
    expect(retryDelay(1, 1000, 5000, () => 0.999)).toBe(1499);
  });
});

describe('a follower', () => {
  const options = { retryMinMs: 50, retryMaxMs: 200, random: () => 0.5 };

  it('says when the next poll or retry is due, and nothing while a sync runs or once stopped', async () => {
    const clock = manualClock();
    const script = scriptedSync();
    const follower = createFollower({ ...options, sync: script.sync, pollMs: 60_000, clock });
    expect(follower.nextAt).toBeUndefined();
    const started = clock.now();
    follower.trigger('start');
    expect(follower.nextAt).toBeUndefined();
    script.runs[0]!.finish(failed);
    await settle();
    expect(follower.nextAt).toBe(started + 50);
    clock.advance(50);
    script.runs[1]!.finish(ok('a'));
    await settle();
    expect(follower.nextAt).toBe(started + 50 + 60_000);
    await follower.stop();
    expect(follower.nextAt).toBeUndefined();
  });

  it('polls `pollMs` after a success, and only then', async () => {
    const clock = manualClock();
    const script = scriptedSync();
    const follower = createFollower({ ...options, sync: script.sync, pollMs: 60_000, clock });
    const first = follower.trigger('start')!;
    expect(follower.syncing).toBe(true);
    script.runs[0]!.finish(ok('a'));
    expect(await first).toEqual(ok('a'));
    expect([follower.syncing, clock.pending()]).toEqual([false, [60_000]]);
    clock.advance(59_999);
    expect(script.runs.length).toBe(1);
    clock.advance(1);
    expect(script.runs.map((r) => r.why)).toEqual(['start', 'poll']);
    expect(clock.pending()).toEqual([]);
    script.runs[1]!.finish(ok('a'));
    await settle();
    expect(clock.pending()).toEqual([60_000]);
    await follower.stop();
  });

  it('retries failures with doubling delays up to the maximum, and polls again after a success', async () => {
    const clock = manualClock();
    const script = scriptedSync();
    const follower = createFollower({ ...options, sync: script.sync, pollMs: 60_000, clock });
    const delays: number[][] = [];
    void follower.trigger('start');
    for (let i = 0; i < 4; i++) {
      script.runs[i]!.finish(failed);
      await settle();
      delays.push(clock.pending());
      clock.advance(clock.pending()[0]!);
    }
    expect(delays).toEqual([[50], [100], [200], [200]]);
    expect(script.runs.map((r) => r.why)).toEqual(['start', 'retry 1', 'retry 2', 'retry 3', 'retry 4']);
    script.runs[4]!.finish(ok('b'));
    await settle();
    expect(clock.pending()).toEqual([60_000]);
    // The count of failures starts over after a success.
    clock.advance(60_000);
    script.runs[5]!.finish(failed);
    await settle();
    expect(clock.pending()).toEqual([50]);
    await follower.stop();
  });

  it('runs one sync at a time and merges triggers during one into a single follow-up', async () => {
    const clock = manualClock();
    const script = scriptedSync();
    const follower = createFollower({ ...options, sync: script.sync, clock });
    const asked = Array.from({ length: 6 }, (_, i) => follower.trigger(`burst ${i}`)!);
    expect(script.runs.length).toBe(1);
    script.runs[0]!.finish(ok('a'));
    await settle();
    expect(script.runs.map((r) => r.why)).toEqual(['burst 0', 'triggered while syncing']);
    script.runs[1]!.finish(ok('b'));
    // Every caller gets the outcome of the sync that covered its trigger: the follow-up's.
    expect(await Promise.all(asked)).toEqual(Array(6).fill(ok('b')));
    expect(script.most()).toBe(1);
    // A pinned source (no poll) waits for the next trigger: no timer.
    expect(clock.pending()).toEqual([]);
  });

  it('runs at once on a trigger while a poll is waiting, replacing that poll', async () => {
    const clock = manualClock();
    const script = scriptedSync();
    const follower = createFollower({ ...options, sync: script.sync, pollMs: 1000, clock });
    void follower.trigger('start');
    script.runs[0]!.finish(ok('a'));
    await settle();
    clock.advance(400);
    void follower.trigger('webhook');
    expect([script.runs.map((r) => r.why), clock.pending()]).toEqual([['start', 'webhook'], []]);
    script.runs[1]!.finish(ok('b'));
    await settle();
    expect(clock.pending()).toEqual([1000]);
    await follower.stop();
  });

  it('stops: no timer stays, a running sync is waited for, and triggers are refused', async () => {
    const clock = manualClock();
    const script = scriptedSync();
    const follower = createFollower({ ...options, sync: script.sync, pollMs: 1000, clock });
    void follower.trigger('start');
    let stopped = false;
    const stopping = follower.stop().then(() => {
      stopped = true;
    });
    await settle();
    expect(stopped).toBe(false);
    script.runs[0]!.finish(failed);
    await stopping;
    expect([clock.pending(), follower.trigger('late'), script.runs.length]).toEqual([[], undefined, 1]);
  });
});
