import { execFile } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { GitError } from './errors.ts';

/** The work tree of a repository as git would commit it now, beside HEAD's tree. */
export interface WorktreeTree {
  /** The root tree `git add -A` then `git write-tree` give (.gitignore honoured). */
  tree: string;
  /** HEAD's root tree; `undefined` before the first commit. */
  headTree: string | undefined;
  /** A commit holding `tree`, in the scratch repository. */
  commit: string;
}

const SNAPSHOT_IDENTITY = {
  GIT_AUTHOR_NAME: 'skillpin check',
  GIT_AUTHOR_EMAIL: 'check@skillpin.invalid',
  GIT_AUTHOR_DATE: '@0 +0000',
  GIT_COMMITTER_NAME: 'skillpin check',
  GIT_COMMITTER_EMAIL: 'check@skillpin.invalid',
  GIT_COMMITTER_DATE: '@0 +0000',
};

/** For the scratch repository: none of the user's configuration (a default object format, commit.gpgSign). */
const OWN_CONFIG_ONLY = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

/** What tells git which repository, index and objects to use: here only what we set ourselves. */
const LOCATING = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_NAMESPACE',
];

/**
 * Runs git with `env` added to ours (the user's configuration applies: the work tree is staged as their
 * `git add -A` would) and no optional lock taken; its trimmed stdout, or the error with git's message.
 */
function gitRun(at: string[], args: string[], env: Record<string, string>): Promise<string> {
  const base = { ...process.env };
  for (const name of LOCATING) delete base[name];
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['-c', 'core.fsmonitor=false', ...at, ...args],
      { env: { ...base, GIT_OPTIONAL_LOCKS: '0', ...env }, maxBuffer: 1024 * 1024, timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error === null) return resolve(stdout.trim());
        const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
        reject(
          new GitError(
            missing ? 'source-unsupported' : 'source-fetch-failed',
            missing
              ? 'reading the work tree needs git on PATH (none found)'
              : `git ${args[0]}: ${stderr.trim() || error.message}`,
          ),
        );
      },
    );
  });
}

/**
 * How git is pointed at the user's work tree `dir`: that one path is a safe directory (the user named it, whoever
 * owns it), and no split index (its shared part would be written into `.git/`).
 */
async function inWorktree(dir: string): Promise<string[]> {
  const real = await fsp.realpath(dir);
  return ['-c', `safe.directory=${real}`, '-c', 'core.splitIndex=false', '-C', dir];
}

/**
 * The tree of a work tree and a commit holding it, in a new scratch repository `into`; nothing is written to the
 * user's. A temporary index (GIT_INDEX_FILE) read from HEAD (or empty) and refreshed, so only what changed is
 * hashed again; `git add -A` and `git write-tree` into it. Until the commit is made, git sees the scratch objects
 * alone (GIT_OBJECT_DIRECTORY, no alternates): no object of the user's is looked up while writing, so none is
 * freshened (its mtime set). Then the scratch repository borrows the user's objects (objects/info/alternates) for
 * the files and folders that did not change.
 */
export async function worktreeTree(dir: string, into: string): Promise<WorktreeTree> {
  await gitRun([], ['init', '--bare', '--quiet', '--template=', into], OWN_CONFIG_ONLY);
  const at = await inWorktree(dir);
  const index = { GIT_INDEX_FILE: path.join(into, 'index') };
  const scratch = { ...index, GIT_OBJECT_DIRECTORY: path.join(into, 'objects') };
  const objects = await gitRun(at, ['rev-parse', '--path-format=absolute', '--git-path', 'objects'], index);
  const headTree = await gitRun(at, ['rev-parse', '--verify', '--quiet', 'HEAD^{tree}'], index).catch(
    () => undefined,
  );
  await gitRun(at, ['read-tree', headTree ?? '--empty'], index);
  await gitRun(at, ['update-index', '-q', '--refresh'], scratch);
  await gitRun(at, ['add', '--all', '--', '.'], scratch);
  // Every tree is written (the cached ones are not found among the scratch objects): the commit's tree is there.
  const tree = await gitRun(at, ['write-tree', '--missing-ok'], scratch);
  const commit = await treeCommit(into, tree);
  await fsp.mkdir(path.join(into, 'objects', 'info'), { recursive: true });
  await fsp.writeFile(path.join(into, 'objects', 'info', 'alternates'), `${objects}\n`);
  return { tree, headTree, commit };
}

/**
 * A commit object holding `tree` in the scratch repository `into` (no parent, fixed author and date: the same tree
 * gives the same id), so either backend indexes the tree as it indexes a commit; no ref names it.
 */
function treeCommit(into: string, tree: string): Promise<string> {
  return gitRun(['--git-dir', into], ['commit-tree', tree, '-m', 'skillpin check: the work tree'], {
    ...OWN_CONFIG_ONLY,
    ...SNAPSHOT_IDENTITY,
  });
}
