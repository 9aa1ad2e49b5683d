import type { SearchData } from '../index/searchBuild.ts';
import { buildSearchData, searchInputs } from '../index/searchBuild.ts';
import type { CommitIndex, IndexOptions, IndexStore } from '../index/index.ts';

/** Where a served commit's search index comes from and goes to. */
export interface SearchSource {
  indexes: IndexStore;
  options(): Promise<IndexOptions>;
  /** SKILL.md text the indexer still holds (none after a restart). */
  held?(blob: string): string | undefined;
  /** A blob's bytes, checked against the index (the namespace's guarded reader). */
  read(blob: string): Promise<Uint8Array>;
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
    const built = await buildSearchData(searchInputs(index), from);
    // Not saved (a full disk): it is built again at the next start; serving goes on.
    await from.indexes.saveSearch(index, options, built).catch(() => undefined);
    return built;
  };
  return () =>
    (loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    }));
}
