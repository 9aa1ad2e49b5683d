import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { CheckReport } from '../../src/commands/checkReport.ts';
import { cli } from '../helpers/cli.ts';
import { skillMd } from '../helpers/pushable.ts';
import { makeRepo } from '../helpers/repo.ts';

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));

const LAYOUTS =
  'a skill is a folder holding SKILL.md, at any depth: the repository root (a repository that is one skill), skills/<name>/SKILL.md, .claude/skills/<name>/SKILL.md, or any other folder';

const problemsOf = (stdout: string) =>
  (JSON.parse(stdout) as CheckReport).problems.map((p) => [p.path, p.reason, p.severity, p.detail]);

describe('check of a repository with no SKILL.md', () => {
  it('warns, saying where it looked and what a skill looks like; --strict fails on it', async () => {
    const { dir } = makeRepo({ 'README.md': '# not skills\n', 'docs/guide.md': 'guide\n' });
    const checked = await cli('check', dir, '--json');
    expect([checked.status, problemsOf(checked.stdout)]).toEqual([
      0,
      [['.', 'skills-not-found', 'warning', `no SKILL.md anywhere in the repository; ${LAYOUTS}`]],
    ]);
    expect((await cli('check', dir, '--strict', '--json')).status).toBe(1);
  });

  it('names each folder of --paths it looked in; one not in the commit keeps its own error', async () => {
    const { dir } = makeRepo({ 'docs/guide.md': 'guide\n', 'other/SKILL.md': skillMd('other', 'elsewhere') });
    const checked = await cli('check', dir, '--paths', 'docs', 'nope', '--json');
    expect([checked.status, problemsOf(checked.stdout)]).toEqual([
      1,
      [
        [
          'nope',
          'paths-not-found',
          'error',
          'paths names "nope", which is not in this commit, so no skill is searched for there',
        ],
        ['docs', 'skills-not-found', 'warning', `no SKILL.md under docs/ (--paths); ${LAYOUTS}`],
      ],
    ]);
  });

  it('says nothing of the kind when a SKILL.md was found, served or refused', async () => {
    const refused = makeRepo({ 'skills/bad/SKILL.md': 'no frontmatter\n' });
    expect(
      problemsOf((await cli('check', refused.dir, '--json')).stdout).map(([, reason]) => reason),
    ).toEqual(['frontmatter-missing']);
    const served = makeRepo({ 'skills/alpha/SKILL.md': skillMd('alpha', 'one') });
    expect(await cli('check', served.dir, '--strict', '--json')).toMatchObject({ status: 0 });
  });
});
