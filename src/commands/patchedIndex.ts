import type { GitSettings } from '../config/types.ts';
import { blobAccess, blobId, openLocalRepository, walkCommit } from '../git/index.ts';
import { type CommitIndex, indexCommit, newIndexCache } from '../index/index.ts';

/** Indexes a commit with some files' bytes replaced, in memory: nothing is written to the repository. */
export interface PatchedIndexer {
  /** The index the server would build if the files of `patches` (path → bytes) held those bytes. */
  index(patches: ReadonlyMap<string, Uint8Array>): Promise<CommitIndex>;
  close(): Promise<void>;
}

/**
 * The indexer of `commit` in the repository at `dir`, as a source with these `paths` and `strictNames` indexes it:
 * the commit's tree is listed once, and a blob read for one index is not read again for the next.
 */
export async function patchedIndexer(
  dir: string,
  commit: string,
  options: { paths: readonly string[]; strictNames: boolean; git?: GitSettings },
): Promise<PatchedIndexer> {
  const repo = await openLocalRepository(dir, options.git);
  try {
    const tree = await walkCommit(repo, commit);
    const access = blobAccess(repo);
    const cache = newIndexCache();
    return {
      index(patches) {
        // A patched file is a blob of its own, named by its git id as any blob is.
        const patched = new Map<string, Uint8Array>();
        const entries = tree.entries.map((entry) => {
          const bytes = entry.type === 'file' ? patches.get(entry.path) : undefined;
          if (bytes === undefined) return entry;
          const id = blobId(bytes);
          patched.set(id, bytes);
          return { ...entry, id, size: bytes.byteLength };
        });
        const stored = (ids: readonly string[]) => ids.filter((id) => !patched.has(id));
        return indexCommit({
          ...tree,
          entries,
          readBlob: async (id) => patched.get(id) ?? access.readBlob(id),
          // Without a streaming reader (the isomorphic backend), `readBlob` reads every blob.
          readBlobs:
            access.readBlobs === undefined
              ? undefined
              : async (ids, each) => {
                  for (const id of ids) if (patched.has(id)) each(id, patched.get(id)!);
                  await access.readBlobs!(stored(ids), each);
                },
          blobSizes: async (ids) => {
            const asked = stored(ids);
            const found = await access.blobSizes(asked);
            const byId = new Map(asked.map((id, i) => [id, found[i]]));
            return ids.map((id) => patched.get(id)?.byteLength ?? byId.get(id));
          },
          paths: options.paths,
          strictNames: options.strictNames,
          cache,
        });
      },
      close: () => repo.close(),
    };
  } catch (error) {
    await repo.close();
    throw error;
  }
}
