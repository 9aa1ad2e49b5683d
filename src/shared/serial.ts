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
