import { promises as fsp } from 'node:fs';
import path from 'node:path';
import { buildNamespace, type Namespace, type Origin, sourceOrigin } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import {
  blobAccess,
  type FetchProgress,
  fetchCommit,
  GitError,
  keyringOf,
  listRefsBelow,
  openLocalRepository,
  openStore,
  pinnedTag,
  pinRef,
  readBlob,
  type Remote,
  type RemoteRef,
  refetchCommit,
  removeIncomplete,
  type Repository,
  type ResolvedRef,
  resolveLocalTarget,
  redactUrl,
  resolveRemoteTarget,
  type TreeCache,
  unpinCommit,
  verifyTarget,
  walkCommit,
  type Linked,
} from '../git/index.ts';
import { discoverSkills } from '../skills/index.ts';
import {
  forgetBodies,
  indexCommit,
  indexStore,
  keepServed,
  newIndexCache,
  packFiles,
  releaseFacts,
  seedFacts,
  skillMdBodies,
  type CommitIndex,
  type IndexOptions,
  type IndexStore,
} from '../index/index.ts';
import { type FileRefusedError, readBounded } from '../shared/boundedRead.ts';
import { COMMIT_PATTERN } from '../shared/patterns.ts';
import { checkReads, checkStore, type Damage, guardedReader } from './damage.ts';
import { type Fresh, fresh } from './fresh.ts';
import { checkLocked } from './lockCheck.ts';
import type { HeldCommits } from './held.ts';
import { searchKey, searchOnce } from './search.ts';
import { REF_PREFIXES, refMatcher } from '../shared/refNames.ts';
import type { CommitStatus } from '../shared/status.ts';

export interface SourceDeps {
  dataDir: string;
  onProgress?: (progress: FetchProgress | { phase: 'indexing' }) => void;
  /** Opens the folder of index files; tests pass one that fails like a full disk. */
  indexStore?: (dir: string) => IndexStore;
  /** Told when a read finds a served commit's objects missing or its index wrong (the worker repairs it). */
  onDamage?: (damage: Damage) => void;
  /** Told when an index file is too large or no regular file: it is rebuilt from git (and so replaced). */
  onRefused?: (error: FileRefusedError) => void;
  /** Told when a search index built could not be saved (a full disk): it is built again at the next start. */
  onSearchUnsaved?: (error: unknown) => void;
  /**
   * A ref of a `refs:` source: the repository it shares with the source's other refs, and what its ref names at
   * the source's last listing (so each poll lists the remote once, not once per ref).
   */
  shared?: { repository: RepositoryOnUse; listed?(ref: string): ResolvedRef | undefined };
  /**
   * The indexes and search indexes of every source of the process: a commit several sources (or refs) serve is
   * indexed, read and held once.
   */
  held?: HeldCommits;
}

/**
 * One configured source and what it holds in dataDir: its repository (opened once, so pack indexes are parsed
 * once and shared by its namespaces), its caches (unchanged trees are not re-read, unchanged blobs not
 * re-hashed) and its index files. The only code of the sync layer that calls git.
 */
