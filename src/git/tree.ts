import git from 'isomorphic-git';
import { messageOf } from '../shared/text.ts';
import type { TreeEntry } from '../shared/tree.ts';
import { GitError } from './errors.ts';
import { withRefresh, type Repository } from './repository.ts';

export interface CommitTree {
  commit: string;
  /** Committer time, ISO 8601 UTC. */
  commitTime: string;
  entries: TreeEntry[];
}

const MODE_TREE = '040000';
const MODE_EXECUTABLE = '100755';
const MODE_SYMLINK = '120000';
const MODE_SUBMODULE = '160000';

interface RawTreeItem {
  mode: string;
  path: string;
  oid: string;
}

const lossyUtf8 = new TextDecoder('utf-8');

/**
 * A tree's entries, parsed from the raw object. isomorphic-git's own tree parser refuses names it deems
 * unsafe (a backslash, for one) and so the whole commit; here such names are data, reported and left out by
 * the skill rules. Bytes that are not UTF-8 decode to U+FFFD, which the rules also report.
 */
async function readTreeItems(repo: Repository, oid: string): Promise<RawTreeItem[]> {
  const { type, object } = await git.readObject({
    fs: repo.fs,
    gitdir: repo.gitdir,
    cache: repo.cache,
    oid,
    format: 'content',
  });
  if (type !== 'tree' || !(object instanceof Uint8Array))
    throw new Error(`object ${oid} is a ${type}, not a tree`);
  const items: RawTreeItem[] = [];
  let at = 0;
  while (at < object.length) {
    const space = object.indexOf(0x20, at);
    const nul = object.indexOf(0x00, space + 1);
    if (space === -1 || nul === -1 || nul + 21 > object.length) throw new Error(`tree ${oid} is malformed`);
    const mode = lossyUtf8.decode(object.subarray(at, space)).padStart(6, '0');
    items.push({
      mode,
      path: lossyUtf8.decode(object.subarray(space + 1, nul)),
      oid: Buffer.from(object.subarray(nul + 1, nul + 21)).toString('hex'),
    });
    at = nul + 21;
  }
  return items;
}

/** Flattened entries of trees by tree id, relative to that tree: a tree id names its content, so reuse is exact. */
export type TreeCache = Map<string, readonly TreeEntry[]>;

/**
 * Every entry of `commit`'s tree, in git's order. Throws `source-incomplete` when any object is missing.
 * Subtrees found in `previous` (the cache of an earlier walk) are not read again; the returned cache holds
 * this commit's trees only, so it stays the size of one tree.
 */
export async function walkCommit(
  repo: Repository,
  commit: string,
  previous?: TreeCache,
): Promise<CommitTree & { trees: TreeCache }> {
  let info: Awaited<ReturnType<typeof git.readCommit>>;
  try {
    info = await withRefresh(repo, () =>
      git.readCommit({ fs: repo.fs, gitdir: repo.gitdir, cache: repo.cache, oid: commit }),
    );
  } catch (error) {
    throw new GitError(
      'source-commit-not-found',
      `commit ${commit} is not in the repository (${messageOf(error)})`,
      { cause: error },
    );
  }
  const trees: TreeCache = new Map();
  const flatten = async (treeId: string): Promise<readonly TreeEntry[]> => {
    const known = trees.get(treeId) ?? previous?.get(treeId);
    if (known !== undefined) {
      trees.set(treeId, known);
      return known;
    }
    let tree: RawTreeItem[];
    try {
      tree = await withRefresh(repo, () => readTreeItems(repo, treeId));
    } catch (error) {
      throw new GitError(
        'source-incomplete',
        `tree ${treeId} of commit ${commit} is missing (${messageOf(error)})`,
        { cause: error },
      );
    }
    const entries: TreeEntry[] = [];
    for (const item of tree) {
      if (item.mode === MODE_TREE) {
        for (const child of await flatten(item.oid))
          entries.push({ ...child, path: `${item.path}/${child.path}` });
      } else if (item.mode === MODE_SUBMODULE)
        entries.push({ path: item.path, type: 'submodule', id: item.oid });
      else if (item.mode === MODE_SYMLINK) {
        const target = new TextDecoder().decode(await readBlob(repo, item.oid));
        entries.push({ path: item.path, type: 'symlink', id: item.oid, target });
      } else
        entries.push({
          path: item.path,
          type: 'file',
          id: item.oid,
          ...(item.mode === MODE_EXECUTABLE ? { executable: true } : {}),
        });
    }
    trees.set(treeId, entries);
    return entries;
  };
  const entries = [...(await flatten(info.commit.tree))];
  const seconds = info.commit.committer.timestamp;
  return { commit, commitTime: new Date(seconds * 1000).toISOString(), entries, trees };
}

/** A blob's raw bytes. */
export async function readBlob(repo: Repository, oid: string): Promise<Uint8Array> {
  try {
    const { blob } = await withRefresh(repo, () =>
      git.readBlob({ fs: repo.fs, gitdir: repo.gitdir, cache: repo.cache, oid }),
    );
    return blob;
  } catch (error) {
    throw new GitError('source-incomplete', `blob ${oid} is missing (${messageOf(error)})`, { cause: error });
  }
}

/**
 * The commit's trees (as a cache for the next walk) when the commit and every tree under it are present,
 * `undefined` otherwise. Trees in `known` were seen complete before and are not read again. Blobs are not
 * inflated here: indexing reads and hashes every blob a skill serves, and a missing one fails the index with
 * `source-incomplete`.
 */
export async function completeCommit(
  repo: Repository,
  commit: string,
  known?: TreeCache,
): Promise<TreeCache | undefined> {
  try {
    return (await walkCommit(repo, commit, known)).trees;
  } catch {
    return undefined;
  }
}
