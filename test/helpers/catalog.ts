import { buildNamespace, type Namespace } from '../../src/catalog/index.ts';
import { blobAccess, openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { indexCommit } from '../../src/index/index.ts';
import { guardedReader } from '../../src/sync/damage.ts';

/**
 * One repository per fixture gitdir for the whole run: namespaces read through it for as long as a test holds
 * them, and one dropped with its namespace would leave its pack files to garbage collection (DEP0137).
 */
const repositories = new Map<string, ReturnType<typeof openLocalRepository>>();

/** A namespace of a local fixture repository at `commit`, indexed in-process. */
export async function namespaceOf(
  source: string,
  gitdir: string,
  commit: string,
  paths: string[] = [],
): Promise<Namespace> {
  let opened = repositories.get(gitdir);
  if (opened === undefined) repositories.set(gitdir, (opened = openLocalRepository(gitdir)));
  const repo = await opened;
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
