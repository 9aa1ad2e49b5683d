/** Time passed in (sync, the replicas' coordination), so tests move it instead of waiting for it. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fire` once after `ms`; returns a function that cancels it. Never keeps the process alive. */
  after(ms: number, fire: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, fire) {
    const timer = setTimeout(fire, ms);
    timer.unref();
    return () => clearTimeout(timer);
  },
};
