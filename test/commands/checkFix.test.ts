import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { applyFixes } from '../../src/commands/checkFix.ts';
import type { CheckReport } from '../../src/commands/checkReport.ts';
import { patchedIndexer } from '../../src/commands/patchedIndex.ts';
import { cli } from '../helpers/cli.ts';
import { git } from '../helpers/git.ts';
import { fixture } from '../helpers/fixtures.ts';
import { makeRepo } from '../helpers/repo.ts';
import { tempDir } from '../helpers/temp.ts';

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

  it('--write says which file the OS refuses to write and claims only the files it wrote', async () => {
    const repo = makeRepo(FILES);
    const report = JSON.parse((await cli('check', repo.dir, '--json')).stdout) as CheckReport;
    const indexer = await patchedIndexer(repo.dir, report.commit, { paths: [], strictNames: false });
    const refused = path.join(repo.dir, 'skills/crlf/SKILL.md');
    const said: string[] = [];
    const io = { out: (text: string) => void said.push(text), err: (text: string) => void said.push(text) };
    await applyFixes(repo.dir, report, true, io, indexer, async (file, text) => {
      if (file === refused)
        throw Object.assign(new Error(`EACCES: permission denied, open '${file}'`), {
          code: 'EACCES',
          syscall: 'open',
          path: file,
        });
      writeFileSync(file, text);
    }).finally(() => indexer.close());
    expect(said).toEqual([
      [
        'fixed skills/2chat-automation/SKILL.md: name "-2chat-automation" → "2chat-automation" (servable)',
        'fixed skills/ahrefs-automation/SKILL.md: name "Ahrefs Automation" → "ahrefs-automation" (servable)',
        'fixed skills/long/SKILL.md: description cut to 1006 characters (servable)',
        `cannot fix skills/crlf/SKILL.md: cannot write it: open ${refused}: permission denied (EACCES)`,
        'made 3 refused skills servable',
        '',
      ].join('\n'),
    ]);
    expect(readFileSync(refused, 'utf8')).toBe(FILES['skills/crlf/SKILL.md']);
  });

  it('is a usage error with JSON output, --write alone, or a commit other than the work tree', async () => {
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
    expect(await cli('check', repo.dir, '--fix', '--ref', 'HEAD')).toEqual({
      status: 64,
      stdout: '',
      stderr: 'skillpin check: --fix edits the work tree: not with --commit, --ref or --no-worktree\n',
    });
  });
});

/** A work tree of the fix-patterns fixture: the mistakes published catalogs make, as real catalogs hold them. */
function patternsWorkTree(): string {
  const dir = tempDir('skillpin-fix-');
  git(['clone', '--quiet', fixture('fix-patterns').gitdir, dir]);
  return dir;
}

const CANNOT = [
  'cannot fix skills/-2chat-automation/SKILL.md: its folder "-2chat-automation" is not a valid name, so no name can match it: rename the folder (to "2chat-automation", say) and set the name to match',
  'cannot fix skills/a/twin/SKILL.md: another skill named "twin" is served at skills/b/twin: the fix would add a duplicate-name warning to both',
  'cannot fix skills/auto-tags/SKILL.md: line 6: YAML reads the value of "tags" as a list, and text follows it; remove what follows it',
  'cannot fix skills/capsule_crm-automation/SKILL.md: its folder "capsule_crm-automation" is not a valid name, so no name can match it: rename the folder (to "capsule-crm-automation", say) and set the name to match; skills/capsule-crm-automation is a skill already',
  'cannot fix skills/folded/SKILL.md: line 3: YAML reads the ": " in the value of "description" as the start of a mapping; quote the value, all of its lines',
  'cannot fix skills/pdf/SKILL.md: would collide with skills/pdf-tools (served as skills/pdf)',
];

type Report = {
  skills: Array<{ path: string; servedPath: string }>;
  problems: Array<{ path: string; reason: string }>;
};
const reportOf = async (dir: string): Promise<Report> =>
  JSON.parse((await cli('check', dir, '--json')).stdout) as Report;

describe('check --fix on the mistakes real catalogs make', () => {
  it('calls servable only what the index of the fixed tree serves, and says per skill why it cannot fix the rest', async () => {
    const dir = patternsWorkTree();
    const result = await cli('check', dir, '--fix');
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      [
        'would fix skills/ahrefs-automation/SKILL.md: name "Ahrefs Automation" → "ahrefs-automation" (servable)',
        'would fix skills/expert-pulse/SKILL.md: quoted the value of "description" (line 3) as written (servable)',
        'would fix skills/mention/SKILL.md: quoted the value of "description" (line 3) as written (servable)',
        'would fix skills/qwen-code/SKILL.md: quoted the value of "description" (line 3) as written (servable)',
        'would fix skills/seo-audit/SKILL.md: quoted the value of "argument-hint" (line 4) as written (servable)',
        'would fix skills/using-jira/SKILL.md: quoted the value of "description" (line 3) as written (servable)',
        'would fix skills/web-scraper/SKILL.md: quoted the value of "description" (line 3) as written (servable; then warned of: name-mismatch)',
        'would fix skills/word-docs/SKILL.md: quoted the value of "description" (line 3) as written (servable)',
        ...CANNOT,
        'would make 8 refused skills servable',
        '',
      ].join('\n'),
    );
    // The quoted values keep their text byte for byte, inner quotes and all.
    expect(result.stdout).toContain(
      [
        '-description: "Use it for "Word" documents (.docx), it\'s quick."',
        `+description: 'Use it for "Word" documents (.docx), it''s quick.'`,
      ].join('\n'),
    );
    expect(result.stdout).toContain(
      ['-argument-hint: [audit-type] [url] [keyword]', "+argument-hint: '[audit-type] [url] [keyword]'"].join(
        '\n',
      ),
    );
    writeFileSync(path.join(dir, 'fix.patch'), result.stdout);
    git(['-C', dir, 'apply', '--check', 'fix.patch']);
  });

  it('--write serves what it claimed, every skill served before where it was, and adds no problem it did not name', async () => {
    const dir = patternsWorkTree();
    const before = await reportOf(dir);
    expect((await cli('check', dir, '--fix', '--write')).stdout.split('\n').at(-2)).toBe(
      'made 8 refused skills servable',
    );
    const after = await reportOf(dir);
    const served = (report: Report) => report.skills.map((skill) => `${skill.path} → ${skill.servedPath}`);
    const fixed = [
      'ahrefs-automation',
      'expert-pulse',
      'mention',
      'qwen-code',
      'seo-audit',
      'using-jira',
      'word-docs',
    ];
    expect(served(after).sort()).toEqual(
      [
        ...served(before),
        ...fixed.map((name) => `skills/${name} → skills/${name}`),
        'skills/web-scraper → skills/scraper-pro',
      ].sort(),
    );
    const problems = (report: Report) => report.problems.map((p) => `${p.reason} ${p.path}`);
    // The one problem that is new is the fixed skill's own: its name is not its folder's (it was refused before).
    expect(problems(after).filter((p) => !problems(before).includes(p))).toEqual([
      'name-mismatch skills/web-scraper/SKILL.md',
    ]);
    expect(await cli('check', dir, '--fix')).toEqual({
      status: 1,
      stdout: '',
      stderr: [...CANNOT, 'would make 0 refused skills servable', ''].join('\n'),
    });
  });
});
