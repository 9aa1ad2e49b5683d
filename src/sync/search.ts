import type { SearchData } from '../index/searchBuild.ts';
import { buildSearchData, searchInputs } from '../index/searchBuild.ts';
import type { CommitIndex, IndexOptions, IndexStore } from '../index/index.ts';

/**
 * The search indexes this process holds, by what fixes their content (repository, commit, index options): a
 * commit served by several sources (one repository under two ids, two tags of a `refs:` source on one commit) is
 * read or built once and held once. Held weakly: one no namespace serves any more is let go.
 */
export interface HeldSearches {
  once(key: string, load: () => Promise<SearchData>): Promise<SearchData>;
}

export function heldSearches(): HeldSearches {
  const held = new Map<string, WeakRef<Promise<SearchData>>>();
  const gone = new FinalizationRegistry<string>((key) => {
    if (held.get(key)?.deref() === undefined) held.delete(key);
  });
  return {
    once(key, load) {
      const known = held.get(key)?.deref();
      if (known !== undefined) return known;
      const loading = load();
      held.set(key, new WeakRef(loading));
      gone.register(loading, key);
      // A failed load is not held: the next namespace asking tries again.
      loading.catch(() => held.get(key)?.deref() === loading && held.delete(key));
      return loading;
    },
  };
}

/** Where a served commit's search index comes from and goes to. */
export interface SearchSource {
  /** The repository (without credentials) the commit is of, for HeldSearches' key. */
  repository: string;
  held?: HeldSearches;
  indexes: IndexStore;
  options(): Promise<IndexOptions>;
  /** SKILL.md text the indexer still holds (none after a restart). */
  heldBody?(blob: string): string | undefined;
  /** A blob's bytes, checked against the index (the namespace's guarded reader). */
  read(blob: string): Promise<Uint8Array>;
  /** Told when a search index built could not be saved (serving goes on; the next start builds it again). */
  unsaved?(error: unknown): void;
}

/**
 * The search index of a served commit, once: read from its search file in dataDir, or, when there is none (a
 * commit indexed now, or by an older version), built yielding the thread and saved beside the index file. A build
 * that failed is tried again at the next call.
 */
export function searchOnce(index: CommitIndex, from: SearchSource): () => Promise<SearchData> {
  let loaded: Promise<SearchData> | undefined;
  const load = async (): Promise<SearchData> => {
    const options = await from.options();
    const stored = await from.indexes.loadSearch(index, options);
    if (stored !== undefined) return { ...stored, stored: true };
    const built = await buildSearchData(searchInputs(index), { held: from.heldBody, read: from.read });
    await from.indexes.saveSearch(index, options, built).catch((error: unknown) => from.unsaved?.(error));
    return built;
  };
  const shared = async () => {
    const key = JSON.stringify([from.repository, index.commit, await from.options()]);
    return from.held === undefined ? load() : from.held.once(key, load);
  };
  return () =>
    (loaded ??= shared().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    }));
}
