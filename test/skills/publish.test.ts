import { describe, expect, it } from 'vitest';
import {
  discoverSkills,
  MAX_SKILL_BYTES,
  MAX_SKILL_FILES,
  MAX_URI_BYTES,
  parseSkillMd,
  publishSkills,
  type SkillCandidate,
} from '../../src/skills/index.ts';
import type { TreeEntry } from '../../src/shared/tree.ts';

const file = (path: string, id = path): TreeEntry => ({ path, type: 'file', id });
const skillMd = (name: string) =>
  parseSkillMd(new TextEncoder().encode(`---\nname: ${name}\ndescription: d\n---\n`));

/** Candidates from a tree where each SKILL.md's frontmatter is given by folder. */
function candidates(entries: TreeEntry[], names: Record<string, string>, size = 10): SkillCandidate[] {
  return discoverSkills(entries).skills.map((skill) => ({
    dir: skill.dir,
    parsed: skillMd(names[skill.dir]!),
    files: skill.files.map((m) => ({ ...m, size })),
    fileCount: skill.fileCount,
  }));
}

describe('discoverSkills', () => {
  it('finds skills at any depth, the root included, and gives nested files to every enclosing skill', () => {
    const entries = [
      file('SKILL.md'),
      file('a/SKILL.md'),
      file('a/b/SKILL.md'),
      file('a/b/x.md'),
      file('c/readme.md'),
    ];
    const found = discoverSkills(entries);
    expect(found.skills.map((s) => [s.dir, s.files.map((m) => m.relPath)])).toEqual([
      ['', ['SKILL.md', 'a/SKILL.md', 'a/b/SKILL.md', 'a/b/x.md', 'c/readme.md']],
      ['a', ['SKILL.md', 'b/SKILL.md', 'b/x.md']],
      ['a/b', ['SKILL.md', 'x.md']],
    ]);
  });

  it('only searches the configured paths', () => {
    expect(
      discoverSkills([file('x/SKILL.md'), file('skills/a/SKILL.md')], ['skills']).skills.map((s) => s.dir),
    ).toEqual(['skills/a']);
  });

  it('reports a SKILL.md that is a folder, or a symlink to nothing', () => {
    const found = discoverSkills([
      file('a/SKILL.md/x'),
      { path: 'b/SKILL.md', type: 'symlink', id: 's', target: 'x' },
    ]);
    expect(found.problems.map((p) => [p.path, p.reason])).toEqual([
      ['a/SKILL.md', 'skill-md-not-file'],
      ['b/SKILL.md', 'skill-link-dangling'],
    ]);
    expect(found.skills).toEqual([]);
  });

  it("serves a symlink inside its skill with its target's content and reports the others", () => {
    const link = (path: string, target: string): TreeEntry => ({
      path,
      type: 'symlink',
      id: `l:${path}`,
      target,
    });
    const entries: TreeEntry[] = [
      file('s/SKILL.md'),
      file('s/guide.md', 'G'),
      file('other/SKILL.md'),
      link('s/alias.md', 'guide.md'),
      link('s/chain.md', 'alias.md'),
      link('s/out.md', '../other/SKILL.md'),
      link('s/abs.md', '/etc/passwd'),
      link('s/gone.md', 'nope.md'),
      link('s/loop.md', 'loop.md'),
      { path: 's/sub', type: 'submodule', id: 'c0ffee' },
      file('s/bad\\name.md'),
    ];
    const found = discoverSkills(entries);
    const s = found.skills.find((skill) => skill.dir === 's')!;
    expect(s.files.map((m) => [m.relPath, m.blob])).toEqual([
      ['SKILL.md', 's/SKILL.md'],
      ['guide.md', 'G'],
      ['alias.md', 'G'],
      ['chain.md', 'G'],
    ]);
    expect(found.problems.map((p) => [p.path, p.reason])).toEqual([
      ['s/out.md', 'symlink-outside-skill'],
      ['s/abs.md', 'symlink-outside-skill'],
      ['s/gone.md', 'symlink-dangling'],
      ['s/loop.md', 'symlink-loop'],
      ['s/sub', 'submodule'],
      ['s/bad\\name.md', 'file-name-invalid'],
    ]);
  });
});

