import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { renderMarkdown, sourceDiff } from '../../src/pins/diffReport.ts';
import {
  type CommitIndex,
  diffIndexes,
  INDEX_VERSION,
  type IndexedSkill,
  skillDigest,
} from '../../src/index/index.ts';
import { problem } from '../../src/shared/reasons.ts';

const digest = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

function skill(dir: string, name: string, files: Record<string, string>): IndexedSkill {
  return {
    name,
    dir,
    servedDir: dir,
    frontmatter: { name, description: 'd' },
    files: Object.entries(files).map(([relPath, text]) => ({
      path: `${dir}/${relPath}`,
      relPath,
      blob: '0'.repeat(40),
      size: Buffer.byteLength(text),
      digest: digest(text),
    })),
    bytes: Object.values(files).reduce((sum, text) => sum + Buffer.byteLength(text), 0),
  };
}

const index = (
  commit: string,
  skills: IndexedSkill[],
  problems: CommitIndex['problems'] = [],
): CommitIndex => ({
  version: INDEX_VERSION,
  commit,
  commitTime: '2024-01-01T00:00:00.000Z',
  tree: 'f'.repeat(40),
  skills,
  problems,
});

describe('the aggregate digest', () => {
  it('is sha256 over "<digest> <size> <path>\\n" lines sorted by the UTF-8 bytes of the path', () => {
    // "Ａ" (U+FF21) and "😀" (U+1F600): UTF-16 puts the emoji first (a surrogate, 0xD83D), UTF-8 bytes last.
    const s = skill('s', 's', { '😀.md': 'smile', 'b.md': 'b', 'Ａ.md': 'fullwidth', 'SKILL.md': 'x' });
    const lines = ['SKILL.md', 'b.md', 'Ａ.md', '😀.md']
      .map((path) => {
        const file = s.files.find((f) => f.relPath === path)!;
        return `${file.digest} ${file.size} ${path}\n`;
      })
      .join('');
    expect(skillDigest(s)).toBe(digest(lines));
    // The order files are held in does not matter.
    expect(skillDigest({ ...s, files: [...s.files].reverse() })).toBe(skillDigest(s));
  });
});

describe('diffIndexes', () => {
  it('reports a renamed skill as changed, and problems that came and went by path and reason', () => {
    const before = index(
      'a'.repeat(40),
      [skill('x', 'old-name', { 'SKILL.md': 'one' })],
      [problem('y/SKILL.md', 'name-invalid', 'bad'), problem('z/SKILL.md', 'description-missing', 'none')],
    );
    const after = index(
      'b'.repeat(40),
      [skill('x', 'new-name', { 'SKILL.md': 'two' })],
      [
        problem('y/SKILL.md', 'name-invalid', 'bad, said differently'),
        problem('w/SKILL.md', 'frontmatter-missing', '[click](https://evil.example) <img src=x>'),
      ],
    );
    const diff = diffIndexes(before, after);
    expect(diff.skills.changed.map((s) => [s.path, s.from.name, s.to.name])).toEqual([
      ['x', 'old-name', 'new-name'],
    ]);
    expect(diff.problems.introduced.map((p) => p.path)).toEqual(['w/SKILL.md']);
    expect(diff.problems.resolved.map((p) => p.path)).toEqual(['z/SKILL.md']);
    // Text from the repository cannot become a link or HTML in a pull request.
    const markdown = renderMarkdown([sourceDiff('s', 'local:s', { index: before }, { index: after })]);
    expect(markdown).toContain(
      '- error `frontmatter-missing` `w/SKILL.md`: \\[click\\]\\(https://evil\\.example\\) \\<img src=x\\>',
    );
  });
});
