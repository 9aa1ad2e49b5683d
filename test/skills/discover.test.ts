import { describe, expect, it } from 'vitest';
import { discoverSkills, MAX_LISTED_BYTES, MAX_SKILL_FILES, unusableName } from '../../src/skills/index.ts';
import type { TreeEntry } from '../../src/shared/tree.ts';

const file = (path: string, id = path): TreeEntry => ({ path, type: 'file', id });

describe('names git allows and skills cannot serve', () => {
  it('leaves out ".", "..", ".git" (a file, a folder, any case) and keeps the rest of the skill', () => {
    const found = discoverSkills([
      file('s/x/SKILL.md'),
      file('s/x/guide.md'),
      file('s/x/.'),
      file('s/x/..'),
      file('s/x/.git'),
      file('s/x/sub/.Git/config'),
      file('s/x/sub/../escape.md'),
      file('s/x/.gitignore'),
      file('s/x/..hidden'),
    ]);
    expect(found.skills.map((s) => [s.dir, s.files.map((f) => f.relPath)])).toEqual([
      ['s/x', ['SKILL.md', 'guide.md', '.gitignore', '..hidden']],
    ]);
    expect(found.problems).toEqual([
      {
        path: 's/x/.',
        reason: 'file-name-invalid',
        severity: 'warning',
        detail: 'the path holds the name ".", which no URI can name; left out',
      },
      {
        path: 's/x/..',
        reason: 'file-name-invalid',
        severity: 'warning',
        detail: 'the path holds the name "..", which no URI can name; left out',
      },
      {
        path: 's/x/.git',
        reason: 'file-name-invalid',
        severity: 'warning',
        detail: 'the path holds the name ".git", which git refuses to check out; left out',
      },
      {
        path: 's/x/sub/.Git/config',
        reason: 'file-name-invalid',
        severity: 'warning',
        detail: 'the path holds the name ".Git", which git refuses to check out; left out',
      },
      {
        path: 's/x/sub/../escape.md',
        reason: 'file-name-invalid',
        severity: 'warning',
        detail: 'the path holds the name "..", which no URI can name; left out',
      },
    ]);
  });

  it('does not serve a skill whose folder path holds such a name', () => {
    const found = discoverSkills([
      file('s/../SKILL.md'),
      file('s/.git/hooks/SKILL.md'),
      file('s/./SKILL.md'),
      file('s/good/SKILL.md'),
    ]);
    expect(found.skills.map((s) => s.dir)).toEqual(['s/good']);
    expect(found.problems.map((p) => [p.path, p.reason, p.severity, p.detail])).toEqual([
      [
        's/../SKILL.md',
        'skill-path-invalid',
        'error',
        'the skill\'s path holds the name "..", which no URI can name; the skill is not served',
      ],
      [
        's/.git/hooks/SKILL.md',
        'skill-path-invalid',
        'error',
        'the skill\'s path holds the name ".git", which git refuses to check out; the skill is not served',
      ],
      [
        's/./SKILL.md',
        'skill-path-invalid',
        'error',
        'the skill\'s path holds the name ".", which no URI can name; the skill is not served',
      ],
    ]);
  });

  it.each([
    ['a/b.md', undefined],
    ['a/.well-known/x', undefined],
    ['a/...', undefined],
    ['a/.git.md', undefined],
    ['a/ctl\u0001.md', 'a control character, a backslash or bytes that are not UTF-8'],
    ['a/back\\slash.md', 'a control character, a backslash or bytes that are not UTF-8'],
    ['a/\uFFFD.md', 'a control character, a backslash or bytes that are not UTF-8'],
    ['a/GIT/.GIT', 'the name ".GIT", which git refuses to check out'],
  ])('unusableName(%j) is %j', (path, why) => {
    expect(unusableName(path)).toBe(why);
  });
});

describe('paths that name nothing', () => {
  const entries = [file('skills/pdf/SKILL.md'), file('skills/pdf/guide.md'), file('docs/readme.md')];

  it('reports each paths entry absent from the commit as an error, with the folder it most likely meant', () => {
    const found = discoverSkills(entries, ['skills/pdf', 'skilz', 'skills/typo', 'Docs']);
    expect(found.skills.map((s) => s.dir)).toEqual(['skills/pdf']);
    expect(found.problems).toEqual([
      {
        path: 'skilz',
        reason: 'paths-not-found',
        severity: 'error',
        detail:
          'paths names "skilz", which is not in this commit, so no skill is searched for there; did you mean "skills"?',
      },
      {
        path: 'skills/typo',
        reason: 'paths-not-found',
        severity: 'error',
        detail: 'paths names "skills/typo", which is not in this commit, so no skill is searched for there',
      },
      {
        path: 'Docs',
        reason: 'paths-not-found',
        severity: 'error',
        detail:
          'paths names "Docs", which is not in this commit, so no skill is searched for there; did you mean "docs"?',
      },
    ]);
  });

  it('takes a folder without skills, or a file, as found', () => {
    expect(discoverSkills(entries, ['docs', 'skills/pdf/guide.md']).problems).toEqual([]);
  });
});

describe('a deeply nested tree', () => {
  it('finds the files of a skill 100,000 folders deep without running out of stack', () => {
    const deep = `s/${'d/'.repeat(100_000)}`;
    const found = discoverSkills([file('s/SKILL.md'), file(`${deep}SKILL.md`), file(`${deep}x.md`)]);
    expect(found.problems).toEqual([]);
    const below = deep.length - 's/'.length;
    expect(found.skills.map((skill) => [skill.dir, skill.files.map((f) => f.relPath.length)])).toEqual([
      ['s', [8, below + 8, below + 4]],
      [deep.slice(0, -1), [8, 4]],
    ]);
  });
});

describe(`nested skills past ${MAX_SKILL_FILES} files`, () => {
  it('lists no file of a skill over the limit but counts them all', () => {
    // 20 nested skills, each folder with its SKILL.md and 40 more files: the skill at level k holds (20 - k) × 41.
    const entries = Array.from({ length: 20 }, (_, level) => {
      const dir = 'd/'.repeat(level);
      return [file(`${dir}SKILL.md`), ...Array.from({ length: 40 }, (_, i) => file(`${dir}f${i}.md`))];
    }).flat();
    entries.sort((a, b) => (a.path < b.path ? -1 : 1));
    const found = discoverSkills(entries);
    expect(found.overLimit).toBeUndefined();
    expect(found.skills.map((skill) => [skill.fileCount, skill.files.length])).toEqual(
      Array.from({ length: 20 }, (_, level) => {
        const count = (20 - level) * 41;
        return [count, count > MAX_SKILL_FILES ? 0 : count];
      }),
    );
  });

  it(`stops listing past ${MAX_LISTED_BYTES} bytes: a chain of 4,000 nested skills would list 131,328 files of 8,000-character paths`, () => {
    const entries = Array.from({ length: 4_000 }, (_, i) => file(`${'d/'.repeat(i)}SKILL.md`));
    entries.sort((a, b) => (a.path < b.path ? -1 : 1));
    const found = discoverSkills(entries);
    expect(found).toEqual({ skills: [], problems: [], overLimit: true });
  });
});
