import type { Namespace, ServedSource } from '../catalog/index.ts';
import type { Logger } from '../shared/log.ts';
import { messageOf } from '../shared/text.ts';
import type { Followed } from './follower.ts';

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
    current,
    retained: others.slice(0, keep),
    dropped: others.slice(keep),
  };
}

/**
 * What the sources stopped serving (past `keep`, restored beyond it, another repository's, a ref gone), forgotten
 * only once state.json no longer names it, and never while this process or another live one still serves it.
 */
export interface Retention {
  /** Commits source `id` no longer serves. */
  drop(id: string, commits: readonly string[]): void;
  /** Source `id` starts over (restarted or removed): what it dropped before is not its to forget any more. */
  reset(id: string): void;
  /**
   * Call after state.json was written: forgets what the `touched` sources this process leases dropped, but
   * commits served again since; one that another process or another ref of the same store still serves stays
   * dropped, forgotten at a later call once none does.
   */
  settle(touched: readonly Followed[]): Promise<void>;
}

export interface RetentionDeps {
  logger: Logger;
  /** Whether this process holds source `id`'s lease: only the holder forgets. */
  holds(id: string): boolean;
  /** The commits source `id` serves now. */
  serving(id: string): ReadonlySet<string>;
  /** The commits of `followed`'s store that the other processes and the other refs of its `refs:` source serve. */
  elsewhere(followed: Followed): ReadonlySet<string>;
}

export function createRetention(deps: RetentionDeps): Retention {
  let dropped: ReadonlyMap<string, ReadonlySet<string>> = new Map();
  const set = (id: string, commits: ReadonlySet<string>) => {
    const next = new Map(dropped);
    if (commits.size === 0) next.delete(id);
    else next.set(id, commits);
    dropped = next;
  };
  return {
    drop(id, commits) {
      if (commits.length > 0) set(id, new Set([...(dropped.get(id) ?? []), ...commits]));
    },
    reset: (id) => set(id, new Set()),
    async settle(touched) {
      for (const followed of touched) {
        const { id } = followed.config;
        if (!deps.holds(id)) continue;
        const now = dropped.get(id) ?? new Set<string>();
        const served = deps.serving(id);
        const elsewhere = deps.elsewhere(followed);
        set(id, new Set([...now].filter((commit) => !served.has(commit) && elsewhere.has(commit))));
        for (const commit of now) {
          if (served.has(commit) || elsewhere.has(commit)) continue;
          await followed.source
            .forget(commit)
            .catch((error: unknown) =>
              deps.logger.warn({ source: id, commit, err: messageOf(error) }, 'could not forget a commit'),
            );
        }
      }
    },
  };
}
