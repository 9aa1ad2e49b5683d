import { promises as fsp } from 'node:fs';
import * as fs from 'node:fs';
import path from 'node:path';
import git, { type PromiseFsClient } from 'isomorphic-git';
import { GitError } from './errors.ts';

/** A git object store: where it is, and isomorphic-git's pack cache for it. */
export interface Repository {
  gitdir: string;
  /** isomorphic-git's cache (parsed pack indexes, inflated objects); see CACHE_USES. */
  readonly cache: object;
  /** The file system isomorphic-git reads this repository through (see `objectStoreFs`). */
  fs: PromiseFsClient;
  /** Forgets what is remembered about pack files (the listing, parsed indexes): after a fetch, or when another
   * program (git gc, a push into a local repository) may have rewritten them. */
  refresh(): void;
}

/** One error for every loose object known to be absent: no system call, no stack captured (isomorphic-git only checks that reading failed). */
const NOT_LOOSE = Object.assign(new Error('no such loose object'), { code: 'ENOENT' });

/**
 * Node's fs for isomorphic-git, remembering what it asks again and again: the listing of `objects/pack`
 * (listed for every packed object it reads) and which loose objects exist (it tries the loose file before the
 * packs, for every object). Those two dominated the time of reading a packed repository. What is remembered
 * can go stale when another program writes the store; `forgetPacks` clears it, and reads that fail call it.
 */
function objectStoreFs(gitdir: string): { fs: PromiseFsClient; forgetPacks(): void } {
  const objectsDir = path.join(gitdir, 'objects');
  const packDir = path.join(objectsDir, 'pack');
  let packs: Promise<string[]> | undefined;
  let loose = new Map<string, Promise<Set<string>>>();
  const looseObject = (file: string) =>
    /^([0-9a-f]{2})\/([0-9a-f]{38})$/.exec(path.relative(objectsDir, path.resolve(file)));
  const readdir = (dir: string, options?: unknown) => {
    if (path.resolve(dir) !== packDir) return fsp.readdir(dir, options as undefined);
    packs ??= fsp.readdir(packDir).catch((error: unknown) => {
      packs = undefined;
      throw error;
    });
    return packs;
  };
  const readFile = async (file: string, options?: unknown) => {
    const object = looseObject(file);
    if (object !== null) {
      const [, fanout, rest] = object as unknown as [string, string, string];
      let names = loose.get(fanout);
      if (names === undefined)
        loose.set(
          fanout,
          (names = fsp.readdir(path.join(objectsDir, fanout)).then(
            (list) => new Set(list),
            () => new Set<string>(),
          )),
        );
      if (!(await names).has(rest)) throw NOT_LOOSE;
    }
    return fsp.readFile(file, options as undefined);
  };
  const writeFile = async (file: string, data: unknown, options?: unknown) => {
    const object = looseObject(file);
    if (object !== null) loose.delete(object[1]!);
    return fsp.writeFile(file, data as string, options as undefined);
  };
  const { mkdir, rmdir, unlink, stat, lstat, readlink, symlink, chmod } = fsp;
  return {
    fs: {
      promises: { readFile, writeFile, mkdir, rmdir, unlink, stat, lstat, readdir, readlink, symlink, chmod },
    },
    forgetPacks: () => {
      packs = undefined;
      loose = new Map();
    },
  };
}

/**
 * isomorphic-git's cache keeps every object it inflates from a pack for as long as the cache lives, so a
 * long-running server would grow to the size of everything it ever read. The cache is replaced after this
 * many uses: memory stays bounded, and a fresh one costs only re-reading the pack indexes.
 */
export const CACHE_USES = 2000;

function repository(gitdir: string): Repository {
  let cache = {};
  let uses = 0;
  const { fs, forgetPacks } = objectStoreFs(gitdir);
  return {
    gitdir,
    fs,
    get cache() {
      if (++uses > CACHE_USES) {
        cache = {};
        uses = 0;
      }
      return cache;
    },
    refresh() {
      forgetPacks();
      cache = {};
      uses = 0;
    },
  };
}

/**
 * Runs a read; if it fails, forgets what is known about the packs and tries once more. A store that another
 * program repacked (git gc in a local repository) then reads again, instead of failing until a restart.
 */
export async function withRefresh<T>(repo: Repository, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch {
    repo.refresh();
    return read();
  }
}

async function isGitdir(dir: string): Promise<boolean> {
  try {
    const [head, objects] = await Promise.all([
      fsp.stat(path.join(dir, 'HEAD')),
      fsp.stat(path.join(dir, 'objects')),
    ]);
    return head.isFile() && objects.isDirectory();
  } catch {
    return false;
  }
}

/** Opens a local repository in place: a work tree (with `.git`) or a bare repository. Nothing is written. */
export async function openLocalRepository(location: string): Promise<Repository> {
  const dotGit = path.join(location, '.git');
  if (await isGitdir(dotGit)) return repository(dotGit);
  if (await isGitdir(location)) return repository(location);
  throw new GitError(
    'source-not-a-repository',
    `${path.basename(location) || location} is not a git repository (no .git folder, and not a bare repository)`,
  );
}

/** Opens (creating if needed) the bare repository skillpin keeps for a remote source. */
export async function openStore(gitdir: string): Promise<Repository> {
  if (!(await isGitdir(gitdir))) {
    await fsp.mkdir(gitdir, { recursive: true });
    await git.init({ fs, gitdir, bare: true, defaultBranch: 'main' });
    // isomorphic-git's fetch needs a refspec for its remote; the URL is always passed per call, never stored.
    await git.setConfig({
      fs,
      gitdir,
      path: 'remote.origin.fetch',
      value: '+refs/heads/*:refs/remotes/origin/*',
    });
  }
  return repository(gitdir);
}
