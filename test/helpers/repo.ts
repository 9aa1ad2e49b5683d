import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'test',
  GIT_AUTHOR_EMAIL: 'test@skillpin.invalid',
  GIT_AUTHOR_DATE: '2024-05-01T00:00:00Z',
  GIT_COMMITTER_NAME: 'test',
  GIT_COMMITTER_EMAIL: 'test@skillpin.invalid',
  GIT_COMMITTER_DATE: '2024-05-01T00:00:00Z',
};

/** A work-tree repository with one commit holding `files`; returns its folder and the commit. */
export function makeRepo(files: Record<string, string | Uint8Array>): { dir: string; commit: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'skillpin-repo-'));
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), content);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', dir, ...args], { env: GIT_ENV, encoding: 'utf8' }).trim();
  git('init', '--quiet', '--initial-branch=main');
  git('add', '--all');
  git('commit', '--quiet', '-m', 'fixture');
  return { dir, commit: git('rev-parse', 'HEAD') };
}
