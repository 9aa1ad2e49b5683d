import { buildNamespace, type Namespace } from '../../src/catalog/index.ts';
import { blobAccess, openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { type CommitIndex, INDEX_VERSION, type IndexedSkill, indexCommit } from '../../src/index/index.ts';
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

/** A commit's index with no repository behind it: `skills` and `problems` at a fixed commit, time and tree. */
export const commitIndexOf = (
  skills: IndexedSkill[],
  problems: CommitIndex['problems'] = [],
): CommitIndex => ({
  version: INDEX_VERSION,
  commit: 'a'.repeat(40),
  commitTime: '2024-01-01T00:00:00.000Z',
  tree: 'b'.repeat(40),
  skills,
  problems,
});

/** A skill of one SKILL.md in folder `dir` (served there): its blob, size and digest as given, or placeholders. */
export function oneFileSkill(
  name: string,
  description: string,
  { dir = name, blob = 'c'.repeat(40), size = 1, digest = 'sha256:d' } = {},
): IndexedSkill {
  return {
    name,
    dir,
    servedDir: dir,
    frontmatter: { name, description },
    files: [{ path: `${dir}/SKILL.md`, relPath: 'SKILL.md', blob, size, digest }],
    bytes: size,
  };
}
