import { describe, expect, it } from 'vitest';
import { discoverSkills, MAX_SYMLINK_HOPS } from '../../src/skills/index.ts';
import { resolveInTree } from '../../src/skills/links.ts';
import type { TreeEntry } from '../../src/shared/tree.ts';

const file = (path: string): TreeEntry => ({ path, type: 'file', id: `blob:${path}` });
const link = (path: string, target?: string): TreeEntry =>
  target === undefined
    ? { path, type: 'symlink', id: `link:${path}` }
    : { path, type: 'symlink', id: `link:${path}`, target };
const at = (entries: readonly TreeEntry[]) => {
  const byPath = new Map(entries.map((entry) => [entry.path, entry]));
  return (path: string) => byPath.get(path);
};

describe('resolveInTree', () => {
  it('follows a link anywhere on the path, a folder too, inside the tree', () => {
    const entries = [
      file('skills/pdf/SKILL.md'),
      link('mirror/pdf', '../skills/pdf'),
      link('alias', 'mirror'),
    ];
    expect(resolveInTree('alias/pdf/SKILL.md', at(entries))).toEqual({
      kind: 'found',
      entry: file('skills/pdf/SKILL.md'),
    });
  });

  it('says what a link that leaves the repository, or is absolute, points at', () => {
    const entries = [link('a/up', '../../x'), link('a/abs', '/etc/passwd')];
    expect(resolveInTree('a/up', at(entries))).toEqual({
      kind: 'outside',
      target: '../../x',
      absolute: false,
    });
    expect(resolveInTree('a/abs', at(entries))).toEqual({
      kind: 'outside',
      target: '/etc/passwd',
      absolute: true,
    });
  });

  it('keeps every step within the folder it is given, and never on the folder itself', () => {
    const entries = [file('s/a/guide.md'), link('s/a/out', '../b.md'), link('s/a/self', '.')];
    expect(resolveInTree('s/a/out', at(entries), 's/a')).toEqual({
      kind: 'outside',
      target: '../b.md',
      absolute: false,
    });
    expect(resolveInTree('s/a/self', at(entries), 's/a')).toEqual({
      kind: 'outside',
      target: '.',
      absolute: false,
    });
    expect(resolveInTree('s/a/out', at(entries))).toEqual({ kind: 'missing', target: '../b.md' });
  });

  it(`follows ${MAX_SYMLINK_HOPS} links and calls the next one a loop`, () => {
    // l0 -> l1 -> ... -> l{n} -> f
    const chain = (n: number) => [
      ...Array.from({ length: n + 1 }, (_, i) => link(`l${i}`, i === n ? 'f' : `l${i + 1}`)),
      file('f'),
    ];
    expect(resolveInTree('l0', at(chain(MAX_SYMLINK_HOPS - 1)))).toEqual({ kind: 'found', entry: file('f') });
    expect(resolveInTree('l0', at(chain(MAX_SYMLINK_HOPS)))).toEqual({ kind: 'loop' });
    expect(resolveInTree('self', at([link('self', 'self')]))).toEqual({ kind: 'loop' });
  });

  it('finds nothing below a file, and nothing through a link whose target was not read', () => {
    const entries = [file('a.md'), link('long')];
    expect(resolveInTree('a.md/SKILL.md', at(entries))).toEqual({ kind: 'missing', target: 'a.md/SKILL.md' });
    expect(resolveInTree('long/SKILL.md', at(entries))).toEqual({ kind: 'missing', target: '' });
  });
});

