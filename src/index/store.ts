import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { FileRefusedError, readBounded } from '../shared/boundedRead.ts';
import { writeFileAtomic } from '../shared/fs.ts';
import { MAX_LISTED_BYTES } from '../skills/index.ts';
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

/**
 * An index file lists what a commit's skills list, which MAX_LISTED_BYTES bounds (each file's path plus 64), with
 * its digest and size (about 100 bytes more in JSON), and each skill's frontmatter: past this it is damaged.
 */
export const INDEX_FILE_MAX_BYTES = 4 * MAX_LISTED_BYTES;

interface StoredIndex {
  rules?: number;
  options: IndexOptions;
  index: CommitIndex;
}

const sameOptions = (a: IndexOptions, b: IndexOptions) =>
  a.strictNames === b.strictNames &&
  JSON.stringify(a.paths) === JSON.stringify(b.paths) &&
  a.verify === b.verify;

/**
 * Index files of one source: `<dir>/<commit>.json`, written atomically (temp file, fsync, rename). One larger
 * than INDEX_FILE_MAX_BYTES (or not a regular file) is not read: told to `refused`, and rebuilt like a missing one.
 */
export function indexStore(dir: string, refused?: (error: FileRefusedError) => void) {
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
        stored = JSON.parse(await readBounded(fileOf(commit), INDEX_FILE_MAX_BYTES)) as StoredIndex;
      } catch (error) {
        if (error instanceof FileRefusedError) refused?.(error);
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
