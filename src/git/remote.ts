import git from 'isomorphic-git';
import { errnoReason, type SourceReason } from '../shared/reasons.ts';
import { messageOf } from '../shared/text.ts';
import { GitError } from './errors.ts';
import { httpClient, type HttpObservations } from './http.ts';
import type { Repository } from './repository.ts';
import { completeCommit, type TreeCache } from './tree.ts';

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

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'EPIPE',
]);
// isomorphic-git's names for a pack or protocol answer it could not use.
const BAD_PACK = new Set([
  'EmptyServerResponseError',
  'InternalError',
  'ParseError',
  'SmartHttpError',
  'UnknownTransportError',
]);

/** Maps an error from isomorphic-git or the network to a stable source reason. */
export function classify(error: unknown, what: string): GitError {
  if (error instanceof GitError) return error;
  const code = (error as { code?: string } | null)?.code ?? '';
  const status = (error as { data?: { statusCode?: number } } | null)?.data?.statusCode;
  const fail = (reason: SourceReason, detail: string) =>
    new GitError(reason, `${what}: ${detail}`, { cause: error });
  if (code === 'HttpError' && (status === 401 || status === 403))
    return fail('source-auth-failed', `the remote refused the credentials (HTTP ${status})`);
  if (code === 'UserCanceledError')
    return fail('source-auth-failed', 'the remote asked for credentials that were refused or not configured');
  if (code === 'HttpError' && status === 404)
    return fail('source-repository-not-found', 'the remote has no repository at that URL (HTTP 404)');
  if (code === 'HttpError') return fail('source-http-error', `the remote answered HTTP ${status}`);
  if (code === 'ETIMEDOUT') return fail('source-timeout', messageOf(error));
  if (UNREACHABLE.has(code)) return fail('source-unreachable', `${code}: the remote could not be reached`);
  const errno = errnoReason(error);
  if (errno !== undefined) return fail(errno.reason, errno.detail);
  if (BAD_PACK.has(code)) return fail('source-pack-invalid', messageOf(error));
  return fail('source-fetch-failed', messageOf(error));
}

/**
 * Resolves a branch, tag or `HEAD` on a remote to a commit. `ref` matches exactly: a full ref name, or a
 * short name that is exactly one of `refs/heads/<ref>` and `refs/tags/<ref>`; annotated tags are peeled.
 */
export async function resolveRemoteRef(remote: Remote, ref: string): Promise<string> {
  let refs: Awaited<ReturnType<typeof git.listServerRefs>>;
  try {
    refs = await git.listServerRefs({
      http: httpClient(remote.timeoutMs),
      url: remote.url,
      symrefs: true,
      peelTags: true,
      protocolVersion: 1,
      ...authFor(remote),
    });
  } catch (error) {
    throw classify(error, `listing the refs of ${redactUrl(remote.url)}`);
  }
  const byName = new Map(refs.map((entry) => [entry.ref, entry]));
  const candidates =
    ref === 'HEAD' || ref.startsWith('refs/') ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  const found = candidates.map((name) => byName.get(name)).filter((entry) => entry !== undefined);
  if (found.length === 0)
    throw new GitError('source-ref-not-found', `the remote has no ref ${JSON.stringify(ref)}`);
  if (found.length > 1)
    throw new GitError(
      'source-ref-ambiguous',
      `${JSON.stringify(ref)} is both a branch and a tag on the remote; write refs/heads/${ref} or refs/tags/${ref}`,
    );
  const entry = found[0]!;
  return entry.peeled ?? entry.oid;
}

/**
 * Fetches exactly `commit` (depth 1, one want) into `repo` and pins it with a local ref. With `have` (a commit
 * the store holds), the remote is told so and sends only the objects the store lacks. A remote that refuses
 * the want still answers with success, so the commit and its trees are checked afterwards; `trees` (the cache
 * of an earlier walk) spares re-reading unchanged trees. Returns the commit's trees, for the walk that follows.
 */
export async function fetchCommit(
  repo: Repository,
  remote: Remote,
  commit: string,
  options: { have?: string; trees?: TreeCache; onProgress?: (progress: FetchProgress) => void } = {},
): Promise<TreeCache> {
  let trees = await completeCommit(repo, commit, options.trees);
  if (trees === undefined) {
    const seen: HttpObservations = {};
    const fetch = async (bounds: { depth: number } | { since: Date; have: string }) => {
      try {
        await git.fetch({
          fs: repo.fs,
          http: httpClient(remote.timeoutMs, seen),
          gitdir: repo.gitdir,
          cache: repo.cache,
          url: remote.url,
          // isomorphic-git sends as "have" what `ref` resolves to locally: the pin of a commit the store holds.
          ref: 'have' in bounds ? pinRef(bounds.have) : commit,
          remoteRef: commit,
          singleBranch: true,
          tags: false,
          ...('have' in bounds ? { since: bounds.since } : { depth: bounds.depth }),
          ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
          ...authFor(remote),
        });
      } catch (error) {
        throw classify(error, `fetching ${commit} from ${redactUrl(remote.url)}`);
      } finally {
        repo.refresh();
      }
      return completeCommit(repo, commit, options.trees);
    };
    // With a commit in store, a depth-1 request makes the server send the whole snapshot again, haves or not;
    // a deepen-since at the held commit's time sends only what is new. If that falls short (a branch moved to
    // an older commit), one depth-1 fetch of the snapshot follows.
    const heldTime = options.have === undefined ? undefined : await commitTime(repo, options.have);
    if (heldTime !== undefined) {
      trees = await fetch({ since: heldTime, have: options.have! }).catch((error: unknown) => {
        // A server without deepen-since gets the plain depth-1 request instead.
        if (
          (error as GitError).cause !== undefined &&
          ((error as GitError).cause as { code?: string }).code === 'RemoteCapabilityError'
        )
          return undefined;
        throw error;
      });
    }
    trees ??= await fetch({ depth: 1 });
    if (trees === undefined) {
      if (seen.packResponseBytes === 0)
        throw new GitError(
          'source-pack-invalid',
          `fetching ${commit} from ${redactUrl(remote.url)}: the remote answered the pack request with an empty body`,
        );
      throw new GitError(
        'source-commit-not-found',
        `the remote did not send commit ${commit} (it does not exist there, or the server refuses to serve an unadvertised commit)`,
      );
    }
  }
  try {
    await git.writeRef({ fs: repo.fs, gitdir: repo.gitdir, ref: pinRef(commit), value: commit, force: true });
  } catch (error) {
    throw classify(error, `pinning ${commit}`);
  }
  return trees;
}

/** The committer time of a commit in store, or `undefined` when it is not there. */
async function commitTime(repo: Repository, commit: string): Promise<Date | undefined> {
  try {
    const { commit: parsed } = await git.readCommit({
      fs: repo.fs,
      gitdir: repo.gitdir,
      cache: repo.cache,
      oid: commit,
    });
    return new Date(parsed.committer.timestamp * 1000);
  } catch {
    return undefined;
  }
}

/** Drops the pin of a commit that is no longer served. Its objects stay until the store is cleaned. */
export async function unpinCommit(repo: Repository, commit: string): Promise<void> {
  await git.deleteRef({ fs: repo.fs, gitdir: repo.gitdir, ref: pinRef(commit) });
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
