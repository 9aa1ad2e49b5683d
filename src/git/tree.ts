import * as fs from 'node:fs';
import git from 'isomorphic-git';
import { GitError, messageOf } from './errors.ts';
import type { Repository } from './repository.ts';

/** One entry of a commit's tree (blobs, symlinks, submodules; folders are implied by paths). */
export interface TreeEntry {
  path: string;
  type: 'file' | 'symlink' | 'submodule';
  /** Blob id (files, symlinks) or commit id (submodules). */
  id: string;
  executable?: boolean;
  /** A symlink's target text, read from its blob. */
  target?: string;
}

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

/** Every entry of `commit`'s tree, in git's order. Throws `source-incomplete` when any object is missing. */
export async function walkCommit(repo: Repository, commit: string): Promise<CommitTree> {
  let info: Awaited<ReturnType<typeof git.readCommit>>;
  try {
    info = await git.readCommit({ fs, gitdir: repo.gitdir, cache: repo.cache, oid: commit });
  } catch (error) {
    throw new GitError('source-commit-not-found', `commit ${commit} is not in the repository (${messageOf(error)})`, { cause: error });
  }
  const entries: TreeEntry[] = [];
  const visit = async (treeId: string, prefix: string): Promise<void> => {
    let tree: Awaited<ReturnType<typeof git.readTree>>;
    try {
      tree = await git.readTree({ fs, gitdir: repo.gitdir, cache: repo.cache, oid: treeId });
    } catch (error) {
      throw new GitError('source-incomplete', `tree ${treeId} of commit ${commit} is missing (${messageOf(error)})`, { cause: error });
    }
    for (const item of tree.tree) {
      const path = prefix === '' ? item.path : `${prefix}/${item.path}`;
      if (item.mode === MODE_TREE) await visit(item.oid, path);
      else if (item.mode === MODE_SUBMODULE) entries.push({ path, type: 'submodule', id: item.oid });
      else if (item.mode === MODE_SYMLINK) {
        const target = new TextDecoder().decode(await readBlob(repo, item.oid));
        entries.push({ path, type: 'symlink', id: item.oid, target });
      } else entries.push({ path, type: 'file', id: item.oid, ...(item.mode === MODE_EXECUTABLE ? { executable: true } : {}) });
    }
  };
  await visit(info.commit.tree, '');
  const seconds = info.commit.committer.timestamp;
  return { commit, commitTime: new Date(seconds * 1000).toISOString(), entries };
}

/** A blob's raw bytes. */
export async function readBlob(repo: Repository, oid: string): Promise<Uint8Array> {
  try {
    const { blob } = await git.readBlob({ fs, gitdir: repo.gitdir, cache: repo.cache, oid });
    return blob;
  } catch (error) {
    throw new GitError('source-incomplete', `blob ${oid} is missing (${messageOf(error)})`, { cause: error });
  }
}

/** True when the commit, every tree under it and every blob it names are present. */
export async function hasCompleteCommit(repo: Repository, commit: string): Promise<boolean> {
  try {
    const { entries } = await walkCommit(repo, commit);
    for (const entry of entries) {
      if (entry.type === 'submodule') continue;
      await git.readObject({ fs, gitdir: repo.gitdir, cache: repo.cache, oid: entry.id, format: 'deflated' });
    }
    return true;
  } catch {
    return false;
  }
}
