/**
 * Public skill catalogs fetched onto the developer's machine (never in CI, never committed), served as namespaces:
 * each a bare git repository (or a symlink to one) named `<owner>+<name>` in a directory, its HEAD indexed as sync
 * indexes a commit (the cli backend).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { buildNamespace, type Namespace } from '../src/catalog/index.ts';
import { blobAccess, openLocalRepository, revParseLocal, walkCommit } from '../src/git/index.ts';
import { indexCommit, newIndexCache, skillMdBodies } from '../src/index/index.ts';

export interface RealCatalog {
  /** `<owner>+<name>`, as the directory names it. */
  name: string;
  ns: Namespace;
  close(): Promise<void>;
}

/** The source id a catalog is served under: its directory name in URI-safe characters (`obra+superpowers`: `obra-superpowers`). */
export const sourceIdOf = (name: string) => name.toLowerCase().replace(/[^a-z0-9.-]+/g, '-');

/** The default directory: the lead keeps symlinks to the catalogs there. */
export const DEFAULT_CATALOGS = path.resolve(import.meta.dirname, '..', '.skillpin', 'catalogs');

/** The catalog `name` under `dir`, indexed at its HEAD; undefined (and a line saying so) when it is absent. */
export async function loadCatalog(dir: string, name: string): Promise<RealCatalog | undefined> {
  const gitdir = path.join(dir, name);
  if (!existsSync(gitdir)) {
    console.log(`skipped ${name}: no repository at ${gitdir}`);
    return undefined;
  }
  const commit = await revParseLocal(gitdir, 'HEAD');
  if (commit === undefined) throw new Error('git is not installed');
  const git = await openLocalRepository(gitdir, { backend: 'cli' });
  const tree = await walkCommit(git, commit);
  const cache = newIndexCache();
  const index = await indexCommit({ ...tree, ...blobAccess(git), cache });
  const ns = buildNamespace(
    sourceIdOf(name),
    index,
    { repository: `local:${name}` },
    blobAccess(git).readBlob,
    skillMdBodies(cache),
  );
  return { name, ns, close: () => git.close() };
}
