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

/** What a read of a repository must leave as it was: every file of `.git/` (bytes and mtime) and of the work tree. */
export interface RepositoryPrint {
  gitdir: Record<string, string>;
  /** The mtime of every file of `.git/`: the index's, and objects git would freshen (touch) when writing them again. */
  mtimesNs: Record<string, bigint>;
  worktree: Record<string, string>;
}

/** The print of the work-tree repository `dir` (its `.git/` apart from the rest). */
export function repositoryPrint(dir: string): RepositoryPrint {
  const gitdir = fileHashes(path.join(dir, '.git'));
  const mtimesNs = Object.fromEntries(
    Object.keys(gitdir).map((file) => [
      file,
      lstatSync(path.join(dir, '.git', file), { bigint: true }).mtimeNs,
    ]),
  );
  const worktree = Object.fromEntries(
    Object.entries(fileHashes(dir)).filter(([file]) => !file.startsWith(`.git${path.sep}`)),
  );
  return { gitdir, mtimesNs, worktree };
}
