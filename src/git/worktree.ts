import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GitError } from './errors.ts';

/** A file of a work tree that differs from its HEAD commit. */
export interface WorktreeChange {
  path: string;
  change: 'modified' | 'added' | 'deleted' | 'untracked';
}

/**
 * The files under `paths` (default: everywhere) whose work tree content differs from HEAD, ignored files left
 * out; `undefined` for a bare repository. Read in process (isomorphic-git): no hook or fsmonitor of the
 * repository runs.
 */
export async function worktreeChanges(
  dir: string,
  paths: readonly string[] = [],
): Promise<WorktreeChange[] | undefined> {
  if (!fs.existsSync(path.join(dir, '.git'))) return undefined;
  const { default: git } = await import('isomorphic-git');
  const rows = await git.statusMatrix({
    fs,
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

/** The work tree of a repository as git would commit it now, beside HEAD's tree. */
export interface WorktreeTree {
  /** The root tree `git add -A` then `git write-tree` give (.gitignore honoured). */
  tree: string;
  /** HEAD's root tree; `undefined` before the first commit. */
  headTree: string | undefined;
}

const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'skillpin check',
  GIT_AUTHOR_EMAIL: 'check@skillpin.invalid',
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'skillpin check',
  GIT_COMMITTER_EMAIL: 'check@skillpin.invalid',
  GIT_COMMITTER_DATE: '@0 +0000',
};

/** Runs git in `dir` with `env` added; its trimmed stdout, or the error with git's message. */
function gitIn(dir: string, args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-c', 'core.fsmonitor=false', '-C', dir, ...args],
      { env: { ...process.env, ...env }, maxBuffer: 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error === null) return resolve(stdout.trim());
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        reject(
          new GitError(
            missing ? 'source-unsupported' : 'source-fetch-failed',
            missing
              ? 'checking the work tree needs git on PATH (none found): commit and check HEAD with --ref HEAD'
              : `git ${args[0]}: ${stderr.trim() || error.message}`,
          ),
        );
      },
    );
  });
}

/**
 * The tree of a work tree, without touching the user's index or refs: a temporary index (GIT_INDEX_FILE) read from
 * HEAD (or empty), `git add -A` into it, `git write-tree` (which writes the tree objects to the object store).
 */
export async function worktreeTree(dir: string): Promise<WorktreeTree> {
  const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), 'skillpin-worktree-'));
  try {
    const env = { GIT_INDEX_FILE: path.join(scratch, 'index') };
    const headTree = await gitIn(dir, ['rev-parse', '--verify', '--quiet', 'HEAD^{tree}'], env).catch(
      () => undefined,
    );
    await gitIn(dir, headTree === undefined ? ['read-tree', '--empty'] : ['read-tree', headTree], env);
    await gitIn(dir, ['add', '--all', '--', '.'], env);
    return { tree: await gitIn(dir, ['write-tree'], env), headTree };
  } finally {
    await fsp.rm(scratch, { recursive: true, force: true });
  }
}

/**
 * A commit object holding `tree` (no parent, fixed author and date: the same tree gives the same id), so either
 * backend indexes the tree as it indexes a commit; no ref names it.
 */
export function treeCommit(dir: string, tree: string): Promise<string> {
  return gitIn(dir, ['commit-tree', tree, '-m', 'skillpin check: the work tree'], SNAPSHOT_IDENTITY);
}
