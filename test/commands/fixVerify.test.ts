import { describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/commands/checkReport.ts';
import { type SkillFix, verifyFixes } from '../../src/commands/fixVerify.ts';
import type { PatchedIndexer } from '../../src/commands/patchedIndex.ts';
import type { CommitIndex } from '../../src/index/index.ts';
import { problem } from '../../src/skills/index.ts';

const skillMd = (name: string) => `---\nname: ${name}\ndescription: D.\n---\n`;
const fixOf = (dir: string, name: string): SkillFix => ({
  path: dir === '' ? 'SKILL.md' : `${dir}/SKILL.md`,
  dir,
  before: skillMd(name.toUpperCase()),
  after: skillMd(name),
  changes: [{ kind: 'value', key: 'name', from: name.toUpperCase(), to: name }],
});
const served = (dir: string) => ({
  name: dir.split('/').at(-1)!,
  uri: '',
  path: dir,
  servedPath: dir,
  files: 1,
  bytes: 1,
});
const reportOf = (skills: string[], problems: CheckReport['problems'] = []) =>
  ({ skills: skills.map(served), problems }) as unknown as CheckReport;
const indexOf = (skills: string[], problems: CommitIndex['problems'] = []) =>
  ({
    skills: skills.map((dir) => ({ name: dir.split('/').at(-1), dir, servedDir: dir })),
    problems,
  }) as unknown as CommitIndex;

/** An indexer that answers each call with the next of `indexes`, and records the patches it was given. */
function indexer(...indexes: CommitIndex[]): PatchedIndexer & { asked: string[][] } {
  const asked: string[][] = [];
  return {
    asked,
    index: async (patches) => {
      asked.push([...patches.keys()]);
      const next = indexes.shift();
      if (next === undefined) throw new Error('indexed once too often');
      return next;
    },
    close: async () => undefined,
  };
}

describe('verifyFixes', () => {
  it('proposes neither of two fixes that would serve their skills at one path', async () => {
    const none = indexer();
    const result = await verifyFixes([fixOf('', 'tool'), fixOf('tool', 'tool')], reportOf([]), none);
    expect(result).toEqual({
      fixes: [],
      unfixed: [
        { path: 'SKILL.md', detail: 'would collide with tool, which another fix would serve at tool too' },
        { path: 'tool/SKILL.md', detail: 'would collide with ., which another fix would serve at tool too' },
      ],
    });
    expect(none.asked).toEqual([]);
  });

  it('drops every fix when together they would stop serving a skill served now', async () => {
    const lost = indexer(indexOf(['skills/y']));
    const result = await verifyFixes([fixOf('skills/y', 'y')], reportOf(['skills/x']), lost);
    expect(result).toEqual({
      fixes: [],
      unfixed: [
        { path: 'skills/y/SKILL.md', detail: 'the fixes together would stop serving skills/x at skills/x' },
      ],
    });
    expect(lost.asked).toEqual([['skills/y/SKILL.md']]);
  });

  it('drops a fix the index shows in a collision, indexes the rest again, and judges each by that index', async () => {
    const collision = problem(
      'skills/b/SKILL.md',
      'path-collision',
      'would be served at skills/b, which skills/c also claims; neither is served',
    );
    const lfs = problem('skills/a/model.bin', 'lfs-pointer', 'a Git LFS pointer');
    const refused = problem('skills/d/SKILL.md', 'metadata-invalid', 'metadata must map strings to strings');
    const twice = indexer(indexOf(['skills/a'], [collision]), indexOf(['skills/a'], [lfs, refused]));
    const result = await verifyFixes(
      [fixOf('skills/a', 'a'), fixOf('skills/b', 'b'), fixOf('skills/d', 'd')],
      reportOf([], [{ source: 's', commit: 'c', ...refused, severity: 'error' }]),
      twice,
    );
    expect(result.unfixed).toEqual([
      {
        path: 'skills/b/SKILL.md',
        detail:
          'with the fix, path-collision: would be served at skills/b, which skills/c also claims; neither is served',
      },
    ]);
    expect(
      result.fixes.map(({ path, servable, remaining, revealed }) => ({
        path,
        servable,
        remaining,
        revealed,
      })),
    ).toEqual([
      { path: 'skills/a/SKILL.md', servable: true, remaining: [], revealed: ['lfs-pointer'] },
      { path: 'skills/d/SKILL.md', servable: false, remaining: ['metadata-invalid'], revealed: [] },
    ]);
    expect(twice.asked).toEqual([
      ['skills/a/SKILL.md', 'skills/b/SKILL.md', 'skills/d/SKILL.md'],
      ['skills/a/SKILL.md', 'skills/d/SKILL.md'],
    ]);
  });
});