describe('publishSkills', () => {
  it('serves a mismatched name under its name, nested skills moved with it, with a warning', () => {
    const entries = [file('skills/folder/SKILL.md'), file('skills/folder/inner/SKILL.md')];
    const result = publishSkills(
      candidates(entries, { 'skills/folder': 'renamed', 'skills/folder/inner': 'inner' }),
    );
    expect(result.skills.map((s) => [s.dir, s.servedDir])).toEqual([
      ['skills/folder', 'skills/renamed'],
      ['skills/folder/inner', 'skills/renamed/inner'],
    ]);
    expect(result.problems.map((p) => [p.path, p.reason, p.severity])).toEqual([
      ['skills/folder/SKILL.md', 'name-mismatch', 'warning'],
    ]);
  });

  it('publishes a root skill under its name', () => {
    const result = publishSkills(candidates([file('SKILL.md'), file('docs/a.md')], { '': 'root-helper' }));
    expect(result.skills.map((s) => s.servedDir)).toEqual(['root-helper']);
    expect(result.problems).toEqual([]);
  });

  it("refuses both skills when a renamed one lands on another's path", () => {
    const entries = [file('skills/a/SKILL.md'), file('skills/b/SKILL.md')];
    const result = publishSkills(candidates(entries, { 'skills/a': 'b', 'skills/b': 'b' }));
    expect(result.skills).toEqual([]);
    expect(result.problems.filter((p) => p.reason === 'path-collision').map((p) => p.path)).toEqual([
      'skills/a/SKILL.md',
      'skills/b/SKILL.md',
    ]);
  });

  it('refuses mismatches under strictNames', () => {
    const result = publishSkills(candidates([file('x/SKILL.md')], { x: 'y' }), { strictNames: true });
    expect(result.skills).toEqual([]);
    expect(result.problems.map((p) => p.reason)).toEqual(['name-mismatch-refused']);
  });

  it('warns about two skills with the same name at different paths', () => {
    const result = publishSkills(
      candidates([file('a/x/SKILL.md'), file('b/x/SKILL.md')], { 'a/x': 'x', 'b/x': 'x' }),
    );
    expect(result.skills.length).toBe(2);
    expect(result.problems.map((p) => [p.path, p.reason])).toEqual([
      ['a/x/SKILL.md', 'duplicate-name'],
      ['b/x/SKILL.md', 'duplicate-name'],
    ]);
  });

  it('names at most three others in a duplicate-name or path-collision message, however many there are', () => {
    const many = 3000;
    const same = Array.from({ length: many }, (_, i) => `s${String(i).padStart(4, '0')}/x`);
    const duplicates = publishSkills(
      candidates(
        same.map((dir) => file(`${dir}/SKILL.md`)),
        Object.fromEntries(same.map((dir) => [dir, 'x'])),
      ),
    );
    expect(duplicates.skills).toHaveLength(many);
    expect(duplicates.problems).toHaveLength(many);
    expect(duplicates.problems[0]).toMatchObject({
      path: 's0000/x/SKILL.md',
      reason: 'duplicate-name',
      detail: `another skill named "x" is served at s0001/x, s0002/x, s0003/x and ${many - 4} more; hosts must tell them apart by path`,
    });
    const clashing = Array.from({ length: many }, (_, i) => `p/a${String(i).padStart(4, '0')}`);
    const collided = publishSkills(
      candidates(
        clashing.map((dir) => file(`${dir}/SKILL.md`)),
        Object.fromEntries(clashing.map((dir) => [dir, 'z'])),
      ),
    );
    expect(collided.skills).toEqual([]);
    expect(collided.problems.filter((p) => p.reason === 'path-collision')).toHaveLength(many);
    expect(
      collided.problems.find((p) => p.path === 'p/a0001/SKILL.md' && p.reason === 'path-collision')?.detail,
    ).toBe(
      `would be served at p/z, which p/a0000, p/a0002, p/a0003 and ${many - 4} more also claims; neither is served`,
    );
  });

  it(`refuses a skill over ${MAX_SKILL_FILES} files or ${MAX_SKILL_BYTES} bytes, counting nested skills`, () => {
    expect([MAX_SKILL_FILES, MAX_SKILL_BYTES]).toEqual([512, 16 * 1024 * 1024]);
    const many = [
      file('big/SKILL.md'),
      file('big/n/SKILL.md'),
      ...Array.from({ length: 511 }, (_, i) => file(`big/n/f${i}.md`)),
    ];
    const result = publishSkills(candidates(many, { big: 'big', 'big/n': 'n' }));
    expect(result.skills.map((s) => s.dir)).toEqual(['big/n']);
    expect(result.problems.map((p) => [p.path, p.reason, p.detail])).toEqual([
      ['big', 'too-many-files', '513 files; the limit is 512'],
    ]);
    const heavy = publishSkills(
      candidates([file('h/SKILL.md'), file('h/a.bin')], { h: 'h' }, MAX_SKILL_BYTES / 2 + 1),
    );
    expect(heavy.problems.map((p) => p.reason)).toEqual(['too-large']);
  });

  it(`refuses a skill a file of which would have a URI over ${MAX_URI_BYTES} bytes, percent-encoded, with the longest source id`, () => {
    expect(MAX_URI_BYTES).toBe(4096);
    // skill://<64-character id>/<40-hex commit>/ is 114 bytes, 'long/' 5 more: a name of 3977 bytes just fits.
    const fits = 'f'.repeat(3977);
    const over = 'o'.repeat(3978);
    const encoded = '\u00e9'.repeat(663); // %C3%A9 each: 3978 bytes
    const published = (name: string) =>
      publishSkills(candidates([file('long/SKILL.md'), file(`long/${name}`)], { long: 'long' }));
    expect(published(fits).skills.map((s) => s.dir)).toEqual(['long']);
    for (const name of [over, encoded]) {
      const refused = published(name);
      expect(refused.skills).toEqual([]);
      expect(refused.problems.map((p) => [p.path, p.reason, p.detail])).toEqual([
        [
          'long/SKILL.md',
          'uri-too-long',
          `the URI of ${name.slice(0, 100)}… would be up to 4097 bytes; the limit is ${MAX_URI_BYTES}`,
        ],
      ]);
    }
  });
});
