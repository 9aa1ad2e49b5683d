/**
 * Runs work one at a time per key, in the order it was asked for; work of other keys runs beside it. Work that
 * fails does not hold back the next.
 */
export function oneAtATimePer(): <T>(key: string, work: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return (key, work) => {
    const done = (tails.get(key) ?? Promise.resolve()).then(work, work);
    tails.set(
      key,
      done.catch(() => undefined),
    );
    return done;
  };
}

/**
 * Runs `run` over what was asked, one run at a time: what is asked while a run is under way waits for it and
 * joins the next run, which takes it all at once, so a burst of asks costs two runs, not one each. Each ask
 * settles with the run that carries it, its error included.
 */
export function batched<T>(run: (asks: readonly T[]) => Promise<void>): (ask: T) => Promise<void> {
  let next: { asks: T[]; done: Promise<void> } | undefined;
  let last: Promise<unknown> = Promise.resolve();
  return (ask) => {
    if (next === undefined) {
      const batch: { asks: T[]; done?: Promise<void> } = { asks: [] };
      const start = () => {
        next = undefined;
        return run(batch.asks);
      };
      batch.done = last.then(start, start);
      last = batch.done.catch(() => undefined);
      next = batch as { asks: T[]; done: Promise<void> };
    }
    next.asks.push(ask);
    return next.done;
  };
}
