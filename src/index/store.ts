import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../shared/fs.ts';
import { INDEX_VERSION, type CommitIndex } from './types.ts';

/** What an index depends on besides the commit: a different setting means a different index. */
export interface IndexOptions {
  paths: readonly string[];
  strictNames: boolean;
  /** The fingerprint of the keys the commit's signature was verified with (`Keyring.fingerprint`). */
  verify?: string;
}

/** The rules an index was built under: a file built under other rules is rebuilt (new problems, new refusals). */
export const INDEX_RULES = 2;

interface StoredIndex {
  rules?: number;
  options: IndexOptions;
  index: CommitIndex;
}

const sameOptions = (a: IndexOptions, b: IndexOptions) =>
  a.strictNames === b.strictNames &&
  JSON.stringify(a.paths) === JSON.stringify(b.paths) &&
  a.verify === b.verify;

/** Index files of one source: `<dir>/<commit>.json`, written atomically (temp file, fsync, rename). */
export function indexStore(dir: string) {
  const fileOf = (commit: string) => path.join(dir, `${commit}.json`);
  return {
    async save(index: CommitIndex, options: IndexOptions): Promise<void> {
      await writeFileAtomic(
        fileOf(index.commit),
        JSON.stringify({ rules: INDEX_RULES, options, index } satisfies StoredIndex),
      );
    },
    /** The stored index, or `undefined` when it is missing, unreadable, half-written or built with other options. */
    async load(commit: string, options: IndexOptions): Promise<CommitIndex | undefined> {
      let stored: StoredIndex;
      try {
        stored = JSON.parse(await fsp.readFile(fileOf(commit), 'utf8')) as StoredIndex;
      } catch {
        return undefined;
      }
      const index = stored?.index;
      if (
        index?.version !== INDEX_VERSION ||
        index.commit !== commit ||
        typeof index.tree !== 'string' ||
        !Array.isArray(index.skills) ||
        !Array.isArray(index.problems)
      )
        return undefined;
      if (stored.rules !== INDEX_RULES) return undefined;
      if (stored.options === undefined || !sameOptions(stored.options, options)) return undefined;
      return index;
    },
    async remove(commit: string): Promise<void> {
      await fsp.rm(fileOf(commit), { force: true });
    },
  };
}
export type IndexStore = ReturnType<typeof indexStore>;
