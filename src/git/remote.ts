import { packNames, removePacksSince } from './cleanup.ts';
import { GitError } from './errors.ts';
import { transportFailure } from './failure.ts';
import { pinRef, tagPinRef, type FetchProgress, type Remote, type Repository } from './repository.ts';
import type { TreeEntry } from '../shared/tree.ts';
import { listCommit, type TreeCache, withTargets } from './tree.ts';
import { redactUrl } from './url.ts';

export interface FetchOptions {
  /** A commit the store holds: the remote is told so and sends only what the store lacks. */
  have?: string;
  /** The cache of an earlier walk: unchanged trees are not read again. */
  trees?: TreeCache;
  /** An annotated tag pointing at the commit, fetched and kept beside it (for `verify.require: tag`). */
  tag?: string;
  /** Folders the source serves skills from; with a backend that can, only their blobs are fetched. */
  paths?: readonly string[];
  /**
   * With `paths`: the folders outside them whose blobs are served too, from the commit's entries (the targets of the
   * symlinks the store holds read): the skills that symlinks under `paths` lead to.
   */
  linked?: Linked;
  onProgress?: (progress: FetchProgress) => void;
}

export type Linked = (entries: readonly TreeEntry[]) => readonly string[];

const under = (paths: readonly string[]) => (file: string) =>
  paths.length === 0 || paths.some((dir) => file === dir || file.startsWith(`${dir}/`));

/** The sizes of the objects the store holds now; `undefined` for one it lacks. */
async function heldSizes(repo: Repository, ids: readonly string[]): Promise<Array<number | undefined>> {
  const missing = new Set(await repo.missingObjects(ids));
  const sizes = await repo.objectSizes(ids);
  return sizes.map((size, i) => (missing.has(ids[i]!) ? undefined : size));
}

/**
 * What the commit still lacks in `repo`: `undefined` when the commit or one of its trees is missing, else the
 * blobs that are served (under `paths`, and every symlink, whose target the walk reads) but not held. A blob over
 * MAX_OBJECT_BYTES may be held (a transfer keeps it within MAX_LARGE_BLOB_BYTES); it is never read, and the skill
 * holding it is refused from its size.
 */
async function lacking(
  repo: Repository,
  commit: string,
  paths: readonly string[],
  known?: TreeCache,
  linked?: Linked,
): Promise<{ trees: TreeCache; blobs: string[] } | undefined> {
  let listed: Awaited<ReturnType<typeof listCommit>>;
  try {
    listed = await listCommit(repo, commit, known);
  } catch (error) {
    // A tree past the listing's limits is there, and too large: not a commit to fetch again.
    if (error instanceof GitError && error.code === 'source-too-large') throw error;
    return undefined;
  }
  const served = under([...paths, ...(await linkedFolders(repo, listed.entries, paths, linked))]);
  const needed = listed.entries.filter(
    (entry) => entry.type === 'symlink' || (entry.type === 'file' && served(entry.path)),
  );
  const listedSizes = new Map(needed.map((entry) => [entry.id, entry.size]));
  const ids = [...listedSizes.keys()];
  // A listing made now says which blobs are held and their sizes; else the store is asked as it is now (a reader
  // may still see a pack removed since it opened it), then the sizes of those it holds.
  const sizes = listed.listedNow ? ids.map((id) => listedSizes.get(id)) : await heldSizes(repo, ids);
  return { trees: listed.trees, blobs: ids.filter((_, i) => sizes[i] === undefined) };
}

/** The folders `linked` names from the entries, with the targets of the symlinks the store holds. */
async function linkedFolders(
  repo: Repository,
  entries: readonly TreeEntry[],
  paths: readonly string[],
  linked: Linked | undefined,
): Promise<readonly string[]> {
  if (linked === undefined || paths.length === 0) return [];
  const links = entries.filter((entry) => entry.type === 'symlink');
  if (links.length === 0) return [];
  const missing = new Set(await repo.missingObjects(links.map((link) => link.id)));
  const held = links.filter((link) => !missing.has(link.id));
  return linked(await withTargets(repo, entries, held));
}

/**
 * Fetches exactly `commit` (depth 1, one want) into `repo` and pins it with a local ref. With `have` the remote
 * sends only the objects the store lacks. With `paths` and a backend that can (partial clone), the commit comes
 * without blobs, then only the blobs under `paths` follow. The commit, its trees and the blobs it serves are
 * checked to be present before the pin is written. Returns the commit's trees, for the walk that follows.
 */
export async function fetchCommit(
  repo: Repository,
  remote: Remote,
  commit: string,
  options: FetchOptions = {},
): Promise<TreeCache> {
  const paths = options.paths ?? [];
  const transfer = { have: options.have, onProgress: options.onProgress };
  const tagMissing = async () =>
    options.tag !== undefined && (await repo.missingObjects([options.tag])).length > 0;
  const lacks = (trees?: TreeCache) => lacking(repo, commit, paths, trees, options.linked);
  let state = await lacks(options.trees);
  const fetched = state === undefined || (await tagMissing()) ? await packNames(repo.gitdir) : undefined;
  try {
    if (state === undefined || fetched !== undefined) {
      await repo.fetch(remote, commit, {
        ...transfer,
        tag: options.tag,
        blobless: repo.partial && paths.length > 0,
      });
      state = await lacks(options.trees);
      if (state === undefined)
        throw transportFailure('source-commit-not-found', `fetching ${commit} from ${redactUrl(remote.url)}`);
      if (await tagMissing())
        throw new GitError('source-incomplete', `the remote did not send tag object ${options.tag}`);
    }
    // A second round fetches what the first made known: the folders symlinks lead to, once their targets are held.
    const asked = new Set<string>();
    for (;;) {
      const wanted = state.blobs.filter((id) => !asked.has(id));
      if (wanted.length === 0 || !repo.partial) break;
      for (const id of wanted) asked.add(id);
      await repo.fetchBlobs(remote, wanted, transfer);
      state = (await lacks(state.trees)) ?? state;
    }
    if (state.blobs.length > 0)
      throw new GitError(
        'source-incomplete',
        `${redactUrl(remote.url)} did not send ${state.blobs.length} blob(s) of commit ${commit}, such as ${state.blobs[0]}`,
      );
    await pinCommit(repo, commit, options.tag);
    return state.trees;
  } catch (error) {
    // What a refused transfer brought does not stay.
    if (fetched !== undefined) {
      await removePacksSince(repo.gitdir, fetched).catch(() => undefined);
      repo.refresh();
    }
    throw error;
  }
}

/** Pins a commit whose objects the store holds, and the annotated tag fetched for it when there is one. */
export async function pinCommit(repo: Repository, commit: string, tag?: string): Promise<void> {
  await repo.writeRef(pinRef(commit), commit);
  if (tag !== undefined) await repo.writeRef(tagPinRef(commit), tag);
}

/** Drops the pin of a commit that is no longer served. Its objects stay until the store is cleaned. */
export async function unpinCommit(repo: Repository, commit: string): Promise<void> {
  await repo.deleteRef(pinRef(commit));
  if ((await repo.readRef(tagPinRef(commit))) !== undefined) await repo.deleteRef(tagPinRef(commit));
}

/** The annotated tag kept beside a fetched commit, when one was fetched for it. */
export function pinnedTag(repo: Repository, commit: string): Promise<string | undefined> {
  return repo.readRef(tagPinRef(commit));
}
