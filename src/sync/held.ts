import type { CommitIndex } from '../index/index.ts';
import type { SearchData } from '../index/searchBuild.ts';

/**
 * Values this process holds by what fixes their content, each loaded once however many ask: held strongly while it
 * loads, then weakly (a value no namespace uses any more is let go, and loaded again when asked again).
 */
export interface Held<T extends object> {
  /**
   * The value of `key`: the one held, or the one `load` gives (which is then held); a failed load is not held, and
   * whoever waited on it loads with its own `load` (a failure is never another caller's).
   */
  once(key: string, load: () => Promise<T>): Promise<T>;
  /** Lets go of `key`'s value (a damaged index): the next `once` loads it again. */
  forget(key: string): void;
}

export function held<T extends object>(): Held<T> {
  const loading = new Map<string, Promise<T>>();
  const values = new Map<string, WeakRef<T>>();
  const gone = new FinalizationRegistry<{ key: string; ref: WeakRef<T> }>(({ key, ref }) => {
    if (values.get(key) === ref) values.delete(key);
  });
  const once = (key: string, load: () => Promise<T>): Promise<T> => {
    const known = values.get(key)?.deref();
    if (known !== undefined) return Promise.resolve(known);
    const pending = loading.get(key);
    // Another's load failing may be its own (its store, its keyring): a waiter then loads for itself.
    if (pending !== undefined) return pending.catch(() => once(key, load));
    const started = load().then(
      (value) => {
        if (loading.get(key) === started) {
          loading.delete(key);
          const ref = new WeakRef(value);
          values.set(key, ref);
          gone.register(value, { key, ref });
        }
        return value;
      },
      (error: unknown) => {
        if (loading.get(key) === started) loading.delete(key);
        throw error;
      },
    );
    loading.set(key, started);
    return started;
  };
  return {
    once,
    forget(key) {
      loading.delete(key);
      values.delete(key);
    },
  };
}

/**
 * What this process holds once per (repository, commit, index options), whatever the number of sources or refs
 * serving that commit: its index, the index file it was read from or saved to (another source links its own file
 * to it), and its search index. What is a source's own (its id, provenance, reader, retention) is not here.
 */
export interface HeldCommits {
  indexes: Held<CommitIndex>;
  /** The index file a held index was read from or saved to. */
  filed: WeakMap<CommitIndex, string>;
  searches: Held<SearchData>;
}

export function heldCommits(): HeldCommits {
  return { indexes: held(), filed: new WeakMap(), searches: held() };
}
