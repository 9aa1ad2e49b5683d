import { GitError } from './errors.ts';
import { parseTag } from './objects.ts';
import type { Remote, Repository } from './repository.ts';
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

/** Resolves a branch, tag, `HEAD` or full ref of a local repository to a commit, peeling annotated tags. */
export async function resolveLocalRef(repo: Repository, ref: string): Promise<string> {
  const values = await Promise.all(candidates(ref).map((name) => repo.readRef(name)));
  return peel(
    repo,
    exactlyOne(
      values.filter((value) => value !== undefined),
      ref,
      'the repository',
    ),
  );
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
  const names = candidates(ref);
  const found = await repo.listRemoteRefs(remote, names);
  const entry = exactlyOne(
    names.flatMap((name) => found.filter((candidate) => candidate.name === name)),
    ref,
    'the remote',
  );
  return entry.peeled ?? entry.oid;
}
