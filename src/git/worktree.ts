import fs from 'node:fs';
import path from 'node:path';
import { readOnlyFs } from './readOnlyFs.ts';

/** A file of a work tree that differs from its HEAD commit. */
export interface WorktreeChange {
  path: string;
  change: 'modified' | 'added' | 'deleted' | 'untracked';
}

/**
 * The files under `paths` (default: everywhere) whose work tree content differs from HEAD, ignored files left
 * out; `undefined` for a bare repository. Read in process (isomorphic-git): no hook or fsmonitor of the
 * repository runs, and nothing of it is written (not even the index's stat data).
 */
export async function worktreeChanges(
  dir: string,
  paths: readonly string[] = [],
): Promise<WorktreeChange[] | undefined> {
  if (!fs.existsSync(path.join(dir, '.git'))) return undefined;
  const { default: git } = await import('isomorphic-git');
  const rows = await git.statusMatrix({
    fs: readOnlyFs(path.join(dir, '.git')),
    dir,
    ref: 'HEAD',
    filepaths: paths.length === 0 ? undefined : [...paths],
  });
  const changes: WorktreeChange[] = [];
  // Columns: HEAD (0 absent, 1 present), WORKDIR (0 absent, 1 as HEAD, 2 different), STAGE (see statusMatrix).
  for (const [file, head, workdir, stage] of rows) {
    if (head === 1 && workdir === 1) continue;
    if (head === 1) changes.push({ path: file, change: workdir === 0 ? 'deleted' : 'modified' });
    else if (workdir === 2) changes.push({ path: file, change: stage === 0 ? 'untracked' : 'added' });
  }
  return changes;
}
