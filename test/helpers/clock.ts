import type { Clock } from '../../src/shared/clock.ts';

export interface ManualClock extends Clock {
  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  advance(ms: number): void;
  /** Delays from now of the timers set and not yet fired or cancelled, soonest first. */
  pending(): number[];
}

/** A clock that moves only when told: tests drive polls and retries instead of waiting for them. */
export function manualClock(start = Date.parse('2024-05-01T00:00:00.000Z')): ManualClock {
  let now = start;
  let timers: Array<{ due: number; fire: () => void }> = [];
  return {
    now: () => now,
    after(ms, fire) {
      const timer = { due: now + ms, fire };
      timers.push(timer);
      return () => {
        timers = timers.filter((t) => t !== timer);
      };
    },
    advance(ms) {
      const until = now + ms;
      for (;;) {
        const next = timers.filter((t) => t.due <= until).sort((a, b) => a.due - b.due)[0];
        if (next === undefined) break;
        timers = timers.filter((t) => t !== next);
        now = next.due;
        next.fire();
      }
      now = until;
    },
    pending: () => timers.map((t) => t.due - now).sort((a, b) => a - b),
  };
}

export interface SkewedClock extends Clock {
  /** Holds every timer that falls due (a paused process: no renewal, no poll) until `resume()`. */
  pause(): void;
  /** Fires the timers held, in the order they fell due, and lets the others fire when due. */
  resume(): void;
}

/** Real time, `offsetMs` off (a replica whose clock is wrong); its timers wait real milliseconds. */
export function skewedClock(offsetMs: number): SkewedClock {
  let paused = false;
  let held: Array<{ fire: () => void }> = [];
  return {
    now: () => Date.now() + offsetMs,
    after(ms, fire) {
      const timer = { fire };
      const pending = setTimeout(() => (paused ? held.push(timer) : fire()), ms);
      pending.unref();
      return () => {
        clearTimeout(pending);
        held = held.filter((t) => t !== timer);
      };
    },
    pause: () => void (paused = true),
    resume() {
      paused = false;
      const due = held;
      held = [];
      for (const timer of due) timer.fire();
    },
  };
}
