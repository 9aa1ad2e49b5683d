import * as fs from 'node:fs';
import { promises as fsp } from 'node:fs';
import git from 'isomorphic-git';
import { rememberSecret } from '../../shared/redact.ts';
import { cleanedUp } from '../cleanup.ts';
import { GitError } from '../errors.ts';
import { transportFailure } from '../failure.ts';
import {
  DEFAULT_DEADLINE_MS,
  DEFAULT_HTTP_TIMEOUT_MS,
  DEFAULT_MAX_FETCH_BYTES,
  DEFAULT_MAX_FETCH_OBJECTS,
} from '../limits.ts';
import { parseCommit } from '../objects.ts';
import {
  isRepository,
  pinRef,
  type Remote,
  type RemoteRef,
  type Repository,
  type TransferOptions,
  wantedRef,
} from '../repository.ts';
import { urlOrigin, redactUrl } from '../url.ts';
import { classify } from './classify.ts';
import { type GuardedHttpClient, httpClient, type HttpObservations } from './http.ts';
import { type ObjectDatabase, openObjectDatabase } from './odb.ts';
import type { TransferGuard } from '../packGuard.ts';
import { type PackWriter, packWriter } from './packWriter.ts';

/** What isomorphic-git cannot do: said plainly, with a reason, instead of failing obscurely. */
function supported(remote: Remote): void {
  if (!/^https?:\/\//.test(remote.url))
    throw new GitError(
      'source-unsupported',
      `${redactUrl(remote.url)}: the isomorphic backend speaks only HTTP(S); SSH and file remotes need the git binary (git.backend: cli)`,
    );
  if (remote.credentialHelper !== undefined)
    throw new GitError(
      'source-unsupported',
      'credential helpers need the git binary (git.backend: cli); the isomorphic backend takes token: only',
    );
}

function authFor(remote: Remote) {
  const { token } = remote;
  if (token === undefined) return {};
  rememberSecret(token, 'x-access-token');
  return {
    // GitHub, GitLab and Gitea all take a token as the password of HTTP basic auth.
    onAuth: () => ({ username: 'x-access-token', password: token }),
    // A refused token is final: never retry it in a loop.
    onAuthFailure: () => ({ cancel: true }),
  };
}

/**
 * One transfer's HTTP client: credentials for the remote's origin only, bounded in time and bytes, and, for a
 * fetch, each pack written to disk by `pack` as it arrives.
 */
function clientFor(
  remote: Remote,
  proxy: string | undefined,
  seen: HttpObservations = {},
  pack?: (guard: TransferGuard) => PackWriter,
) {
  return httpClient({
    origin: urlOrigin(remote.url)!,
    timeoutMs: remote.timeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS,
    deadlineMs: remote.deadlineMs ?? DEFAULT_DEADLINE_MS,
    maxBytes: remote.maxFetchBytes ?? DEFAULT_MAX_FETCH_BYTES,
    maxObjects: remote.maxFetchObjects ?? DEFAULT_MAX_FETCH_OBJECTS,
    redirects: remote.redirects ?? 'follow',
    proxy,
    pack,
    seen,
  });
}

/** Creates the bare repository skillpin keeps for a remote source, unless it exists. */
async function initStore(gitdir: string): Promise<void> {
  if (await isRepository(gitdir)) return;
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

/** One repository read by our own pack reader: its objects, and the transfers running (closing ends them). */
interface Iso {
  gitdir: string;
  proxy: string | undefined;
  objects: ObjectDatabase;
  clients: Set<GuardedHttpClient>;
}

/** A repository read by our own pack reader, with isomorphic-git for refs and the network. */
export async function openIsomorphicRepository(
  gitdir: string,
  store: boolean,
  proxy?: string,
): Promise<Repository> {
  if (store) await initStore(gitdir);
  const iso: Iso = { gitdir, proxy, objects: openObjectDatabase(gitdir), clients: new Set() };
  const { objects, clients } = iso;
  const readRef = async (name: string): Promise<string | undefined> => {
    try {
      return await git.resolveRef({ fs, gitdir, ref: name });
    } catch {
      return undefined;
    }
  };
  return {
    gitdir,
    backend: 'isomorphic',
    partial: false,
    readObject: (oid) => objects.read(oid),
    objectSizes: (oids) => Promise.all(oids.map((oid) => objects.sizeOf(oid))),
    async missingObjects(oids) {
      const present = await Promise.all(oids.map((oid) => objects.has(oid)));
      return oids.filter((_, i) => !present[i]);
    },
    objectsWithPrefix: (prefix) => objectsWithPrefix(gitdir, prefix),
    readRef,
    // The object's type is not learned with the ref here: resolving reads the object, in this process.
    async refTarget(name) {
      const oid = await readRef(name);
      return oid === undefined ? undefined : { oid };
    },
    listRefs: (prefixes) => listRefs(gitdir, prefixes),
    async writeRef(name, oid) {
      try {
        await git.writeRef({ fs, gitdir, ref: name, value: oid, force: true });
      } catch (error) {
        throw classify(error, `writing ${name}`);
      }
    },
    async deleteRef(name) {
      await git.deleteRef({ fs, gitdir, ref: name });
    },
    listRemoteRefs: (remote, names) => listRemoteRefs(iso, remote, names),
    fetch: (remote, commit, options) => fetchCommit(iso, remote, commit, options),
    async fetchBlobs() {
      throw new GitError(
        'source-unsupported',
        'the isomorphic backend cannot fetch blobs by id (partial clone)',
      );
    },
    refresh: () => objects.refresh(),
    async close() {
      for (const client of clients) client.close();
      clients.clear();
      await objects.close();
    },
  };
}

/** The objects whose ids start with `prefix` (4 to 40 hex digits; anything else: none). */
async function objectsWithPrefix(gitdir: string, prefix: string): Promise<string[]> {
  if (!/^[0-9a-f]{4,40}$/.test(prefix)) return [];
  try {
    return [await git.expandOid({ fs, gitdir, oid: prefix })];
  } catch (error) {
    const matches = (error as { code?: string; data?: { matches?: string[] } }).data?.matches;
    return (error as { code?: string }).code === 'AmbiguousError' && Array.isArray(matches) ? matches : [];
  }
}

async function listRefs(
  gitdir: string,
  prefixes: readonly string[],
): Promise<Array<{ name: string; oid: string }>> {
  const found: Array<{ name: string; oid: string }> = [];
  for (const prefix of prefixes) {
    const below = await git.listRefs({ fs, gitdir, filepath: prefix.slice(0, -1) }).catch(() => []);
    for (const rest of below) {
      const oid = await git.resolveRef({ fs, gitdir, ref: `${prefix}${rest}` }).catch(() => undefined);
      if (oid !== undefined) found.push({ name: `${prefix}${rest}`, oid });
    }
  }
  return found;
}

async function listRemoteRefs(iso: Iso, remote: Remote, names: readonly string[]): Promise<RemoteRef[]> {
  supported(remote);
  let refs: Awaited<ReturnType<typeof git.listServerRefs>>;
  const http = clientFor(remote, iso.proxy);
  iso.clients.add(http);
  try {
    refs = await git.listServerRefs({
      http,
      url: remote.url,
      symrefs: true,
      peelTags: true,
      protocolVersion: 1,
      ...authFor(remote),
    });
  } catch (error) {
    throw classify(error, `listing the refs of ${redactUrl(remote.url)}`, http.stopped(), remote.timeoutMs);
  } finally {
    iso.clients.delete(http);
    http.close();
  }
  // isomorphic-git reads a body that failed as one that ended: what it listed then is not the listing.
  const stopped = http.stopped();
  if (stopped !== undefined)
    throw classify(stopped, `listing the refs of ${redactUrl(remote.url)}`, stopped, remote.timeoutMs);
  return refs
    .filter((ref) => wantedRef(names, ref.ref))
    .map((ref): RemoteRef => ({ name: ref.ref, oid: ref.oid, peeled: ref.peeled }));
}

/** What one request of a fetch asks beyond the commit: a depth, or what is new since a held commit. */
type Bounds = { depth: number } | { since: Date; have: string };

async function fetchCommit(
  iso: Iso,
  remote: Remote,
  commit: string,
  options: TransferOptions,
): Promise<void> {
  supported(remote);
  const seen: HttpObservations = {};
  // One client for the whole fetch: its deadline and byte limit hold for both requests it may make.
  const http = clientFor(remote, iso.proxy, seen, (guard) =>
    packWriter({
      gitdir: iso.gitdir,
      baseById: (oid) => iso.objects.read(oid),
      guard,
      onProgress: options.onProgress,
    }),
  );
  const transfer = (bounds: Bounds) => transferOnce(iso, http, remote, commit, options, bounds);
  // With a commit in store, a depth-1 request makes isomorphic-git get the whole snapshot again; a
  // deepen-since at the held commit's time gets only what is new. If that falls short (a branch moved to an
  // older commit), one depth-1 fetch of the snapshot follows.
  const held =
    options.have === undefined ? undefined : await iso.objects.read(options.have).catch(() => undefined);
  let arrived = false;
  if (held?.type === 'commit') {
    const since = new Date(parseCommit(held.data, options.have!).committerTime * 1000);
    arrived = await transfer({ since, have: options.have! }).catch((error: unknown) => {
      // A server without deepen-since gets the plain depth-1 request instead.
      if (((error as GitError).cause as { code?: string } | undefined)?.code === 'RemoteCapabilityError')
        return false;
      throw error;
    });
  }
  if (!arrived) arrived = await transfer({ depth: 1 });
  if (arrived) return;
  // An empty answer to the pack request, or one that ended before its pack without saying why (a cut: isomorphic-git
  // takes either for an answer without objects), is no pack; a refusal (`ERR upload-pack: not our ref`) or a pack
  // without the commit is a commit the remote will not give (isomorphic-git reports success).
  const where = `fetching ${commit} from ${redactUrl(remote.url)}`;
  if (seen.packAnswer === 'nothing') throw transportFailure('source-pack-invalid', where);
  throw transportFailure('source-commit-not-found', where);
}

/** One `git fetch` request through `http`: whether the store then holds the commit. */
async function transferOnce(
  iso: Iso,
  http: GuardedHttpClient,
  remote: Remote,
  commit: string,
  options: TransferOptions,
  bounds: Bounds,
): Promise<boolean> {
  const { gitdir, objects } = iso;
  iso.clients.add(http);
  try {
    await git.fetch({
      fs,
      http,
      gitdir,
      cache: {},
      url: remote.url,
      // isomorphic-git sends as "have" what `ref` resolves to locally: the pin of a commit the store holds.
      ref: 'have' in bounds ? pinRef(bounds.have) : commit,
      // A wanted tag brings its commit along (the tag points at it).
      remoteRef: options.tag ?? commit,
      singleBranch: true,
      tags: false,
      ...('have' in bounds ? { since: bounds.since } : { depth: bounds.depth }),
      onProgress: options.onProgress,
      ...authFor(remote),
    });
    await http.settle(true);
  } catch (error) {
    await http.settle(false);
    // What the transfer left (a pack written without its index) goes at once.
    throw await cleanedUp(
      gitdir,
      classify(error, `fetching ${commit} from ${redactUrl(remote.url)}`, http.stopped(), remote.timeoutMs),
    );
  } finally {
    http.close();
    iso.clients.delete(http);
    objects.refresh();
  }
  return objects.has(commit);
}
