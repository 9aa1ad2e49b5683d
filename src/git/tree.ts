import { messageOf } from '../shared/text.ts';
import type { TreeEntry } from '../shared/tree.ts';
import { GitError } from './errors.ts';
import { MAX_SYMLINK_TARGET_BYTES, MAX_TREE_ENTRIES, MAX_TREE_LISTING_BYTES } from './limits.ts';
import { type GitObject, parseCommit, parseTree, tooManyEntries, treeEntry } from './objects.ts';
import type { Repository } from './repository.ts';

export interface CommitTree {
  commit: string;
  /** Committer time, ISO 8601 UTC. */
  commitTime: string;
  /** The commit's root tree id. */
  tree: string;
  entries: TreeEntry[];
}

/**
 * Flattened entries of trees by tree id, relative to that tree (symlink targets not filled in): a tree id names
 * its content, so reuse is exact.
 */
export type TreeCache = Map<string, readonly TreeEntry[]>;

/**
 * Reads an object; if it is not there (or the read fails), forgets what is known about the store and tries once
 * more. A store that another program repacked (git gc in a local repository) then reads again.
 */
export async function readObject(repo: Repository, oid: string): Promise<GitObject | undefined> {
  try {
    const found = await repo.readObject(oid);
    if (found !== undefined) return found;
  } catch (error) {
    // One over MAX_OBJECT_BYTES would be refused again; any other failure is retried below.
    if (error instanceof GitError) throw error;
  }
  repo.refresh();
  return repo.readObject(oid);
}

async function readTyped(repo: Repository, oid: string, type: GitObject['type']): Promise<Buffer> {
  const found = await readObject(repo, oid);
  if (found === undefined) throw new Error(`object ${oid} is missing`);
  if (found.type !== type) throw new Error(`object ${oid} is a ${found.type}, not a ${type}`);
  return found.data;
}

/** A commit's root tree and committer time; `source-commit-not-found` when it is not a readable commit. */
export async function readCommit(
  repo: Repository,
  commit: string,
): Promise<{ tree: string; commitTime: string }> {
  try {
    const { tree, committerTime } = parseCommit(await readTyped(repo, commit, 'commit'), commit);
    return { tree, commitTime: new Date(committerTime * 1000).toISOString() };
  } catch (error) {
    if (error instanceof GitError) throw error;
    throw new GitError('source-commit-not-found', `commit ${commit} is not in the repository`, {
      cause: error,
      log: messageOf(error),
    });
  }
}

/** What `listCommit` gives: the commit's time, its root tree, every entry, and the trees read (by id). */
export interface CommitListing {
  commitTime: string;
  tree: string;
  entries: TreeEntry[];
  trees: TreeCache;
  /**
   * The entries come from a listing made now (`Repository.listTree`), which gives the size of every blob the
   * store holds: a blob entry without a size is one it lacks.
   */
  listedNow?: true;
}

/**
 * Every entry of `commit`'s tree in git's order, symlink targets not read (their blobs may not be fetched yet).
 * Subtrees found in `previous` are not read again; the returned cache holds this commit's trees only.
 */
export async function listCommit(
  repo: Repository,
  commit: string,
  previous?: TreeCache,
  options: {
    /**
     * The commit is expected in the store (a walk to index it): with nothing cached, its listing starts while the
     * commit is read. A probe of a store that may lack it does not pay for a listing that fails.
     */
    expected?: boolean;
  } = {},
): Promise<CommitListing> {
  if (repo.listTree !== undefined)
    return listedCommit(repo, repo.listTree, commit, previous, options.expected);
  const { tree: root, commitTime } = await readCommit(repo, commit);
  const trees: TreeCache = new Map();
  const entries = [...(await flatten(repo, commit, root, trees, previous))];
  return { commitTime, tree: root, entries, trees };
}

const unreadable = (commit: string, treeId: string, error: unknown) =>
  error instanceof GitError
    ? error
    : new GitError('source-incomplete', `tree ${treeId} of commit ${commit} is missing or unreadable`, {
        cause: error,
        log: messageOf(error),
      });

