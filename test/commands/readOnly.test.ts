import { execFileSync } from 'node:child_process';
import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BACKENDS, withEnv } from '../helpers/backends.ts';
import { cli } from '../helpers/cli.ts';
import { repositoryPrint } from '../helpers/fileHashes.ts';
import { git, gitEnv } from '../helpers/git.ts';
import { skillMd } from '../helpers/pushable.ts';
import { makeRepo } from '../helpers/repo.ts';
import { writeConfig } from '../helpers/server.ts';

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));
afterAll(() => void vi.unstubAllEnvs());

/** A skill whose name `check --fix` corrects. */
const MISNAMED = '---\nname: Ahrefs Automation\ndescription: Automates Ahrefs.\n---\nbody\n';

/**
 * A work tree of two commits (the index holding git's cache-tree), then edited: one file changed, one new, and one
 * touched with its bytes kept, so its index entry is stale and a plain `git status` would rewrite the index.
 */
function editedRepo(): { dir: string; config: string } {
  const repo = makeRepo({
    'skills/alpha/SKILL.md': skillMd('alpha', 'one'),
    'skills/alpha/guide.md': 'guide\n',
    'skills/ahrefs-automation/SKILL.md': MISNAMED,
  });
  writeFileSync(path.join(repo.dir, 'skills', 'alpha', 'guide.md'), 'guide, second\n');
  git(['-C', repo.dir, 'commit', '--quiet', '--all', '-m', 'second']);
  writeFileSync(path.join(repo.dir, 'skills', 'alpha', 'guide.md'), 'guide, edited\n');
  mkdirSync(path.join(repo.dir, 'skills', 'beta'));
  writeFileSync(path.join(repo.dir, 'skills', 'beta', 'SKILL.md'), skillMd('beta', 'two'));
  const later = new Date(Date.now() + 60_000);
  utimesSync(path.join(repo.dir, 'skills', 'alpha', 'SKILL.md'), later, later);
  const config = writeConfig({ sources: [{ id: 'local', path: repo.dir, ref: 'HEAD' }] });
  return { dir: repo.dir, config };
}

/** Each read-only command, how it is run on the repository (or a config of it), and the exit status it gives. */
const COMMANDS: Array<[string, (dir: string, config: string) => string[], number]> = [
  ['check', (dir) => ['check', dir], 1],
  ['check --worktree', (dir) => ['check', dir, '--worktree'], 1],
  ['check --no-worktree', (dir) => ['check', dir, '--no-worktree'], 1],
  ['check --json', (dir) => ['check', dir, '--json'], 1],
  ['check --fix', (dir) => ['check', dir, '--fix'], 1],
  ['diff', (dir) => ['diff', dir, 'HEAD~1', 'HEAD'], 1],
  ['status', (_, config) => ['status', '--config', config], 0],
  ['verify', (_, config) => ['verify', '--config', config], 0],
];

describe('the fixture', () => {
  it('is one git itself would write to: a plain `git status` rewrites its index', () => {
    const repo = editedRepo();
    const before = repositoryPrint(repo.dir);
    execFileSync('git', ['-C', repo.dir, 'status', '--porcelain'], { env: gitEnv() });
    const after = repositoryPrint(repo.dir);
    expect(after.gitdir['index']).not.toBe(before.gitdir['index']);
    expect(after.indexMtimeNs).not.toBe(before.indexMtimeNs);
  });
});

describe.each(BACKENDS)('read-only commands on the $name backend', ({ name }) => {
  it.each(COMMANDS)('%s leaves .git/ and the work tree byte for byte', async (_, args, status) => {
    const repo = editedRepo();
    await withEnv({ SKILLPIN_GIT_BACKEND: name }, async () => {
      // status reads what a sync recorded: the sync is not under test.
      if (args('', '')[0] === 'status') expect((await cli('sync', '--config', repo.config)).status).toBe(0);
      const before = repositoryPrint(repo.dir);
      const result = await cli(...args(repo.dir, repo.config));
      expect([result.status, result.stderr]).toEqual([status, expect.any(String)]);
      expect(repositoryPrint(repo.dir)).toEqual(before);
    });
  });
});
