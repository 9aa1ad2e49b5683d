import { GitError } from './errors.ts';
import { parseTag } from './objects.ts';
import type { Remote, RemoteRef, Repository } from './repository.ts';
import { readObject } from './tree.ts';

/** The full ref names `ref` may mean: itself when it is `HEAD` or `refs/…`, else a branch or a tag of that name. */
function candidates(ref: string): string[] {
  return ref === 'HEAD' || ref.startsWith('refs/') ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
}

function exactlyOne<T>(found: T[], ref: string, where: string): T {
  if (found.length === 0)
    throw new GitError('source-ref-not-found', `${where} has no ref ${JSON.stringify(ref)}`);
  if (found.length > 1)
    throw new GitError(
      'source-ref-ambiguous',
      `${JSON.stringify(ref)} is both a branch and a tag${where === 'the repository' ? '' : ' on the remote'}; write refs/heads/${ref} or refs/tags/${ref}`,
    );
  return found[0]!;
}

/** What a ref resolves to: the commit, and the annotated tag object the ref names when it names one. */
export interface ResolvedRef {
  commit: string;
  tag?: string;
  /** The ref the tag was reached through (a full name as resolved, or as configured): its name must be the tag's. */
  ref?: string;
}

/** Resolves a branch, tag, `HEAD` or full ref of a local repository to a commit, peeling annotated tags. */
export async function resolveLocalRef(repo: Repository, ref: string): Promise<string> {
  return (await resolveLocalTarget(repo, ref)).commit;
}

/** As resolveLocalRef, keeping the tag object the ref names (what `verify.require: tag` checks). */
export async function resolveLocalTarget(repo: Repository, ref: string): Promise<ResolvedRef> {
  const names = candidates(ref);
  const values = await Promise.all(names.map((name) => repo.refTarget(name)));
  const [name, target] = exactlyOne(
    names.flatMap((name, i) => (values[i] === undefined ? [] : [[name, values[i]] as const])),
    ref,
    'the repository',
  );
  const { oid, type } = target;
  // A ref the backend says names a commit (a branch, a lightweight tag) needs no object read.
  const commit = type === 'commit' ? oid : await peel(repo, oid);
  return commit === oid ? { commit } : { commit, tag: oid, ref: name };
}

async function peel(repo: Repository, oid: string): Promise<string> {
  for (let depth = 0; depth < 10; depth++) {
    const found = await readObject(repo, oid);
    if (found?.type === 'commit') return oid;
    if (found?.type !== 'tag')
      throw new GitError(
        'source-ref-not-found',
        `the ref points at a ${found?.type ?? 'missing object'}, not a commit`,
      );
    oid = parseTag(found.data, oid).object;
  }
  throw new GitError('source-ref-not-found', 'the ref is a chain of more than 10 tags');
}

/**
 * Resolves a branch, tag or `HEAD` on a remote to a commit, with `repo`'s backend. `ref` matches exactly: a full
 * ref name, or a short name that is exactly one of `refs/heads/<ref>` and `refs/tags/<ref>`; annotated tags are
 * peeled.
 */
export async function resolveRemoteRef(repo: Repository, remote: Remote, ref: string): Promise<string> {
  return (await resolveRemoteTarget(repo, remote, ref)).commit;
}

/** As resolveRemoteRef, keeping the tag object the ref names (the remote reports it peeled). */
export async function resolveRemoteTarget(
  repo: Repository,
  remote: Remote,
  ref: string,
): Promise<ResolvedRef> {
  const names = candidates(ref);
  const found = await repo.listRemoteRefs(remote, names);
  const entry = exactlyOne(
    names.flatMap((name) => found.filter((candidate) => candidate.name === name)),
    ref,
    'the remote',
  );
  return entry.peeled === undefined
    ? { commit: entry.oid }
    : { commit: entry.peeled, tag: entry.oid, ref: entry.name };
}

/**
 * The refs below `prefixes` (each ending in `/`) that `wanted` keeps: of the remote with one ref listing, or of
 * a local repository (`remote` absent) in place. Annotated tags come with the commit they peel to.
 */
export async function listRefsBelow(
  repo: Repository,
  remote: Remote | undefined,
  prefixes: readonly string[],
  wanted: (name: string) => boolean,
): Promise<RemoteRef[]> {
  if (remote !== undefined)
    return (await repo.listRemoteRefs(remote, prefixes)).filter((ref) => wanted(ref.name));
  const found: RemoteRef[] = [];
  for (const { name, oid } of await repo.listRefs(prefixes)) {
    if (!wanted(name)) continue;
    // A tag of something other than a commit is left as it is: its own sync reports it.
    const commit = await peel(repo, oid).catch(() => oid);
    found.push(commit === oid ? { name, oid } : { name, oid, peeled: commit });
  }
  return found;
}

/** The one commit a short id (4 to 39 hex digits) names in a local repository. */
export async function expandCommit(repo: Repository, prefix: string): Promise<string> {
  const found = await repo.objectsWithPrefix(prefix);
  const commits: string[] = [];
  for (const oid of found) if ((await readObject(repo, oid))?.type === 'commit') commits.push(oid);
  if (commits.length === 1) return commits[0]!;
  throw new GitError(
    'source-commit-not-found',
    commits.length === 0
      ? `no commit starts with ${prefix}`
      : `${prefix} is ambiguous: ${commits.length} commits start with it (${commits.join(', ')}); give more digits`,
  );
}
