import { buildNamespace, type Namespace } from '../../src/catalog/index.ts';
import { openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { indexCommit } from '../../src/index/index.ts';

/** A namespace of a local fixture repository at `commit`, indexed in-process. */
export async function namespaceOf(
  source: string,
  gitdir: string,
  commit: string,
  paths: string[] = [],
): Promise<Namespace> {
  const repo = await openLocalRepository(gitdir);
  const tree = await walkCommit(repo, commit);
  const index = await indexCommit({ ...tree, paths, readBlob: (id) => readBlob(repo, id) });
  return buildNamespace(source, index, { repository: 'local:test' }, (blob) => readBlob(repo, blob));
}
