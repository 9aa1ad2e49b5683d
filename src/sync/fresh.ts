/** An answer and when the run that gives it started (performance.now()). */
interface Run<T> {
  started: number;
  answer: Promise<T>;
}

/** A Map or a WeakMap of runs. */
interface Runs<K, T> {
  get(key: K): Run<T> | undefined;
  set(key: K, run: Run<T>): unknown;
  delete(key: K): unknown;
}

/**
 * Answers no older than asked: a question asked at `since` takes the answer of a run of it that started at or after
 * `since` (what the repository held then is what it holds since the asking), else runs it. So the sources sharing a
 * repository, asked to sync at once, resolve a ref or check a commit's objects once, however many they are. A run
 * that failed is no one else's answer (its failure may be its caller's: a close, a kill).
 */
export interface Fresh<K, T> {
  /** `run`'s answer for `key`; `since` absent: run now. */
  of(key: K, since: number | undefined, run: () => Promise<T>): Promise<T>;
}

export function fresh<K, T>(runs: Runs<K, T>): Fresh<K, T> {
  return {
    of(key, since, run) {
      const known = runs.get(key);
      if (since !== undefined && known !== undefined && known.started >= since) return known.answer;
      const started = performance.now();
      const answer = run();
      const mine = { started, answer };
      runs.set(key, mine);
      answer.catch(() => runs.get(key) === mine && runs.delete(key));
      return answer;
    },
  };
}