export interface Source {
  readonly id: string;
  readonly origin: Origin;
  /**
   * The commit the source should serve now: its pin, or its ref resolved (remote refs over the network), with
   * the annotated tag the ref names. `since` (performance.now() when the sync was asked): a local ref resolved
   * since then by another source of the same repository is not resolved again.
   */
  resolve(since?: number): Promise<ResolvedRef>;
  /**
   * A `refs:` source's branches and tags that match its patterns: one ref listing of the remote, or local refs.
   * The same refs as the last listing are the same array (what was chosen of them holds: groupStep.ts).
   */
  listRefs(): Promise<readonly RemoteRef[]>;
  /**
   * Fetches the commit (remote; `have` names a commit the store holds), verifies its signature when the source
   * requires one, and indexes it; or loads its index file, verified under the same keys. `since` as for `resolve`:
   * a fetch of the same commit into the same repository that started since then (another ref's) is not made again.
   */
  load(target: ResolvedRef, have?: string, since?: number): Promise<Namespace>;
  /** What `load` serves, as the index alone (with the root tree and the signer): what a lockfile records. */
  index(target: ResolvedRef, have?: string): Promise<CommitIndex>;
  /**
   * A commit served before, from its index file, or rebuilt from the store when that is gone; never the network.
   * Its first read checks that the store holds the commit's objects.
   */
  restore(commit: string): Promise<Namespace>;
  /**
   * Damage when the store lacks objects of a served commit (the commit and the blobs its index names); `since` as
   * for `resolve`: a check of the same index in the same repository that started since then answers.
   */
  check(ns: Namespace, since?: number): Promise<Damage | undefined>;
  /** Damage when the reader that serves `ns`'s reads cannot find its objects (a repair that did not take). */
  readable(ns: Namespace): Promise<Damage | undefined>;
  /**
   * Repairs a damaged commit: its objects fetched again (remote; a local repository cannot be), and its index
   * rebuilt when that is what was wrong, or when it names objects the store still lacks.
   */
  repair(damage: Damage): Promise<Namespace>;
  /** Forgets a commit no longer served: its index file, and its pin in a remote source's store. */
  forget(commit: string): Promise<void>;
  /** What the index file of `commit` says, without opening the repository; only the commit when it is gone. */
  status(commit: string): Promise<CommitStatus>;
  /** Every commit dataDir holds for this source (index files, and pins in a remote source's store). */
  held(): Promise<string[]>;
  /** Ends the repository's git processes and closes its files; a later call opens them again. */
  close(): Promise<void>;
  /**
   * Removes what an interrupted transfer left in the store (git's temporary packs, a pack without its index,
   * stale locks) and returns it; only while no other process writes the store (its lease is held).
   */
  sweep(): Promise<string[]>;
}

/** Whether two ref listings name the same refs, in the same order, with the same objects. */
const sameRefs = (a: readonly RemoteRef[], b: readonly RemoteRef[]) =>
  a.length === b.length &&
  a.every((r, i) => r.name === b[i]!.name && r.oid === b[i]!.oid && r.peeled === b[i]!.peeled);

function remoteOf(source: SourceConfig): Remote | undefined {
  const { location } = source;
  if (location.kind !== 'remote') return undefined;
  const { timeoutMs, deadlineMs, maxFetchBytes, maxFetchObjects, redirects } = source;
  const { url, token, credentialHelper } = location;
  return { url, timeoutMs, deadlineMs, maxFetchBytes, maxFetchObjects, redirects, token, credentialHelper };
}

/** Commits named by `<dir>/<commit><suffix>` files. */
async function commitsIn(dir: string, suffix: string): Promise<string[]> {
  const names = await fsp.readdir(dir).catch(() => [] as string[]);
  return names
    .filter((name) => name.endsWith(suffix))
    .map((name) => name.slice(0, name.length - suffix.length))
    .filter((commit) => COMMIT_PATTERN.test(commit));
}

/** packed-refs of a store: its pins and the tags a `refs:` source fetched, about 100 bytes each. */
export const PACKED_REFS_MAX_BYTES = 256 * 1024 * 1024;

/** Commits pinned in a store: loose pin refs, and pin refs a `git gc` packed into packed-refs. */
async function pinnedCommits(gitdir: string): Promise<string[]> {
  const prefix = pinRef('');
  const loose = await commitsIn(path.join(gitdir, prefix), '');
  // Pins packed by git, one line of 100 bytes each: one larger than PACKED_REFS_MAX_BYTES names none of ours.
  const packed = await readBounded(path.join(gitdir, 'packed-refs'), PACKED_REFS_MAX_BYTES).catch(() => '');
  const inPacked = packed
    .split('\n')
    .map((line) => line.split(' ')[1] ?? '')
    .filter((ref) => ref.startsWith(prefix))
    .map((ref) => ref.slice(prefix.length))
    .filter((commit) => COMMIT_PATTERN.test(commit));
  return [...loose, ...inPacked];
}

/**
 * What names a source's repository in the process: its URL without credentials, or a local repository's path. A
 * commit's index is the same in every source naming the same repository with the same options.
 */
export function repositoryKey(config: SourceConfig): string {
  const { location } = config;
  return location.kind === 'remote' ? redactUrl(location.url) : `local:${path.resolve(location.path)}`;
}