describe('skills reached through links', () => {
  const skill = [file('skills/pdf/SKILL.md'), file('skills/pdf/guide.md')];

  it('counts a SKILL.md link and a folder link to a skill as that skill, once, each reported as info', () => {
    const found = discoverSkills([
      ...skill,
      link('.gemini/skills/pdf/SKILL.md', '../../../skills/pdf/SKILL.md'),
      link('.codex/skills/pdf', '../../skills/pdf'),
    ]);
    expect(found.skills.map((s) => [s.dir, s.skillMd, s.files.map((f) => f.relPath)])).toEqual([
      ['skills/pdf', 'blob:skills/pdf/SKILL.md', ['SKILL.md', 'guide.md']],
    ]);
    expect(found.problems).toEqual([
      {
        path: '.gemini/skills/pdf/SKILL.md',
        reason: 'skill-alias',
        severity: 'info',
        detail: 'symlink to the skill skills/pdf: the same skill, counted once, at skills/pdf',
      },
      {
        path: '.codex/skills/pdf',
        reason: 'skill-alias',
        severity: 'info',
        detail: 'symlink to the skill skills/pdf: the same skill, counted once, at skills/pdf',
      },
    ]);
  });

  it('finds a skill that only links under the search paths reach at its own path, once', () => {
    const found = discoverSkills(
      [...skill, link('mirror/a', '../skills/pdf'), link('mirror/b/SKILL.md', '../../skills/pdf/SKILL.md')],
      ['mirror'],
    );
    expect(found.skills.map((s) => [s.dir, s.files.map((f) => f.path)])).toEqual([
      ['skills/pdf', ['skills/pdf/SKILL.md', 'skills/pdf/guide.md']],
    ]);
    expect(found.problems.map((p) => [p.path, p.reason, p.detail])).toEqual([
      [
        'mirror/a',
        'skill-alias',
        'symlink to the skill skills/pdf, which the search paths do not reach: the skill is found at skills/pdf',
      ],
      [
        'mirror/b/SKILL.md',
        'skill-alias',
        'symlink to the skill skills/pdf, which the search paths do not reach: the skill is found at skills/pdf',
      ],
    ]);
  });

  it('refuses a SKILL.md link that leaves the repository, leads nowhere, loops or leads to no skill, with its reason', () => {
    const found = discoverSkills([
      file('docs/notes.md'),
      link('a/SKILL.md', '../../SKILL.md'),
      link('b/SKILL.md', '/home/me/skills/b/SKILL.md'),
      link('c/SKILL.md', '../gone/SKILL.md'),
      link('d/SKILL.md', 'SKILL.md'),
      link('e/SKILL.md', '../docs/notes.md'),
    ]);
    expect(found.skills).toEqual([]);
    expect(found.problems.map((p) => [p.path, p.reason, p.severity, p.detail])).toEqual([
      [
        'a/SKILL.md',
        'skill-link-outside',
        'error',
        'SKILL.md is a symlink to "../../SKILL.md", which leaves the repository; the skill is not served',
      ],
      [
        'b/SKILL.md',
        'skill-link-outside',
        'error',
        'SKILL.md is a symlink to the absolute path "/home/me/skills/b/SKILL.md"; the skill is not served',
      ],
      [
        'c/SKILL.md',
        'skill-link-dangling',
        'error',
        'SKILL.md is a symlink to "../gone/SKILL.md": nothing there in this commit; the skill is not served',
      ],
      [
        'd/SKILL.md',
        'skill-link-loop',
        'error',
        `SKILL.md is a symlink chain longer than ${MAX_SYMLINK_HOPS} hops (a loop); the skill is not served`,
      ],
      [
        'e/SKILL.md',
        'skill-md-not-file',
        'error',
        'SKILL.md is a symlink to docs/notes.md, which is not the SKILL.md of a skill folder; the skill is not served',
      ],
    ]);
  });

  it('takes a folder link that leads to no skill as no skill, and reports nothing of it', () => {
    const found = discoverSkills([
      ...skill,
      link('m/docs', '../docs'),
      link('m/out', '../../elsewhere'),
      link('m/self', 'self'),
      link('m/file', '../skills/pdf/guide.md'),
    ]);
    expect(found.skills.map((s) => s.dir)).toEqual(['skills/pdf']);
    expect(found.problems).toEqual([]);
  });
});
