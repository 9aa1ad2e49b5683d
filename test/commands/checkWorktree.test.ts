import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { CheckReport } from '../../src/commands/checkReport.ts';
import { cli } from '../helpers/cli.ts';
import { git } from '../helpers/git.ts';
import { skillMd } from '../helpers/pushable.ts';
import { makeRepo } from '../helpers/repo.ts';
import { tempDir } from '../helpers/temp.ts';

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));

/** A repository whose work tree has a new skill, a modified one, an ignored file and an untracked one. */
function changedRepo(): { dir: string; commit: string } {
  const repo = makeRepo({
    '.gitignore': '*.log\n',
    'skills/alpha/SKILL.md': skillMd('alpha', 'one'),
    'skills/alpha/guide.md': 'guide\n',
  });
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(repo.dir, file)), { recursive: true });
    writeFileSync(path.join(repo.dir, file), text);
  };
  write('skills/alpha/guide.md', 'guide, edited\n');
  write('skills/alpha/debug.log', 'ignored\n');
  write('skills/alpha/notes.md', 'untracked, not ignored\n');
  write('skills/beta/SKILL.md', skillMd('beta', 'two'));
  return repo;
}

describe('check --worktree', () => {
  it('indexes the work tree as `git add -A` would stage it, leaving the index and HEAD untouched', async () => {
    const repo = changedRepo();
    const status = git(['-C', repo.dir, 'status', '--porcelain']);
    const index = readFileSync(path.join(repo.dir, '.git', 'index'));
    const result = await cli('check', repo.dir, '--worktree', '--json');
    const report = JSON.parse(result.stdout) as CheckReport;
    expect(git(['-C', repo.dir, 'status', '--porcelain'])).toBe(status);
    expect(readFileSync(path.join(repo.dir, '.git', 'index')).equals(index)).toBe(true);
    expect(git(['-C', repo.dir, 'rev-parse', 'HEAD'])).toBe(repo.commit);
    expect(git(['-C', repo.dir, 'for-each-ref', '--format=%(refname)'])).toBe('refs/heads/main');
    // What a commit of everything would hold: the same tree, the same files served.
    git(['-C', repo.dir, 'add', '--all']);
    git(['-C', repo.dir, 'commit', '--quiet', '-m', 'everything']);
    const tree = git(['-C', repo.dir, 'rev-parse', 'HEAD^{tree}']);
    const id = path.basename(repo.dir).toLowerCase();
    expect(result.status).toBe(0);
    expect(report.commit).toBe(tree);
    expect(report.worktree).toEqual({ tree, default: false });
    expect(report.skills.map((s) => [s.uri, s.files, s.bytes])).toEqual([
      [`skill://${id}/${tree}/skills/alpha/SKILL.md`, 3, skillMd('alpha', 'one').length + 14 + 23],
      [`skill://${id}/${tree}/skills/beta/SKILL.md`, 1, skillMd('beta', 'two').length],
    ]);
    expect(report.uncommitted).toBeUndefined();
  });

  it('is the default in a work tree with changes, and says so on its first line', async () => {
    const repo = changedRepo();
    const result = await cli('check', repo.dir);
    const tree = (JSON.parse((await cli('check', repo.dir, '--json')).stdout) as CheckReport).commit;
    expect(result.status).toBe(0);
    expect(result.stdout.split('\n').slice(0, 2)).toEqual([
      `local:${repo.dir} @ work tree, tree ${tree} (it has uncommitted changes: checked as \`git add -A\` would stage it; --no-worktree checks HEAD)`,
      '2 skills served, 0 errors, 0 warnings',
    ]);
  });

  it('exits 1 for a problem only the work tree has, 0 for HEAD; 64 when asked for a bare repository', async () => {
    const repo = makeRepo({ 'skills/alpha/SKILL.md': skillMd('alpha', 'one') });
    writeFileSync(
      path.join(repo.dir, 'skills', 'alpha', 'SKILL.md'),
      '---\nname: alpha\n---\nno description\n',
    );
    const worktree = await cli('check', repo.dir, '--problems-only');
    expect(worktree.status).toBe(1);
    expect(worktree.stdout.split('\n').slice(1, 5)).toEqual([
      '0 skills served, 1 error, 0 warnings',
      '',
      'Problems:',
      '  error    description-missing     skills/alpha/SKILL.md:1',
    ]);
    expect((await cli('check', repo.dir, '--no-worktree')).status).toBe(0);
    const bare = path.join(tempDir('skillpin-bare-'), 'repo.git');
    git(['clone', '--quiet', '--bare', repo.dir, bare]);
    expect(await cli('check', bare, '--worktree')).toEqual({
      status: 64,
      stdout: '',
      stderr: 'skillpin check: --worktree needs a local work tree (not a bare repository or a remote)\n',
    });
    expect(await cli('check', repo.dir, '--worktree', '--ref', 'main')).toEqual({
      status: 64,
      stdout: '',
      stderr: 'skillpin check: --worktree checks the work tree: not with --commit, --ref or signature keys\n',
    });
  });

  it('--worktree without git on PATH says so, and how to check HEAD instead', async () => {
    const repo = changedRepo();
    const searchPath = process.env['PATH'];
    vi.stubEnv('PATH', tempDir('skillpin-no-git-'));
    try {
      expect(await cli('check', repo.dir, '--worktree')).toEqual({
        status: 2,
        stdout: '',
        stderr:
          'skillpin check: source-unsupported: reading the work tree needs git on PATH (none found): commit and check HEAD with --ref HEAD\n',
      });
    } finally {
      vi.stubEnv('PATH', searchPath);
    }
  });
});
