import { constants, promises as fsp } from 'node:fs';
import path from 'node:path';
import type { TreeEntry } from '../shared/tree.ts';
import { GitError } from './errors.ts';
import type { GitObject, ObjectType } from './objects.ts';

/** The two ways skillpin runs git: the git binary, or isomorphic-git in this process. */
export type BackendName = 'cli' | 'isomorphic';

/** How to reach a remote: its URL and, for private repositories, how to authenticate (never logged, never stored). */
export interface Remote {
  url: string;
  /** Sent as the HTTP basic-auth password. */
  token?: string;
  /** A git credential helper (as git's `credential.helper`) asked instead of a token; cli backend only. */
  credentialHelper?: string;
  /** No progress for this long fails the transfer (`source-timeout`). */
  timeoutMs?: number;
  /** One transfer (a ref listing, a fetch) still running this long fails, however it moves (`source-timeout`). */
  deadlineMs?: number;
  /** A fetch that brings more bytes than this fails (`source-too-large`) and leaves nothing behind. */
  maxFetchBytes?: number;
  /** A fetch whose pack holds more objects than this fails (`source-too-large`) and leaves nothing behind. */
  maxFetchObjects?: number;
  /**
   * `follow` (default): the first request of a transfer follows redirects, credentials only ever go to the
   * configured origin, https to http is refused; `refuse`: any redirect fails (`source-redirect-refused`).
   */
  redirects?: 'follow' | 'refuse';
}

export interface FetchProgress {
  phase: string;
  loaded: number;
  total: number;
  /** Bytes received so far, when the backend knows. */
  bytes?: number;
}

/** What a fetch asks of a backend's transport. */
export interface TransferOptions {
  /** A commit the store holds and the remote probably has: only what it lacks is sent. */
  have?: string;
  /** An annotated tag object (of the wanted commit) to fetch too: what `verify.require: tag` checks. */
  tag?: string;
  /** Leave out every blob (partial clone); they are fetched by id afterwards. */
  blobless?: boolean;
  onProgress?: (progress: FetchProgress) => void;
}

/** A ref on a remote: its value and, for an annotated tag, the commit it peels to. */
export interface RemoteRef {
  name: string;
  oid: string;
  peeled?: string;
}

/** Whether `names` (full names, or prefixes ending in `/`) asks for the ref `name`. */
export function wantedRef(names: readonly string[], name: string): boolean {
  return names.some((wanted) => (wanted.endsWith('/') ? name.startsWith(wanted) : name === wanted));
}

/**
 * One repository opened through one backend: the few operations everything else in `git/` is built on. Every
 * object is returned as bytes and parsed by our own code, so both backends serve exactly the same trees.
 */
