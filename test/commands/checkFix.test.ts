import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { cli } from '../helpers/cli.ts';
import { git } from '../helpers/git.ts';
import { makeRepo } from '../helpers/repo.ts';

beforeAll(() => void vi.stubEnv('SKILLPIN_LOG_LEVEL', 'silent'));

const SENTENCE = 'One sentence here. ';
/** 60 sentences, 1,140 characters: the last that fits in 1,024 ends at character 1,006. */
const LONG = SENTENCE.repeat(60).trimEnd();
const CUT = SENTENCE.repeat(53).trimEnd();

const FILES = {
  'skills/ahrefs-automation/SKILL.md':
    '---\nname: Ahrefs Automation\ndescription: Automates Ahrefs.\nlicense: MIT\n---\n# Ahrefs\n\nbody\n',
  'skills/2chat-automation/SKILL.md': '---\nname: "-2chat-automation"\ndescription: Chats.\n---\nbody\n',
  'skills/long/SKILL.md': `---\nname: long\ndescription: >\n  ${LONG}\nmetadata:\n  owner: me\n---\nbody\n`,
  'skills/ok/SKILL.md': '---\nname: ok\ndescription: Fine.\n---\nbody\n',
  'skills/crlf/SKILL.md': '---\r\nname: CRLF Skill\r\ndescription: Windows.\r\n---\r\nbody\r\n',
};

describe('check --fix', () => {
  it('prints a patch of the frontmatter lines that refuse each skill, and which skills it makes servable', async () => {
    const repo = makeRepo(FILES);
    const result = await cli('check', repo.dir, '--fix');
    expect(result.status).toBe(1);
    expect(result.stdout).toBe(
      [
        '--- a/skills/2chat-automation/SKILL.md',
        '+++ b/skills/2chat-automation/SKILL.md',
        '@@ -1,5 +1,5 @@',
        ' ---',
        '-name: "-2chat-automation"',
        '+name: 2chat-automation',
        ' description: Chats.',
        ' ---',
        ' body',
        '--- a/skills/ahrefs-automation/SKILL.md',
        '+++ b/skills/ahrefs-automation/SKILL.md',
        '@@ -1,5 +1,5 @@',
        ' ---',
        '-name: Ahrefs Automation',
        '+name: ahrefs-automation',
        ' description: Automates Ahrefs.',
        ' license: MIT',
        ' ---',
        '--- a/skills/crlf/SKILL.md',
        '+++ b/skills/crlf/SKILL.md',
        '@@ -1,5 +1,5 @@',
        ' ---\r',
        '-name: CRLF Skill\r',
        '+name: crlf\r',
        ' description: Windows.\r',
        ' ---\r',
        ' body\r',
        '--- a/skills/long/SKILL.md',
        '+++ b/skills/long/SKILL.md',
        '@@ -1,7 +1,6 @@',
        ' ---',
        ' name: long',
        '-description: >',
        `-  ${LONG}`,
        `+description: ${CUT}`,
        ' metadata:',
        '   owner: me',
        ' ---',
        '',
      ].join('\n'),
    );
    expect(result.stderr).toBe(
      [
        'would fix skills/2chat-automation/SKILL.md: name "-2chat-automation" → "2chat-automation" (servable)',
        'would fix skills/ahrefs-automation/SKILL.md: name "Ahrefs Automation" → "ahrefs-automation" (servable)',
        'would fix skills/crlf/SKILL.md: name "CRLF Skill" → "crlf" (servable)',
        'would fix skills/long/SKILL.md: description cut to 1006 characters (servable)',
        'would make 4 refused skills servable',
        '',
      ].join('\n'),
    );
    // Nothing was written; the patch applies as it is.
    expect(git(['-C', repo.dir, 'status', '--porcelain'])).toBe('');
    writeFileSync(path.join(repo.dir, 'fix.patch'), result.stdout);
    git(['-C', repo.dir, 'apply', '--check', 'fix.patch']);
  });

  it('--write edits the files in place, byte for byte outside the changed lines, and the check then passes', async () => {
    const repo = makeRepo(FILES);
    const written = await cli('check', repo.dir, '--fix', '--write');
    expect(written).toEqual({
      status: 1,
      stdout: [
        'fixed skills/2chat-automation/SKILL.md: name "-2chat-automation" → "2chat-automation" (servable)',
        'fixed skills/ahrefs-automation/SKILL.md: name "Ahrefs Automation" → "ahrefs-automation" (servable)',
        'fixed skills/crlf/SKILL.md: name "CRLF Skill" → "crlf" (servable)',
        'fixed skills/long/SKILL.md: description cut to 1006 characters (servable)',
        'made 4 refused skills servable',
        '',
      ].join('\n'),
      stderr: '',
    });
    const read = (file: string) => readFileSync(path.join(repo.dir, file), 'utf8');
    expect(read('skills/long/SKILL.md')).toBe(
      `---\nname: long\ndescription: ${CUT}\nmetadata:\n  owner: me\n---\nbody\n`,
    );
    expect(read('skills/crlf/SKILL.md')).toBe(
      '---\r\nname: crlf\r\ndescription: Windows.\r\n---\r\nbody\r\n',
    );
    expect(read('skills/ok/SKILL.md')).toBe(FILES['skills/ok/SKILL.md']);
    const after = await cli('check', repo.dir, '--problems-only');
    expect([after.status, after.stdout.split('\n')[1]]).toEqual([0, '5 skills served, 0 errors, 0 warnings']);
    expect(await cli('check', repo.dir, '--fix')).toEqual({
      status: 0,
      stdout: '',
      stderr: 'would make 0 refused skills servable\n',
    });
  });

  it('is a usage error with JSON output, or --write alone', async () => {
    const repo = makeRepo(FILES);
    expect(await cli('check', repo.dir, '--fix', '--json')).toEqual({
      status: 64,
      stdout:
        '{"version":1,"error":{"reason":"usage","detail":"--fix prints a patch: not with --json or --format"}}\n',
      stderr: '',
    });
    expect(await cli('check', repo.dir, '--write')).toEqual({
      status: 64,
      stdout: '',
      stderr: 'skillpin check: --write goes with --fix\n',
    });
  });
});
