import type { SearchData } from '../index/searchBuild.ts';
import { buildSearchData, searchInputs } from '../index/searchBuild.ts';
import type { CommitIndex, IndexOptions, IndexStore } from '../index/index.ts';
import type { Held } from './held.ts';

/** What a search index is held by: it is the same for every source of one repository, commit and options. */
export const searchKey = (repository: string, commit: string, options: IndexOptions) =>
  JSON.stringify([repository, commit, options]);

/** Where a served commit's search index comes from and goes to. */
export interface SearchSource {
  /** What names the repository the commit is of (repositoryKey), for the key it is held by. */
  repository: string;
  /** The search indexes of the process (HeldCommits.searches): a commit several sources serve has one. */
  held?: Held<SearchData>;
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
    const key = searchKey(from.repository, index.commit, await from.options());
    return from.held === undefined ? load() : from.held.once(key, load);
  };
  return () =>
    (loaded ??= shared().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    }));
}
