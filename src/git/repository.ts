import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import { GitError } from './errors.ts';

/** A git object store: where it is, and isomorphic-git's pack cache for it. */
export interface Repository {
  gitdir: string;
  /** isomorphic-git's shared cache (parsed pack indexes); one per repository, reused across calls. */
  cache: object;
}

async function isGitdir(dir: string): Promise<boolean> {
  try {
    const [head, objects] = await Promise.all([fsp.stat(path.join(dir, 'HEAD')), fsp.stat(path.join(dir, 'objects'))]);
    return head.isFile() && objects.isDirectory();
  } catch {
    return false;
  }
}

/** Opens a local repository in place: a work tree (with `.git`) or a bare repository. Nothing is written. */
export async function openLocalRepository(location: string): Promise<Repository> {
  const dotGit = path.join(location, '.git');
  if (await isGitdir(dotGit)) return { gitdir: dotGit, cache: {} };
  if (await isGitdir(location)) return { gitdir: location, cache: {} };
  throw new GitError('source-not-a-repository', `${path.basename(location) || location} is not a git repository (no .git folder, and not a bare repository)`);
}

/** Opens (creating if needed) the bare repository skillpin keeps for a remote source. */
export async function openStore(gitdir: string): Promise<Repository> {
  if (!(await isGitdir(gitdir))) {
    await fsp.mkdir(gitdir, { recursive: true });
    await git.init({ fs, gitdir, bare: true, defaultBranch: 'main' });
    // isomorphic-git's fetch needs a refspec for its remote; the URL is always passed per call, never stored.
    await git.setConfig({ fs, gitdir, path: 'remote.origin.fetch', value: '+refs/heads/*:refs/remotes/origin/*' });
  }
  return { gitdir, cache: {} };
}