/** `listCommit` for a backend that lists a whole tree at once (`Repository.listTree`). */
async function listedCommit(
  repo: Repository,
  listTree: NonNullable<Repository['listTree']>,
  commit: string,
  previous: TreeCache | undefined,
  expected: boolean | undefined,
): Promise<CommitListing> {
  // With nothing cached to reuse, the listing (which takes the commit) runs while the commit is read.
  const early =
    expected === true && (previous === undefined || previous.size === 0)
      ? listTree.call(repo, commit)
      : undefined;
  // Never an unhandled rejection: a commit that cannot be read is reported as such below.
  early?.catch(() => undefined);
  const { tree: root, commitTime } = await readCommit(repo, commit);
  // One listing of the whole tree; the cache then holds the root's entries (relative to the root: all of them).
  const known = previous?.get(root);
  if (known !== undefined)
    return { commitTime, tree: root, entries: [...known], trees: new Map([[root, known]]) };
  let entries: TreeEntry[];
  try {
    entries = await (early ?? listTree.call(repo, commit));
  } catch (error) {
    throw unreadable(commit, root, error);
  }
  return {
    commitTime,
    tree: root,
    entries: [...entries],
    trees: new Map([[root, entries]]),
    listedNow: true,
  };
}

/**
 * The entries below tree `treeId` of `commit`, relative to it, read object by object; each tree read (or found in
 * `previous`) goes into `trees`.
 */
async function flatten(
  repo: Repository,
  commit: string,
  treeId: string,
  trees: TreeCache,
  previous: TreeCache | undefined,
): Promise<readonly TreeEntry[]> {
  const known = trees.get(treeId) ?? previous?.get(treeId);
  if (known !== undefined) {
    trees.set(treeId, known);
    return known;
  }
  let items: ReturnType<typeof parseTree>;
  try {
    items = parseTree(await readTyped(repo, treeId, 'tree'), treeId);
  } catch (error) {
    throw unreadable(commit, treeId, error);
  }
  // Subtrees are asked for at once: the cli backend answers them in one pipelined stream.
  const subtrees = await Promise.all(
    items.map((item) =>
      item.kind === 'tree' ? flatten(repo, commit, item.oid, trees, previous) : undefined,
    ),
  );
  checkListing(treeId, items, subtrees);
  const entries: TreeEntry[] = [];
  items.forEach((item, i) => {
    if (item.kind === 'tree')
      for (const child of subtrees[i]!) entries.push({ ...child, path: `${item.name}/${child.path}` });
    else entries.push(treeEntry(item.name, item.kind, item.executable, item.oid));
  });
  trees.set(treeId, entries);
  return entries;
}

/** Refuses a tree whose listing passes MAX_TREE_ENTRIES entries or MAX_TREE_LISTING_BYTES of paths. */
function checkListing(
  treeId: string,
  items: ReturnType<typeof parseTree>,
  subtrees: ReadonlyArray<readonly TreeEntry[] | undefined>,
): void {
  // Repeated subtrees are read once but listed each time: counted before they are.
  const count = subtrees.reduce((sum, subtree) => sum + (subtree?.length ?? 1), 0);
  if (count > MAX_TREE_ENTRIES) throw tooManyEntries(`tree ${treeId}`);
  // So are the paths, which grow with depth: bounded as the cli backend bounds its listing.
  let length = 0;
  items.forEach((item, i) => {
    const subtree = subtrees[i];
    if (subtree === undefined) length += item.name.length;
    else for (const child of subtree) length += item.name.length + 1 + child.path.length;
  });
  if (length > MAX_TREE_LISTING_BYTES)
    throw new GitError(
      'source-too-large',
      `the paths below tree ${treeId} pass ${MAX_TREE_LISTING_BYTES} characters`,
    );
}

/**
 * Every entry of `commit`'s tree, in git's order, symlinks with their targets. Throws `source-incomplete` when
 * any object is missing. Subtrees found in `previous` (the cache of an earlier walk) are not read again; the
 * returned cache holds this commit's trees only, so it stays the size of one tree.
 */