/** A source's bare repository in dataDir. The refs of a `refs:` source share its store: one copy of each object. */
export function storeDirOf(dataDir: string, config: SourceConfig): string {
  return path.join(dataDir, 'repos', `${config.group?.id ?? config.id}.git`);
}

/** A source's repository, opened once at first use (so pack indexes are parsed once) until closed. */
export interface RepositoryOnUse {
  /** The repository, opened now when it is not; an open that failed is tried again at the next call. */
  get(): Promise<Repository>;
  /** Ends its git processes and closes its files; the next `get` opens it again. */
  close(): Promise<void>;
  /**
   * Removes what an interrupted transfer left in a remote source's store, and returns it. Only the holder of the
   * source's lease calls it: no other process writes the store meanwhile.
   */
  sweep(): Promise<string[]>;
  /**
   * The trees walked last in this repository (by a fetch's completeness check or an index walk), by whichever of
   * the sources sharing it: the next walk reuses those unchanged, and a second ref on one commit reads none again.
   */
  trees?: TreeCache;
  /**
   * What the sources sharing it asked of it lately: each asked at once resolves a ref, fetches a commit or checks
   * a commit once.
   */
  fresh?: {
    resolved: Fresh<string, ResolvedRef>;
    fetched: Fresh<string, void>;
    checked: Fresh<object, Damage | undefined>;
  };
}

/** A repository as it is opened when first used. */
type Opened = () => Promise<Repository>;

/** Opens `config`'s repository (a remote source's store at `storeDir`) when first used. */
export function repositoryOnUse(config: SourceConfig, storeDir: string): RepositoryOnUse {
  let opened: Promise<Repository> | undefined;
  return {
    get() {
      opened ??= (
        config.location.kind === 'local'
          ? openLocalRepository(config.location.path, config.git, config.location.given)
          : openStore(storeDir, config.git)
      ).catch((error: unknown) => {
        // Not there yet (a local path created later): the next sync tries again.
        opened = undefined;
        throw error;
      });
      return opened;
    },
    async close() {
      const open = opened;
      opened = undefined;
      await (await open?.catch(() => undefined))?.close();
    },
    sweep: async () => (config.location.kind === 'local' ? [] : removeIncomplete(storeDir)),
    fresh: { resolved: fresh(new Map()), fetched: fresh(new Map()), checked: fresh(new WeakMap()) },
  };
}

/**
 * `shared` as one of the sources using it sees it: its close closes `shared` only when no other source that used it
 * still does (the others' reads go on); a source's get after its close uses it again.
 */
export function usedBy(shared: RepositoryOnUse, users: Set<object>): RepositoryOnUse {
  const me = {};
  return {
    get() {
      users.add(me);
      return shared.get();
    },
    async close() {
      users.delete(me);
      if (users.size === 0) await shared.close();
    },
    sweep: () => shared.sweep(),
    get trees() {
      return shared.trees;
    },
    set trees(trees) {
      shared.trees = trees;
    },
    fresh: shared.fresh,
  };
}

/**
 * What is held once: the index of one commit of one repository under one set of options, and, when a tag is
 * verified, the tag and the ref it was reached through (a signed tag serves only under its own name: verify.ts).
 */
const heldKey = (config: SourceConfig, target: ResolvedRef, options: IndexOptions) =>
  JSON.stringify([
    repositoryKey(config),
    target.commit,
    options,
    config.verify?.require === 'tag' ? [target.tag ?? null, target.ref ?? null] : null,
  ]);

/**
 * `target`'s index as the process holds it: read or built (`here`) by the first source asking; each other source
 * links its index file to the one that index was read from or saved to.
 */
async function heldIndex(
  held: HeldCommits,
  config: SourceConfig,
  indexes: IndexStore,
  target: ResolvedRef,
  options: IndexOptions,
  here: () => Promise<CommitIndex>,
): Promise<CommitIndex> {
  let mine = false;
  const index = await held.indexes.once(heldKey(config, target, options), async () => {
    mine = true;
    const read = await here();
    held.filed.set(read, indexes.file(target.commit));
    return read;
  });
  const file = held.filed.get(index);
  if (!mine && file !== undefined) await indexes.adopt(file, index, options);
  return index;
}

