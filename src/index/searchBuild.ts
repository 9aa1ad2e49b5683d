import { setImmediate as nextTurn } from 'node:timers/promises';
import { type Postings, PostingsBuilder } from './postings.ts';
import { bodyText, skillTerms, WordTerms } from './terms.ts';
import type { CommitIndex } from './types.ts';

/** SKILL.md files read at once while a search index is built. */
const READS_AT_ONCE = 32;
/**
 * Milliseconds a search index build runs before it lets other work in (requests, timers): it tokenises every
 * SKILL.md (about 0.2 ms each), so a build of 100,000 skills would otherwise hold the thread for 20 s.
 */
export const SEARCH_BUILD_SLICE_MS = 10;

/** One skill as its search index reads it: name, description, and its SKILL.md blob. */
export interface SearchInput {
  readonly name: string;
  readonly description: string;
  /** Its SKILL.md blob; undefined: indexed by name and description only. */
  readonly blob: string | undefined;
}

/** Where a build gets SKILL.md bodies: as the indexer read them while still held, else from the blob. */
export interface BodySource {
  held?(blob: string): string | undefined;
  read(blob: string): Promise<Uint8Array>;
}

/** A search index of one commit's served skills (ids: positions in the list it was built from). */
export interface SearchData {
  readonly postings: Postings;
  /** Skills whose SKILL.md could not be read: indexed by name and description only. */
  readonly unread: number;
  /** Skills indexed by their first terms only. */
  readonly cut: number;
  /** It was read from its file in dataDir, not built. */
  readonly stored?: boolean;
}

/** The skills of a commit's index as a search build reads them, in the index's order. */
export function searchInputs(index: Pick<CommitIndex, 'skills'>): SearchInput[] {
  return index.skills.map((skill) => ({
    name: skill.name,
    description: String(skill.frontmatter['description']),
    blob: skill.files.find((file) => file.relPath === 'SKILL.md')?.blob,
  }));
}

/** The body of a SKILL.md, or undefined when it cannot be read (the skill is still indexed). */
async function bodyOf(bodies: BodySource, blob: string | undefined): Promise<string | undefined> {
  if (blob === undefined) return undefined;
  const held = bodies.held?.(blob);
  if (held !== undefined) return held;
  try {
    return bodyText(await bodies.read(blob));
  } catch {
    return undefined;
  }
}

/**
 * Builds the search index of `skills` (name and description, SKILL.md headings and text), READS_AT_ONCE bodies
 * at a time, yielding the thread every SEARCH_BUILD_SLICE_MS: no body outlives its batch, no request waits long.
 */
export async function buildSearchData(
  skills: readonly SearchInput[],
  bodies: BodySource,
): Promise<SearchData> {
  const builder = new PostingsBuilder();
  // One memo for the build: the catalog's words are stemmed once, and forgotten with it.
  const words = new WordTerms();
  let unread = 0;
  let slice = performance.now();
  for (let start = 0; start < skills.length; start += READS_AT_ONCE) {
    const batch = skills.slice(start, start + READS_AT_ONCE);
    const read = await Promise.all(batch.map((skill) => bodyOf(bodies, skill.blob)));
    for (const [offset, skill] of batch.entries()) {
      if (read[offset] === undefined && skill.blob !== undefined) unread++;
      builder.add(start + offset, skillTerms(skill.name, skill.description, read[offset], words));
    }
    if (performance.now() - slice > SEARCH_BUILD_SLICE_MS) {
      await nextTurn();
      slice = performance.now();
    }
  }
  return { postings: builder.done(), unread, cut: builder.cut };
}
