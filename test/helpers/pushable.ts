import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git as run } from './git.ts';
import { tempDir } from './temp.ts';

let clock = Date.parse('2024-06-01T00:00:00Z') / 1000;

/** A bare repository under `root` and a work tree that commits and pushes to it, as a CI would. */
export function pushableRepo(root: string, name: string) {
  const bare = path.join(root, `${name}.git`);
  const work = tempDir('skillpin-work-');
  const git = (...args: string[]) => run(args, `${clock++} +0000`);
  git('init', '--quiet', '--bare', '--initial-branch=main', bare);
  git('-C', work, 'init', '--quiet', '--initial-branch=main');
  git('-C', work, 'remote', 'add', 'origin', bare);
  const write = (files: Record<string, string | null>) => {
    for (const [file, content] of Object.entries(files)) {
      const full = path.join(work, file);
      if (content === null) rmSync(full, { force: true });
      else {
        mkdirSync(path.dirname(full), { recursive: true });
        writeFileSync(full, content);
      }
    }
  };
  return {
    bare,
    /** Commits the changes (`null` deletes a file) and pushes `branch`; returns the new commit. */
    push(files: Record<string, string | null>, message = 'update', branch = 'main'): string {
      write(files);
      git('-C', work, 'add', '--all');
      git('-C', work, 'commit', '--quiet', '--allow-empty', '-m', message);
      git('-C', work, 'push', '--quiet', '--force', 'origin', `HEAD:refs/heads/${branch}`);
      return git('-C', work, 'rev-parse', 'HEAD');
    },
    /** Replaces the branch with a new history holding only `files` (the old commits become unreachable) and prunes them. */
    forcePushOrphan(files: Record<string, string>, branch = 'main'): string {
      git('-C', work, 'checkout', '--quiet', '--orphan', `orphan-${clock}`);
      git('-C', work, 'rm', '-r', '--quiet', '--cached', '--ignore-unmatch', '.');
      git('-C', work, 'clean', '-fdq');
      write(files);
      git('-C', work, 'add', '--all');
      git('-C', work, 'commit', '--quiet', '-m', 'rewrite');
      git('-C', work, 'push', '--quiet', '--force', 'origin', `HEAD:refs/heads/${branch}`);
      git('-C', bare, 'reflog', 'expire', '--expire=now', '--all');
      git('-C', bare, 'gc', '--quiet', '--prune=now');
      return git('-C', work, 'rev-parse', 'HEAD');
    },
    deleteBranch(branch: string): void {
      git('-C', bare, 'update-ref', '-d', `refs/heads/${branch}`);
    },
  };
}

export const skillMd = (name: string, body: string) =>
  `---\nname: ${name}\ndescription: The ${name} skill, for tests.\n---\n${body}\n`;