/**
 * How a source indexes its commits: from their index files (saved only once verified, under the same keys), or
 * built from git and saved, a source that verifies signatures checking the commit's (or tag's) signature first;
 * its caches (trees, blob digests, SKILL.md bodies) carry over from one commit to the next.
 */
function sourceIndexer(config: SourceConfig, deps: SourceDeps, repository: RepositoryOnUse) {
  const dir = path.join(deps.dataDir, 'index', config.id);
  const indexes = deps.indexStore?.(dir) ?? indexStore(dir, deps.onRefused);
  // Parsed on first use (and once per config): a bad key file fails what needs it, never an idle promise.
  const keyring = () => (config.verify === undefined ? undefined : keyringOf(config.verify));
  const options = async (): Promise<IndexOptions> => ({
    paths: config.paths,
    strictNames: config.strictNames,
    verify: config.verify === undefined ? undefined : (await keyring()!).fingerprint,
  });
  const cache = newIndexCache();
  /**
   * The index this source built last, from the bytes it read: its blobs' facts seed the cache for the next commit's
   * (never an index read from dataDir, which may be damaged: its facts are not taken on trust).
   */
  let lastIndexed: CommitIndex | undefined;
  // What the indexer read of the served SKILL.md files (the cache keeps the latest indexed commit's): the search
  // index of a namespace published from it reads none of them again.
  const skillMdBody = skillMdBodies(cache);
  const indexer = {
    indexes,
    options,
    /**
     * The index of a commit in store (its repository opened only when the index is built from it); a locked
     * commit's only once it is what its lock entry lists.
     */
    async indexOf(repo: Opened, target: ResolvedRef): Promise<CommitIndex> {
      const index = await indexedOnce(repo, target);
      const { target: pinned } = config;
      if (pinned.kind === 'commit' && pinned.lock !== undefined && pinned.commit === index.commit)
        checkLocked(pinned.lock, index);
      return index;
    },
    /** Removes a wrong index of `target`'s commit: its file, and what the process holds of it for every source. */
    async removeWrong(target: ResolvedRef) {
      const opts = await options();
      deps.held?.indexes.forget(heldKey(config, target, opts));
      deps.held?.searches.forget(searchKey(repositoryKey(config), target.commit, opts));
      await indexes.remove(target.commit);
    },
    /** The namespace of `index`, whose reads open its repository when they come. */
    namespace(index: CommitIndex, repo: Opened, checkFirst = false) {
      const read = guardedReader(
        index,
        async (blob) => readBlob(await repo(), blob),
        (damage) => deps.onDamage?.(damage),
        checkFirst ? async () => checkStore(await repo(), index) : undefined,
      );
      const searchData = searchOnce(index, {
        indexes,
        options,
        repository: repositoryKey(config),
        held: deps.held?.searches,
        heldBody: skillMdBody,
        read,
        unsaved: deps.onSearchUnsaved,
      });
      // Once the commit's search data exists (built from the bodies held, or loaded), they are not kept.
      const search = () =>
        searchData().then((data) => {
          forgetBodies(cache, index);
          return data;
        });
      return buildNamespace(config.id, index, sourceOrigin(config), read, skillMdBody, search);
    },
  };
  /** The commit's index as the process holds it, or (nothing shared) as this source reads or builds it. */
  const indexedOnce = async (repo: Opened, target: ResolvedRef): Promise<CommitIndex> =>
    deps.held === undefined
      ? indexedHere(repo, target)
      : heldIndex(deps.held, config, indexes, target, await options(), () => indexedHere(repo, target));
  const indexedHere = async (opened: Opened, target: ResolvedRef): Promise<CommitIndex> => {
    const { commit } = target;
    const opts = await options();
    const stored = await indexes.load(commit, opts);
    // Held as the process holds an index (packed.ts): what serving keeps of its files is most of what it keeps.
    if (stored !== undefined) return packFiles(stored);
    const repo = await opened();
    const keys = await keyring();
    const signer = keys === undefined ? undefined : await verifyTarget(repo, target, keys);
    deps.onProgress?.({ phase: 'indexing' });
    const tree = await walkCommit(repo, commit, repository.trees);
    // What the last index built says of its blobs, so the ones this commit shares are not read again.
    seedFacts(cache, lastIndexed);
    repository.trees = tree.trees;
    const built = await indexCommit({
      ...tree,
      ...blobAccess(repo),
      paths: opts.paths,
      strictNames: opts.strictNames,
      cache,
    });
    keepServed(cache, built);
    releaseFacts(cache);
    const index = signer === undefined ? built : { ...built, signer };
    await indexes.save(index, opts);
    return (lastIndexed = packFiles(index));
  };
  return indexer;
}

