import git from 'isomorphic-git';
import { GitError } from './errors.ts';
import type { Repository } from './repository.ts';

/** Resolves a branch, tag, `HEAD` or full ref of a local repository to a commit, peeling annotated tags. */
export async function resolveLocalRef(repo: Repository, ref: string): Promise<string> {
  const candidates =
    ref === 'HEAD' || ref.startsWith('refs/') ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  const found: string[] = [];
  for (const candidate of candidates) {
    try {
      found.push(await git.resolveRef({ fs: repo.fs, gitdir: repo.gitdir, ref: candidate }));
    } catch {
      // Not this one.
    }
  }
  if (found.length === 0)
    throw new GitError('source-ref-not-found', `the repository has no ref ${JSON.stringify(ref)}`);
  if (found.length > 1)
    throw new GitError(
      'source-ref-ambiguous',
      `${JSON.stringify(ref)} is both a branch and a tag; write refs/heads/${ref} or refs/tags/${ref}`,
    );
  return peel(repo, found[0]!);
}

async function peel(repo: Repository, oid: string): Promise<string> {
  for (let depth = 0; depth < 10; depth++) {
    const { type } = await git.readObject({
      fs: repo.fs,
      gitdir: repo.gitdir,
      cache: repo.cache,
      oid,
      format: 'content',
    });
    if (type === 'commit') return oid;
    if (type !== 'tag')
      throw new GitError('source-ref-not-found', `the ref points at a ${type}, not a commit`);
    oid = (await git.readTag({ fs: repo.fs, gitdir: repo.gitdir, cache: repo.cache, oid })).tag.object;
  }
  throw new GitError('source-ref-not-found', 'the ref is a chain of more than 10 tags');
}
