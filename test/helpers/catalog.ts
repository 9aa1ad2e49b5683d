import { buildNamespace, type Namespace } from '../../src/catalog/index.ts';
import { blobAccess, openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { indexCommit } from '../../src/index/index.ts';
import { guardedReader } from '../../src/sync/damage.ts';

/** A namespace of a local fixture repository at `commit`, indexed in-process. */
export async function namespaceOf(
  source: string,
  gitdir: string,
  commit: string,
  paths: string[] = [],
): Promise<Namespace> {
  const repo = await openLocalRepository(gitdir);
  const tree = await walkCommit(repo, commit);
  const index = await indexCommit({ ...tree, ...blobAccess(repo), paths });
  // As sync builds every namespace: reads checked against the index (Namespace.readBlob).
  const read = guardedReader(
    index,
    (blob) => readBlob(repo, blob),
    () => undefined,
  );
  return buildNamespace(source, index, { repository: 'local:test' }, read);
}