/**
 * The commit `config` should serve now: its pin, or its ref resolved (remote refs over the network; a ref of a
 * `refs:` source from what its source listed last), with the annotated tag the ref names.
 */
async function resolveTarget(
  config: SourceConfig,
  remote: Remote | undefined,
  repository: RepositoryOnUse,
  listed: ((ref: string) => ResolvedRef | undefined) | undefined,
  since: number | undefined,
): Promise<ResolvedRef> {
  const { target } = config;
  // A ref goes with the annotated tag it names, never alone.
  if (target.kind === 'commit')
    return { commit: target.commit, tag: target.tag, ref: target.tag === undefined ? undefined : target.ref };
  if (target.kind === 'refs')
    throw new GitError(
      'source-ref-not-found',
      'a refs: source is listed, not resolved (each ref is a source)',
    );
  if (listed !== undefined) {
    const found = listed(target.ref);
    if (found === undefined)
      throw new GitError('source-ref-not-found', `${target.ref} is no longer on the remote`);
    return found;
  }
  if (remote !== undefined) return resolveRemoteTarget(await repository.get(), remote, target.ref);
  const { ref } = target;
  const resolve = async () => resolveLocalTarget(await repository.get(), ref);
  return repository.fresh === undefined ? resolve() : repository.fresh.resolved.of(ref, since, resolve);
}

/**
 * Repairs a damaged commit: its objects fetched again (remote; a local repository cannot be), and its index
 * rebuilt when that is what was wrong, or when it names objects the store still lacks.
 */
async function repairCommit(
  config: SourceConfig,
  remote: Remote | undefined,
  indexer: ReturnType<typeof sourceIndexer>,
  repo: Repository,
  damage: Damage,
  target: ResolvedRef,
): Promise<Namespace> {
  const { commit } = damage;
  if (damage.kind === 'objects') {
    if (remote === undefined)
      throw new GitError('source-incomplete', `objects of commit ${commit} are missing from the repository`, {
        log: damage.log,
      });
    const tag = config.verify?.require === 'tag' ? target.tag : undefined;
    await refetchCommit(repo, remote, commit, {
      paths: config.paths,
      linked: linkedSkills(config),
      tag,
      settings: config.git,
    });
  }
  // An index that names objects the store still lacks is as wrong as one with wrong digests: rebuilt.
  const stored = await indexer.indexes.load(commit, await indexer.options());
  if (damage.kind === 'index' || (stored !== undefined && (await checkStore(repo, stored)) !== undefined))
    await indexer.removeWrong(target);
  const opened = async () => repo;
  return indexer.namespace(await indexer.indexOf(opened, target), opened);
}

/** The skill folders a commit's entries hold under the source's paths, those symlinks there lead to included. */
const linkedSkills =
  (config: SourceConfig): Linked =>
  (entries) =>
    discoverSkills(entries, config.paths).skills.map((skill) => skill.dir);

