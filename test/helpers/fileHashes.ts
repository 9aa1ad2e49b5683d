import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Every file under `dir` (relative path → sha256 of its bytes; a symlink → of its target), sorted by path. */
export function fileHashes(dir: string): Record<string, string> {
  const hashes: Record<string, string> = {};
  const walk = (at: string) => {
    for (const name of readdirSync(path.join(dir, at)).sort()) {
      const file = path.join(at, name);
      const stat = lstatSync(path.join(dir, file));
      if (stat.isDirectory()) walk(file);
      else {
        const bytes = stat.isSymbolicLink()
          ? readlinkSync(path.join(dir, file))
          : readFileSync(path.join(dir, file));
        hashes[file] = createHash('sha256').update(bytes).digest('hex');
      }
    }
  };
  walk('');
  return hashes;
}

/** What a read of a repository must leave as it was: every file of `.git/` and of the work tree, the index's mtime. */
export interface RepositoryPrint {
  gitdir: Record<string, string>;
  worktree: Record<string, string>;
  indexMtimeNs: bigint | undefined;
}

/** The print of the work-tree repository `dir` (its `.git/` apart from the rest). */
export function repositoryPrint(dir: string): RepositoryPrint {
  const all = fileHashes(dir);
  const gitdir: Record<string, string> = {};
  const worktree: Record<string, string> = {};
  for (const [file, hash] of Object.entries(all))
    if (file.startsWith(`.git${path.sep}`)) gitdir[file.slice(5)] = hash;
    else worktree[file] = hash;
  const index = path.join(dir, '.git', 'index');
  const indexMtimeNs = Object.hasOwn(gitdir, 'index')
    ? lstatSync(index, { bigint: true }).mtimeNs
    : undefined;
  return { gitdir, worktree, indexMtimeNs };
}
