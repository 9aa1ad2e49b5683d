import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { git as run, gitEnv } from './git.ts';
import { tempDir } from './temp.ts';

let clock = Date.parse('2024-06-01T00:00:00Z') / 1000;

/** fast-import's quoted path: `"` and `\` escaped. */
const quoted = (file: string) => `"${file.replace(/["\\]/g, '\\$&')}"`;
const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;

/**
 * A bare repository under `root` that a CI pushes to. Each push is one `git fast-import` writing the commit
 * straight into it (a work tree, `add`, `commit` and `push` would start a dozen git processes).
 */
export function pushableRepo(root: string, name: string) {
  const bare = path.join(root, `${name}.git`);
  const marks = path.join(tempDir('skillpin-marks-'), 'marks');
  run(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
  // The commit the next one builds on, whatever branch it goes to (as a work tree's HEAD would be).
  let head: string | undefined;
  const commit = (branch: string, message: string, changes: string): string => {
    const when = `${clock++} +0000`;
    const who = 'test <test@skillpin.invalid>';
    const stream = [
      `commit refs/heads/${branch}\nmark :1\nauthor ${who} ${when}\ncommitter ${who} ${when}\n`,
      data(message),
      head === undefined ? '' : `from ${head}\n`,
      changes,
      '\n',
    ].join('');
    execFileSync('git', ['--git-dir', bare, 'fast-import', '--quiet', '--force', `--export-marks=${marks}`], {
      input: stream,
      env: gitEnv(),
    });
    head = readFileSync(marks, 'utf8').trim().split(' ')[1]!;
    return head;
  };
  const changesOf = (files: Record<string, string | null>) =>
    Object.entries(files)
      .map(([file, content]) =>
        content === null ? `D ${quoted(file)}\n` : `M 100644 inline ${quoted(file)}\n${data(content)}`,
      )
      .join('');
  return {
    bare,
    /** Commits the changes (`null` deletes a file) on the last commit made and pushes it to `branch`; returns it. */
    push(files: Record<string, string | null>, message = 'update', branch = 'main'): string {
      return commit(branch, message, changesOf(files));
    },
    /** Replaces the branch with a new history holding only `files` (the old commits become unreachable) and prunes them. */
    forcePushOrphan(files: Record<string, string>, branch = 'main'): string {
      head = undefined;
      const pushed = commit(branch, 'rewrite', `deleteall\n${changesOf(files)}`);
      run(['-C', bare, 'reflog', 'expire', '--expire=now', '--all']);
      run(['-C', bare, 'gc', '--quiet', '--prune=now']);
      return pushed;
    },
    deleteBranch(branch: string): void {
      run(['-C', bare, 'update-ref', '-d', `refs/heads/${branch}`]);
    },
  };
}

export const skillMd = (name: string, body: string) =>
  `---\nname: ${name}\ndescription: The ${name} skill, for tests.\n---\n${body}\n`;
