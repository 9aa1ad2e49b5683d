import { GitError } from './errors.ts';

/** What `git rev-parse` takes that a branch, tag or commit id is not: `HEAD~1`, `main^2`, `v1.2^{commit}`, `@{1}`. */
export const REVISION_HINT =
  'a branch, tag, HEAD, a commit id (short or full), or what `git rev-parse` accepts (HEAD~1, v1.2^{commit})';

/**
 * The commit a revision expression names in the local repository `dir`, as `git rev-parse --verify` resolves it
 * (git's own grammar, tags peeled to their commit); `undefined` when git is not installed.
 */
export async function revParseLocal(dir: string, revision: string): Promise<string | undefined> {
  const { runGit } = await import('./cli/run.ts');
  let result: Awaited<ReturnType<typeof runGit>>;
  try {
    result = await runGit(
      'git',
      ['-C', dir, 'rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`],
      { deadlineMs: 30_000 },
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const commit = result.stdout.toString('utf8').trim();
  if (result.code === 0 && /^[0-9a-f]{40}$/.test(commit)) return commit;
  throw new GitError(
    'source-ref-not-found',
    `the repository has no commit ${JSON.stringify(revision)}: give ${REVISION_HINT}`,
  );
}
