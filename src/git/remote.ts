import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { GitError, messageOf } from './errors.ts';
import type { Repository } from './repository.ts';
import { hasCompleteCommit } from './tree.ts';

/** How to reach a remote: its URL and, for private repositories, a token (never logged, never stored). */
export interface Remote {
  url: string;
  token?: string;
  /** Per-request timeout in milliseconds. */
  timeoutMs?: number;
}

export interface FetchProgress {
  phase: string;
  loaded: number;
  total: number;
}

/** The ref skillpin writes so that a fetched commit stays reachable in its store. */
export function pinRef(commit: string): string {
  return `refs/skillpin/pins/${commit}`;
}

function authFor(remote: Remote) {
  const { token } = remote;
  if (token === undefined) return {};
  return {
    // GitHub, GitLab and Gitea all take a token as the password of HTTP basic auth.
    onAuth: () => ({ username: 'x-access-token', password: token }),
    // A refused token is final: never retry it in a loop.
    onAuthFailure: () => ({ cancel: true }),
  };
}

function classify(error: unknown, what: string): GitError {
  if (error instanceof GitError) return error;
  const code = (error as { code?: string } | null)?.code;
  const status = (error as { data?: { statusCode?: number } } | null)?.data?.statusCode;
  if (code === 'HttpError' && (status === 401 || status === 403)) return new GitError('source-auth-failed', `${what}: the remote refused the credentials (HTTP ${status})`, { cause: error });
  if (code === 'UserCanceledError') return new GitError('source-auth-failed', `${what}: the remote asked for credentials that were refused`, { cause: error });
  return new GitError('source-fetch-failed', `${what}: ${messageOf(error)}`, { cause: error });
}

/**
 * Resolves a branch, tag or `HEAD` on a remote to a commit. `ref` matches exactly: a full ref name, or a
 * short name that is exactly one of `refs/heads/<ref>` and `refs/tags/<ref>`; annotated tags are peeled.
 */
export async function resolveRemoteRef(remote: Remote, ref: string): Promise<string> {
  let refs: Awaited<ReturnType<typeof git.listServerRefs>>;
  try {
    refs = await git.listServerRefs({ http, url: remote.url, symrefs: true, peelTags: true, protocolVersion: 1, ...authFor(remote) });
  } catch (error) {
    throw classify(error, `listing the refs of ${redactUrl(remote.url)}`);
  }
  const byName = new Map(refs.map((entry) => [entry.ref, entry]));
  const candidates = ref === 'HEAD' || ref.startsWith('refs/') ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  const found = candidates.map((name) => byName.get(name)).filter((entry) => entry !== undefined);
  if (found.length === 0) throw new GitError('source-ref-not-found', `the remote has no ref ${JSON.stringify(ref)}`);
  if (found.length > 1) throw new GitError('source-ref-ambiguous', `${JSON.stringify(ref)} is both a branch and a tag on the remote; write refs/heads/${ref} or refs/tags/${ref}`);
  const entry = found[0]!;
  return entry.peeled ?? entry.oid;
}

/**
 * Fetches exactly `commit` (depth 1, single want) into `repo` and pins it with a local ref. A remote that
 * refuses the want still answers with success, so the commit and its whole tree are checked afterwards.
 */
export async function fetchCommit(repo: Repository, remote: Remote, commit: string, onProgress?: (progress: FetchProgress) => void): Promise<void> {
  if (!(await hasCompleteCommit(repo, commit))) {
    try {
      await git.fetch({
        fs: repo.fs, http, gitdir: repo.gitdir, cache: repo.cache, url: remote.url,
        ref: commit, remoteRef: commit, singleBranch: true, depth: 1, tags: false,
        ...(onProgress === undefined ? {} : { onProgress }),
        ...authFor(remote),
      });
    } catch (error) {
      throw classify(error, `fetching ${commit} from ${redactUrl(remote.url)}`);
    } finally {
      repo.packsChanged();
    }
    if (!(await hasCompleteCommit(repo, commit))) {
      throw new GitError('source-commit-not-found', `the remote did not send commit ${commit} (it does not exist there, or the server refuses to serve an unadvertised commit)`);
    }
  }
  await git.writeRef({ fs: repo.fs, gitdir: repo.gitdir, ref: pinRef(commit), value: commit, force: true });
}

/** `url` without user name, password, query or fragment: safe for logs, errors and `_meta`. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.href;
  } catch {
    return '(invalid URL)';
  }
}