export interface Repository {
  readonly gitdir: string;
  readonly backend: BackendName;
  /** Whether `fetchBlobs` works (partial clone): then a fetch may leave out blobs outside the served paths. */
  readonly partial: boolean;
  /** The object's type and bytes, or `undefined` when the repository does not hold it. */
  readObject(oid: string): Promise<GitObject | undefined>;
  /**
   * Reads `oids` in order, each answer handed to `each` as it arrives (`undefined` for one the repository does
   * not hold): for a backend that streams them (one stream, its answers used as they come: memory is one object),
   * with no promise per object. Answers come in the order asked, unless `refresh` is called meanwhile (the
   * reader before it may answer after the one after it).
   */
  readEach?(
    oids: readonly string[],
    each: (oid: string, found: GitObject | undefined) => void,
  ): Promise<void>;
  /** The ids among `oids` that the store does not hold now (asked of it as it is on disk); content is not read. */
  missingObjects(oids: readonly string[]): Promise<string[]>;
  /**
   * Each object's size from its header (content not inflated); `undefined` for one the repository lacks, as the
   * backend's reader sees it: a long-lived reader may still read a pack removed since it opened it.
   */
  objectSizes(oids: readonly string[]): Promise<Array<number | undefined>>;
  /**
   * Every entry of `commit`'s tree at once, in git's order, as a walk tree by tree flattens them (symlink targets
   * not read), each blob the store holds with its `size`: for a backend that lists a whole tree faster than it
   * reads its trees one by one. Past MAX_TREE_ENTRIES entries, MAX_TREE_LISTING_BYTES of listing or a tree over
   * MAX_OBJECT_BYTES it throws `source-too-large`; a missing or unreadable commit or tree is another error.
   */
  listTree?(commit: string): Promise<TreeEntry[]>;
  /** Ids of the objects whose id starts with `prefix` (4 to 39 hex digits); for short ids a user types. */
  objectsWithPrefix(prefix: string): Promise<string[]>;
  /** What a ref names, symbolic refs followed; `undefined` when there is no such ref. */
  readRef(name: string): Promise<string | undefined>;
  /**
   * What a ref names, as readRef, and that object's type where the backend learns it with the ref without reading
   * the object (the cli backend's `for-each-ref` says it): a branch then resolves to its commit with no object read,
   * so no object reader is started (resolveLocalTarget).
   */
  refTarget(name: string): Promise<{ oid: string; type?: ObjectType } | undefined>;
  writeRef(name: string, oid: string): Promise<void>;
  deleteRef(name: string): Promise<void>;
  /**
   * The refs of `names` (full names; one ending in `/` names every ref below it) that the remote has, annotated
   * tags with their peeled commit.
   */
  listRemoteRefs(remote: Remote, names: readonly string[]): Promise<RemoteRef[]>;
  /** Every ref of this repository below one of `prefixes` (each ending in `/`), with what it names (not peeled). */
  listRefs(prefixes: readonly string[]): Promise<Array<{ name: string; oid: string }>>;
  /** Transfers `commit` at depth 1 into this repository; throws a GitError naming what failed. */
  fetch(remote: Remote, commit: string, options: TransferOptions): Promise<void>;
  /** Transfers blobs by id into a store fetched `blobless`. */
  fetchBlobs(remote: Remote, oids: readonly string[], options: TransferOptions): Promise<void>;
  /**
   * Forgets what is remembered about the object store: another program (git gc, a push) may have rewritten it.
   * Reads under way are answered all the same; a read asked after it sees the store as it is then.
   */
  refresh(): void;
  /** Ends helper processes and closes files; a later call opens them again. */
  close(): Promise<void>;
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

/**
 * The git directory of a work tree (with `.git`) or of a bare repository; never a parent's. `label` is the path
 * as the user gave it, for the message.
 */
export async function gitdirOf(location: string, label: string = location): Promise<string> {
  const dotGit = path.join(location, '.git');
  if (await isGitdir(dotGit)) return dotGit;
  if (await isGitdir(location)) return location;
  if (
    !(await fsp.stat(location).then(
      () => true,
      () => false,
    ))
  )
    throw new GitError(
      'source-not-a-repository',
      `${label} does not exist (looked for ${path.resolve(location)})`,
    );
  // A folder (or its .git) this user may not read is no proof there is no repository.
  const denied = await Promise.all(
    [location, dotGit].map((dir) =>
      fsp.access(dir, constants.R_OK | constants.X_OK).then(
        () => false,
        (error: NodeJS.ErrnoException) => error.code === 'EACCES',
      ),
    ),
  );
  if (denied.includes(true))
    throw new GitError('source-not-a-repository', `${label} cannot be read (permission denied)`);
  throw new GitError(
    'source-not-a-repository',
    `${label} is not a git repository (no .git folder, and not a bare repository)`,
  );
}

/** The repository holding `dir`: itself, or the nearest folder above it with a `.git` (as git finds it). */
export async function repositoryRootOf(dir: string): Promise<string | undefined> {
  const start = path.resolve(dir);
  // A folder that is not there is no subfolder of anything: it is reported as given.
  if (
    !(await fsp.stat(start).then(
      (stat) => stat.isDirectory(),
      () => false,
    ))
  )
    return undefined;
  if (await isGitdir(start)) return start;
  for (let at = start; ; at = path.dirname(at)) {
    if (await isGitdir(path.join(at, '.git'))) return at;
    if (path.dirname(at) === at) return undefined;
  }
}

/** The ref skillpin writes so that a fetched commit stays reachable in its store. */
export function pinRef(commit: string): string {
  return `refs/skillpin/pins/${commit}`;
}

/** The ref that keeps the verified annotated tag of a commit in its store. */
export function tagPinRef(commit: string): string {
  return `refs/skillpin/tags/${commit}`;
}

/** Whether `gitdir` holds a repository already (a store made by an earlier run). */
export const isRepository = isGitdir;
