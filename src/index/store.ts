import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { FileRefusedError, readBounded, readBoundedBytes } from '../shared/boundedRead.ts';
import { makeDirectory, writeFileAtomic } from '../shared/fs.ts';
import { MAX_LISTED_BYTES } from '../skills/index.ts';
import { MAX_INDEX_POSTINGS, MAX_INDEX_TERMS, MAX_SKILL_TERMS, MIN_SKILL_TERMS } from './postings.ts';
import type { SearchData } from './searchBuild.ts';
import { decodeSearch, encodeSearch } from './searchFile.ts';
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

/** Bytes of terms a search file may hold (the term table is bounded by MAX_INDEX_TERMS, each term by a body). */
const MAX_TERM_BYTES = 64 * 1024 * 1024;

/**
 * The largest search file of an index of `skills` skills: its postings as bounded by postings.ts (MAX_INDEX_POSTINGS,
 * then MIN_SKILL_TERMS a skill), its terms by MAX_TERM_BYTES. A larger file is not read (dataDir is read bounded).
 */
export function maxSearchFileBytes(skills: number): number {
  const pairs = MAX_INDEX_POSTINGS + MAX_SKILL_TERMS + skills * MIN_SKILL_TERMS;
  return 64 * 1024 + (MAX_INDEX_TERMS + 1 + skills) * 4 + pairs * 5 + MAX_TERM_BYTES;
}

/** The rules and options an index file was built under: its search file names them, and is for that file only. */
const builtFrom = (options: IndexOptions) =>
  JSON.stringify({ version: INDEX_VERSION, rules: INDEX_RULES, options });

/** The search file beside an index file. */
const searchBeside = (file: string) => `${file.slice(0, -'.json'.length)}.search`;

/** Whether two paths name one file (a hard link). */
async function sameFile(a: string, b: string): Promise<boolean> {
  const [x, y] = await Promise.all([a, b].map((file) => fsp.stat(file).catch(() => undefined)));
  return x !== undefined && y !== undefined && x.dev === y.dev && x.ino === y.ino;
}

/** `to` made a hard link of `from`, in one rename; false when it cannot be (`from` gone, another file system). */
async function linkAtomic(from: string, to: string): Promise<boolean> {
  const temp = `${to}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await makeDirectory(path.dirname(to));
    await fsp.link(from, temp);
    await fsp.rename(temp, to);
    return true;
  } catch {
    await fsp.rm(temp, { force: true }).catch(() => undefined);
    return false;
  }
}

/**
 * Index files of one source: `<dir>/<commit>.json`, and beside it `<commit>.search`, the search index built from
 * it; each written atomically (temp file, fsync, rename). A new index file removes the search file first. An index
 * file larger than INDEX_FILE_MAX_BYTES (or not a regular file) is not read: told to `refused`, and rebuilt like a
 * missing one; a search file past maxSearchFileBytes is rebuilt too.
 */
export function indexStore(dir: string, refused?: (error: FileRefusedError) => void) {
  const fileOf = (commit: string) => path.join(dir, `${commit}.json`);
  const searchFileOf = (commit: string) => searchBeside(fileOf(commit));
  const save = async (index: CommitIndex, options: IndexOptions): Promise<void> => {
    await fsp.rm(searchFileOf(index.commit), { force: true });
    await writeFileAtomic(
      fileOf(index.commit),
      JSON.stringify({ rules: INDEX_RULES, options, index } satisfies StoredIndex),
    );
  };
  return {
    /** The index file of `commit`. */
    file: fileOf,
    save,
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
    /**
     * Makes `file` (another source's index file of the same commit under the same options, as `index` was read from
     * or saved to) this store's index file too: hard-linked with its search file, so that it is held once on disk and
     * each source's retention removes only its own name; written anew where it cannot be linked (gone, another
     * file system). Nothing is done when this store's file is that file already (and is there: a file of this
     * store that retention removed is written again).
     */
    async adopt(file: string, index: CommitIndex, options: IndexOptions): Promise<void> {
      const own = fileOf(index.commit);
      if (await sameFile(own, file)) return;
      await fsp.rm(searchFileOf(index.commit), { force: true });
      if (!(await linkAtomic(file, own))) return save(index, options);
      await linkAtomic(searchBeside(file), searchFileOf(index.commit));
    },
    async remove(commit: string): Promise<void> {
      await fsp.rm(searchFileOf(commit), { force: true });
      await fsp.rm(fileOf(commit), { force: true });
    },
    /** Saves the search index built from `index` (the index file saved under `options`). */
    async saveSearch(index: CommitIndex, options: IndexOptions, data: SearchData): Promise<void> {
      await writeFileAtomic(searchFileOf(index.commit), encodeSearch(index.commit, builtFrom(options), data));
    },
    /**
     * The search index saved for `index` (loaded under `options`), or undefined when it is missing, larger than
     * maxSearchFileBytes or no regular file (told to `refused`), damaged, of another format, or built from another
     * index file.
     */
    async loadSearch(index: CommitIndex, options: IndexOptions): Promise<SearchData | undefined> {
      const bytes = await readBoundedBytes(
        searchFileOf(index.commit),
        maxSearchFileBytes(index.skills.length),
      ).catch((error: unknown) => {
        if (error instanceof FileRefusedError) refused?.(error);
        return undefined;
      });
      const read = bytes === undefined ? undefined : decodeSearch(bytes);
      if (read === undefined) return undefined;
      const { header } = read;
      const fits =
        header.commit === index.commit &&
        header.skills === index.skills.length &&
        header.builtFrom === builtFrom(options);
      return fits ? read.data : undefined;
    },
  };
}
export type IndexStore = ReturnType<typeof indexStore>;
