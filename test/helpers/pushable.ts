import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

let clock = Date.parse('2024-06-01T00:00:00Z') / 1000;

/** A bare repository under `root` and a work tree that commits and pushes to it, as a CI would. */
export function pushableRepo(root: string, name: string) {
  const bare = path.join(root, `${name}.git`);
  const work = mkdtempSync(path.join(tmpdir(), 'skillpin-work-'));
  const env = () => {
    const when = `${clock++} +0000`;
    return {
      ...process.env,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@skillpin.invalid',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@skillpin.invalid',
      GIT_AUTHOR_DATE: when,
      GIT_COMMITTER_DATE: when,
    };
  };
  const git = (...args: string[]) => execFileSync('git', args, { env: env(), encoding: 'utf8' }).trim();
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
      execFileSync('git', ['-C', work, 'clean', '-fdq'], { env: env() });
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
