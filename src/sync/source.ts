import path from 'node:path';
import { buildNamespace, type Namespace, type Origin } from '../catalog/index.ts';
import type { SourceConfig } from '../config/index.ts';
import {
  fetchCommit,
  openLocalRepository,
  openStore,
  readBlob,
  redactUrl,
  resolveLocalRef,
  resolveRemoteRef,
  unpinCommit,
  walkCommit,
  type FetchProgress,
  type Remote,
  type Repository,
  type TreeCache,
} from '../git/index.ts';
import {
  indexCommit,
  indexStore,
  newIndexCache,
  type IndexCache,
  type IndexOptions,
} from '../index/index.ts';

export interface SourceContext {
  dataDir: string;
  /** Caches per source id, kept across syncs: unchanged trees are not re-read nor unchanged blobs re-hashed. */
  caches: Map<string, SourceCache>;
  onProgress?: (source: string, progress: FetchProgress | { phase: 'indexing' }) => void;
}

/** What is kept per source between syncs. */
export interface SourceCache {
  index: IndexCache;
  trees?: TreeCache;
  /** One repository object per source: its pack indexes are parsed once, and its namespaces share them. */
  repo?: Repository;
}

function cacheOf(source: SourceConfig, ctx: SourceContext): SourceCache {
  let cache = ctx.caches.get(source.id);
  if (cache === undefined) ctx.caches.set(source.id, (cache = { index: newIndexCache() }));
  return cache;
}

/** The settings an index depends on besides the commit. */
export function indexOptionsOf(source: SourceConfig): IndexOptions {
  return { paths: source.paths, strictNames: source.strictNames };
}

export function storeDir(dataDir: string, id: string): string {
  return path.join(dataDir, 'repos', `${id}.git`);
}

export function indexDir(dataDir: string, id: string): string {
  return path.join(dataDir, 'index', id);
}

async function openSource(source: SourceConfig, ctx: SourceContext): Promise<Repository> {
  const cache = cacheOf(source, ctx);
  cache.repo ??=
    source.location.kind === 'local'
      ? await openLocalRepository(source.location.path, source.git)
      : await openStore(storeDir(ctx.dataDir, source.id), source.git);
  return cache.repo;
}

function remoteOf(source: SourceConfig): Remote | undefined {
  if (source.location.kind !== 'remote') return undefined;
  return {
    url: source.location.url,
    timeoutMs: source.timeoutMs,
    ...(source.location.token === undefined ? {} : { token: source.location.token }),
    ...(source.location.credentialHelper === undefined
      ? {}
      : { credentialHelper: source.location.credentialHelper }),
  };
}

/** Where a source's bytes come from, for provenance and status: never a credential. */
export function originOf(source: SourceConfig): Origin {
  return {
    repository:
      source.location.kind === 'remote'
        ? redactUrl(source.location.url)
        : `local:${path.basename(source.location.path)}`,
  };
}

/** The commit a source should serve now: its pin, or its ref resolved. */
export async function targetCommit(source: SourceConfig, repo: Repository): Promise<string> {
  if (source.target.kind === 'commit') return source.target.commit;
  const remote = remoteOf(source);
  return remote === undefined
    ? resolveLocalRef(repo, source.target.ref)
    : resolveRemoteRef(repo, remote, source.target.ref);
}

/**
 * Brings one source to a served namespace: resolve (unless `at` names the commit), fetch (remote), then index
 * (or load the persisted index). Throws GitError with a stable code when the source cannot be served.
 */
export async function loadSource(
  source: SourceConfig,
  ctx: SourceContext,
  at?: string,
  have?: string,
): Promise<Namespace> {
  const repo = await openSource(source, ctx);
  const commit = at ?? (await targetCommit(source, repo));
  const remote = remoteOf(source);
  const cache = cacheOf(source, ctx);
  if (remote !== undefined) {
    // The completeness check walks the commit's trees: the index walk below reuses them all.
    cache.trees = await fetchCommit(repo, remote, commit, {
      ...(have === undefined ? {} : { have }),
      ...(cache.trees === undefined ? {} : { trees: cache.trees }),
      paths: source.paths,
      onProgress: (progress) => ctx.onProgress?.(source.id, progress),
    });
  }
  const options = indexOptionsOf(source);
  const store = indexStore(indexDir(ctx.dataDir, source.id));
  let index = await store.load(commit, options);
  if (index === undefined) {
    ctx.onProgress?.(source.id, { phase: 'indexing' });
    const tree = await walkCommit(repo, commit, cache.trees);
    cache.trees = tree.trees;
    index = await indexCommit({
      ...tree,
      readBlob: (id) => readBlob(repo, id),
      ...options,
      cache: cache.index,
    });
    await store.save(index, options);
  }
  return buildNamespace(source.id, index, originOf(source), (blob) => readBlob(repo, blob));
}

/** The commit a source should serve now, resolved against its repository or remote. */
export async function resolveSource(source: SourceConfig, ctx: SourceContext): Promise<string> {
  return targetCommit(source, await openSource(source, ctx));
}

/**
 * A commit served before, brought back from its persisted index without touching the network (and without
 * re-hashing); only when the index is gone is it rebuilt, which may need the network for a commit not in store.
 */
export async function restoreSource(
  source: SourceConfig,
  ctx: SourceContext,
  commit: string,
): Promise<Namespace> {
  const repo = await openSource(source, ctx);
  const index = await indexStore(indexDir(ctx.dataDir, source.id)).load(commit, indexOptionsOf(source));
  if (index === undefined) return loadSource(source, ctx, commit);
  return buildNamespace(source.id, index, originOf(source), (blob) => readBlob(repo, blob));
}

/** Forgets a commit that is no longer served: its index file, and its pin in a remote source's store. */
export async function forgetCommit(source: SourceConfig, ctx: SourceContext, commit: string): Promise<void> {
  await indexStore(indexDir(ctx.dataDir, source.id)).remove(commit);
  if (source.location.kind === 'remote')
    await unpinCommit(await openSource(source, ctx), commit).catch(() => undefined);
}
