import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { CheckReport } from '../../src/commands/checkReport.ts';
import { cli } from '../helpers/cli.ts';
import { fixture } from '../helpers/fixtures.ts';

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));

const mirrors = fixture('mirrors');
const c1 = mirrors.commits['c1']!;

describe('check on a mirrored catalog', () => {
  it('never fails on information, even under --strict, and counts it apart', async () => {
    const result = await cli('check', mirrors.gitdir, '--paths', '.codex/skills', '--strict', '--json');
    const report = JSON.parse(result.stdout) as CheckReport;
    expect(result.status).toBe(0);
    expect([report.errors, report.warnings, report.infos, report.ok]).toEqual([0, 0, 2, true]);
    expect(report.skills.map((s) => s.uri)).toEqual([
      `skill://mirrors/${c1}/extra/lint/SKILL.md`,
      `skill://mirrors/${c1}/skills/pdf/SKILL.md`,
    ]);
  });

  it('says how much is information on its summary line, and exits 1 for the broken links', async () => {
    const result = await cli('check', mirrors.gitdir, '--problems-only');
    expect(result.status).toBe(1);
    expect(result.stdout.split('\n').slice(1, 6)).toEqual([
      '3 skills served, 4 errors, 0 warnings, 5 info',
      '',
      'Problems:',
      '  info     skill-alias             .codex/skills/lint',
      '           symlink to the skill extra/lint: the same skill, counted once, at extra/lint',
    ]);
  });

  it('annotates information as a notice on the link', async () => {
    const result = await cli('check', mirrors.gitdir, '--paths', '.codex/skills', '--format', 'github');
    expect(result.status).toBe(0);
    expect(result.stdout).toBe(
      '::notice file=.codex/skills/lint,title=skill-alias::symlink to the skill extra/lint, which the search paths do not reach: the skill is found at extra/lint\n' +
        '::notice file=.codex/skills/pdf,title=skill-alias::symlink to the skill skills/pdf, which the search paths do not reach: the skill is found at skills/pdf\n' +
        `local:${mirrors.gitdir} @ ${c1}: 2 skills served, 0 errors, 0 warnings, 2 info\n`,
    );
  });
});
