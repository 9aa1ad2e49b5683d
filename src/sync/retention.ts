import type { Namespace, ServedSource } from '../catalog/index.ts';

/** The served set once `next` is current: the commits it replaces stay, newest first, up to `keep`. */
export function advance(
  served: ServedSource | undefined,
  next: Namespace,
  keep: number,
): { served: ServedSource; dropped: string[] } {
  const previous = served === undefined ? [] : [served.current, ...served.retained];
  const others = previous.filter((ns) => ns.commit !== next.commit);
  return {
    served: { id: next.source, current: next, retained: others.slice(0, keep) },
    dropped: others.slice(keep).map((ns) => ns.commit),
  };
}

/** The served set with `ns` in place of the namespace of the same commit (a repaired one), wherever it is. */
export function replaced(served: ServedSource, ns: Namespace): ServedSource {
  const swap = (old: Namespace) => (old.commit === ns.commit ? ns : old);
  return { ...served, current: swap(served.current), retained: served.retained.map(swap) };
}

/**
 * Which of the commits dataDir holds serve when state.json no longer says: the pinned commit if it is among
 * them, else the newest; then the newest `keep` others. Commits of unknown time come last.
 */
export function rebuilt<T extends { commit: string; commitTime?: string }>(
  held: readonly T[],
  pinned: string | undefined,
  keep: number,
): { current?: T; retained: T[]; dropped: T[] } {
  const time = (c: T) => c.commitTime ?? '';
  const ordered = [...held].sort(
    (a, b) =>
      Number(b.commit === pinned) - Number(a.commit === pinned) ||
      (time(a) < time(b) ? 1 : time(a) > time(b) ? -1 : 0),
  );
  const [current, ...others] = ordered;
  return {
    ...(current === undefined ? {} : { current }),
    retained: others.slice(0, keep),
    dropped: others.slice(keep),
  };
}

/** Commits that fell out of retention, forgotten only once the state that named them is replaced on disk. */
export interface Retention {
  drop(commits: readonly string[]): void;
  /**
   * Call after state.json was written: forgets what was dropped, except commits served again since; one that
   * another process still serves (`elsewhere`) stays dropped, forgotten at a later call once none does.
   */
  forgetDropped(served: ReadonlySet<string>, elsewhere?: ReadonlySet<string>): Promise<void>;
}

export function createRetention(
  forget: (commit: string) => Promise<void>,
  onError: (commit: string, error: unknown) => void,
): Retention {
  let dropped: ReadonlySet<string> = new Set();
  return {
    drop(commits) {
      dropped = new Set([...dropped, ...commits]);
    },
    async forgetDropped(served, elsewhere = new Set()) {
      const now = dropped;
      dropped = new Set([...now].filter((commit) => !served.has(commit) && elsewhere.has(commit)));
      for (const commit of now) {
        if (served.has(commit) || elsewhere.has(commit)) continue;
        await forget(commit).catch((error: unknown) => onError(commit, error));
      }
    },
  };
}
