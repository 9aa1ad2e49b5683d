import { execFileSync } from 'node:child_process';
import { gitEnv as isolated } from '../../fixtures-repos/build.ts';

/** Git for tests: no user or system configuration, and a fixed author and committer at `date`. */
export function gitEnv(date = '2024-05-01T00:00:00Z'): NodeJS.ProcessEnv {
  return {
    ...isolated(),
    GIT_AUTHOR_NAME: 'test',
    GIT_AUTHOR_EMAIL: 'test@skillpin.invalid',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: 'test',
    GIT_COMMITTER_EMAIL: 'test@skillpin.invalid',
    GIT_COMMITTER_DATE: date,
  };
}

/** Runs git in `gitEnv(date)`; returns its standard output without the final newline. */
export function git(args: string[], date?: string): string {
  return execFileSync('git', args, { env: gitEnv(date), encoding: 'utf8' }).trim();
}
