import { describe, expect, it } from 'vitest';
import { openLocalRepository, readBlob, walkCommit } from '../../src/git/index.ts';
import { type CommitIndex, fileAt, type IndexedFile, indexCommit, packFiles } from '../../src/index/index.ts';
import { fixture } from '../helpers/fixtures.ts';

const catalog = fixture('catalog');

async function built(): Promise<CommitIndex> {
  const repo = await openLocalRepository(catalog.gitdir);
  const tree = await walkCommit(repo, catalog.commits['c2']!);
  return indexCommit({ ...tree, paths: ['skills'], readBlob: (id) => readBlob(repo, id) });
}

/** Every file's facts as plain objects, skill by skill. */
const facts = (index: CommitIndex) =>
  index.skills.map((skill) =>
    skill.files.map(({ path, relPath, blob, size, digest }: IndexedFile) => ({
      path,
      relPath,
      blob,
      size,
      digest,
    })),
  );

const copy = (index: CommitIndex) => JSON.parse(JSON.stringify(index)) as CommitIndex;

describe('packFiles', () => {
  it('holds every file packed, reads each fact as before, and writes the same JSON', async () => {
    const plain = await built();
    const files = plain.skills.reduce((sum, skill) => sum + skill.files.length, 0);
    expect(files).toBeGreaterThan(5);
    const index = packFiles(copy(plain));
    expect(facts(index)).toEqual(facts(plain));
    // Some skills hold the same paths (one list of them for all): each reads its own folder's files still.
    const lists = index.skills.map((skill) => skill.files.map((file) => file.relPath).join('\0'));
    expect(new Set(lists).size).toBeLessThan(lists.length);
    // Packed: a skill holds no file; each is made when asked for, holding its path in the skill, the rest read
    // from the commit's table.
    for (const [i, skill] of index.skills.entries()) {
      const declared = plain.skills[i]!.declaration === undefined ? [] : ['declaration'];
      expect(Object.keys(skill)).toEqual(['name', 'dir', 'servedDir', 'frontmatter', 'bytes', ...declared]);
      for (const file of skill.files) expect(Object.keys(file)).toEqual(['relPath']);
    }
    expect(JSON.stringify(index)).toBe(JSON.stringify(plain));
    // One file looked up by its path in the skill: the same facts, and nothing for a path it does not hold.
    for (const [i, skill] of index.skills.entries()) {
      for (const file of plain.skills[i]!.files) {
        const { path, relPath, blob, size, digest } = fileAt(skill, file.relPath)!;
        expect({ path, relPath, blob, size, digest }).toEqual(file);
      }
      expect(['', 'SKILL', 'zzz', `${skill.files[0]!.relPath}x`].map((path) => fileAt(skill, path))).toEqual([
        undefined,
        undefined,
        undefined,
        undefined,
      ]);
    }
    // A second call leaves what is packed as it is.
    const before = [...index.skills];
    packFiles(index);
    expect(index.skills).toHaveLength(before.length);
    for (const [i, skill] of index.skills.entries()) expect(skill).toBe(before[i]);
  });

  it('keeps a skill with a file that is not as an index builds it as it is; the others are packed', async () => {
    const plain = await built();
    const [odd, bad, sha256] = [0, 1, 2].map(() => copy(plain));
    // A path that is not its folder's and its path there, a digest in capitals, a blob id of another length.
    odd!.skills[0]!.files[0]!.path = `elsewhere/${odd!.skills[0]!.files[0]!.relPath}`;
    bad!.skills[0]!.files[0]!.digest = bad!.skills[0]!.files[0]!.digest.toUpperCase();
    // Files out of their path order (an index sorts them): left as they are, and still found.
    const unsorted = copy(plain);
    const twoFiles = unsorted.skills.findIndex((skill) => skill.files.length > 1);
    unsorted.skills[twoFiles]!.files.reverse();
    const reversed = unsorted.skills[twoFiles]!;
    packFiles(unsorted);
    expect(unsorted.skills[twoFiles]).toBe(reversed);
    expect(fileAt(reversed, reversed.files[0]!.relPath)).toBe(reversed.files[0]);
    for (const index of [odd!, bad!]) {
      const kept = index.skills[0]!;
      packFiles(index);
      expect(index.skills[0]!).toBe(kept);
      expect(Object.keys(index.skills[0]!.files[0]!)).toEqual(['path', 'relPath', 'blob', 'size', 'digest']);
      expect(Object.keys(index.skills[1]!.files[0]!)).toEqual(['relPath']);
    }
    expect(odd!.skills[0]!.files[0]!.path).toBe(`elsewhere/${plain.skills[0]!.files[0]!.relPath}`);
    // SHA-256 object names (64 hex digits) pack as well.
    for (const skill of sha256!.skills)
      for (const file of skill.files) file.blob = `${file.blob}${'0f'.repeat(12)}`;
    const wide = facts(sha256!);
    packFiles(sha256!);
    expect(facts(sha256!)).toEqual(wide);
    expect(sha256!.skills[0]!.files[0]!.blob).toHaveLength(64);
  });
});