export async function walkCommit(
  repo: Repository,
  commit: string,
  previous?: TreeCache,
): Promise<CommitTree & { trees: TreeCache }> {
  const { commitTime, tree, entries, trees } = await listCommit(repo, commit, previous, { expected: true });
  const links = entries.filter((entry) => entry.type === 'symlink');
  if (links.length === 0) return { commit, commitTime, tree, entries, trees };
  return { commit, commitTime, tree, entries: await withTargets(repo, entries, links), trees };
}

/**
 * `entries` with the targets of `links` (symlink entries among them) read. A target longer than PATH_MAX resolves
 * nowhere: it is not read, and the link stays without one (dangling).
 */
export async function withTargets(
  repo: Repository,
  entries: readonly TreeEntry[],
  links: readonly TreeEntry[],
): Promise<TreeEntry[]> {
  // A listing made by the cli backend carries each held blob's size; otherwise the headers are asked.
  const sizes = links.every((link) => link.size !== undefined)
    ? links.map((link) => link.size)
    : await repo.objectSizes(links.map((link) => link.id));
  const readable = links.filter((_, i) => (sizes[i] ?? 0) <= MAX_SYMLINK_TARGET_BYTES);
  const decoder = new TextDecoder();
  const targets = new Map(
    await Promise.all(
      readable.map(async (link) => [link, decoder.decode(await readBlob(repo, link.id))] as const),
    ),
  );
  return entries.map((entry) => {
    const target = targets.get(entry);
    return target === undefined ? entry : { ...entry, target };
  });
}

/**
 * For a backend that streams reads (`Repository.readEach`), a reader of many blobs: each is handed to `each` with
 * its bytes as it arrives. One the stream does not give as a blob, and all it did not answer when it broke, are
 * then read as `readBlob` reads them (the store looked at again), with its errors. `undefined` for a backend that
 * reads one by one.
 */
export function blobsReader(
  repo: Repository,
): ((oids: readonly string[], each: (oid: string, data: Uint8Array) => void) => Promise<void>) | undefined {
  const { readEach } = repo;
  if (readEach === undefined) return undefined;
  return async (oids, each) => {
    const again: string[] = [];
    let answered = 0;
    let thrown: { error: unknown } | undefined;
    try {
      await readEach.call(repo, oids, (oid, found) => {
        answered++;
        if (found?.type !== 'blob') return void again.push(oid);
        try {
          each(oid, found.data);
        } catch (error) {
          thrown = { error };
          throw error;
        }
      });
    } catch (error) {
      if (thrown !== undefined) throw thrown.error;
      // One over MAX_OBJECT_BYTES would be refused again; after any other failure the rest is read one by one.
      if (error instanceof GitError) throw error;
      again.push(...oids.slice(answered));
    }
    for (const oid of again) each(oid, await readBlob(repo, oid));
  };
}

/**
 * How the index reads a repository's blobs: one at a time (`readBlob`), many at once where the backend streams
 * them (`readBlobs`), and sizes from the headers first (`blobSizes`).
 */
export function blobAccess(repo: Repository) {
  const readBlobs = blobsReader(repo);
  return {
    readBlob: (id: string) => readBlob(repo, id),
    readBlobs,
    blobSizes: (ids: readonly string[]) => repo.objectSizes(ids),
  };
}

/**
 * A blob's raw bytes; `source-incomplete` when the repository does not hold it (or cannot read it), and
 * `source-too-large` for one past MAX_OBJECT_BYTES, which is never inflated.
 */
export async function readBlob(repo: Repository, oid: string): Promise<Uint8Array> {
  try {
    return await readTyped(repo, oid, 'blob');
  } catch (error) {
    if (error instanceof GitError) throw error;
    throw new GitError('source-incomplete', `blob ${oid} is missing or unreadable`, {
      cause: error,
      log: messageOf(error),
    });
  }
}