export function openSource(config: SourceConfig, deps: SourceDeps): Source {
  const remote = remoteOf(config);
  const storeDir = storeDirOf(deps.dataDir, config);
  const repository = deps.shared?.repository ?? repositoryOnUse(config, storeDir);
  const indexer = sourceIndexer(config, deps, repository);
  const { indexes } = indexer;
  const opened: Opened = () => repository.get();
  let lastListed: readonly RemoteRef[] | undefined;

  /**
   * Fetches the commit (remote) with the tag verification reads, then its index: from its file, or built. A fetch of
   * the same commit, tag and paths into the repository since `since` (another ref's of a `refs:` source) is this one.
   */
  const fetchAndIndex = async (target: ResolvedRef, have?: string, since?: number): Promise<CommitIndex> => {
    const repo = await repository.get();
    // Only a tag that verification reads is fetched and kept.
    const tag = config.verify?.require === 'tag' ? target.tag : undefined;
    // The completeness check walks the commit's trees: the index walk that follows reuses them all.
    const fetch = async () => {
      repository.trees = await fetchCommit(repo, remote!, target.commit, {
        have,
        trees: repository.trees,
        tag,
        paths: config.paths,
        linked: linkedSkills(config),
        onProgress: (progress) => deps.onProgress?.(progress),
      });
    };
    if (remote !== undefined) {
      const key = JSON.stringify([target.commit, tag ?? null, config.paths ?? null]);
      await (repository.fresh === undefined ? fetch() : repository.fresh.fetched.of(key, since, fetch));
    }
    return indexer.indexOf(async () => repo, target);
  };

  /**
   * A commit served before, with the tag verified for it (kept in a remote source's store, or the locked one) and
   * the ref the config reaches it through.
   */
  const targetOf = async (commit: string): Promise<ResolvedRef> => {
    const { target } = config;
    const tag =
      remote !== undefined
        ? await pinnedTag(await repository.get(), commit)
        : target.kind === 'commit' && target.commit === commit
          ? target.tag
          : undefined;
    const ref = target.kind === 'refs' || tag === undefined ? undefined : target.ref;
    return { commit, tag, ref };
  };

  return {
    id: config.id,
    origin: sourceOrigin(config),
    resolve: async (since) => resolveTarget(config, remote, repository, deps.shared?.listed, since),
    async listRefs() {
      const { target } = config;
      if (target.kind !== 'refs') throw new Error(`source ${config.id} follows no refs: patterns`);
      const refs = await listRefsBelow(
        await repository.get(),
        remote,
        REF_PREFIXES,
        refMatcher(target.patterns),
      );
      if (lastListed === undefined || !sameRefs(lastListed, refs)) lastListed = refs;
      return lastListed;
    },
    load: async (target, have, since) => indexer.namespace(await fetchAndIndex(target, have, since), opened),
    index: (target, have) => fetchAndIndex(target, have),
    // Restored from its index file, a commit is served without opening its repository (nor asking git its
    // version): its first read does, and the store check of its first sync.
    restore: async (commit) =>
      indexer.namespace(await indexer.indexOf(opened, await targetOf(commit)), opened, true),
    async check(ns, since) {
      const check = async () => checkStore(await repository.get(), ns);
      // One held index is one skills array: the same commit and blobs, whichever source serves it.
      return repository.fresh === undefined ? check() : repository.fresh.checked.of(ns.skills, since, check);
    },
    readable: async (ns) => checkReads(await repository.get(), ns),
    repair: async (damage) =>
      repairCommit(config, remote, indexer, await repository.get(), damage, await targetOf(damage.commit)),
    async forget(commit) {
      await indexes.remove(commit);
      if (remote !== undefined) await unpinCommit(await repository.get(), commit).catch(() => undefined);
    },
    async status(commit) {
      const index = await indexes.load(commit, await indexer.options());
      if (index === undefined) return { commit };
      return { commit, commitTime: index.commitTime, skills: index.skills.length, problems: index.problems };
    },
    async held() {
      // A `refs:` source serves nothing of its own: its refs do.
      if (config.target.kind === 'refs') return [];
      const indexed = await commitsIn(path.join(deps.dataDir, 'index', config.id), '.json');
      // A shared store's pins are every ref's: only a source's own index files say what it served.
      const pinned = remote === undefined || config.group !== undefined ? [] : await pinnedCommits(storeDir);
      return [...new Set([...indexed, ...pinned])];
    },
    close: () => repository.close(),
    // A shared store is swept by its `refs:` source, never by one of its refs while another one fetches.
    sweep: () => (config.group === undefined ? repository.sweep() : Promise.resolve([])),
  };
}
