import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CommitIndex, INDEX_VERSION, type IndexOptions, indexStore } from '../../src/index/index.ts';
import { tempDir } from '../helpers/temp.ts';

const commit = 'a'.repeat(40);
const index: CommitIndex = {
  version: INDEX_VERSION,
  commit,
  commitTime: '2026-01-01T00:00:00Z',
  tree: 'b'.repeat(40),
  skills: [],
  problems: [],
};
const options: IndexOptions = { paths: ['skills'], strictNames: true };

describe('indexStore.adopt', () => {
  it("links another source's index file: one inode, each store's own name", async () => {
    const root = tempDir('skillpin-adopt-');
    const [one, two] = ['one', 'two'].map((id) => indexStore(path.join(root, id)));
    await one!.save(index, options);
    await two!.adopt(one!.file(commit), index, options);
    expect(statSync(two!.file(commit)).ino).toBe(statSync(one!.file(commit)).ino);
    await one!.remove(commit);
    expect(await two!.load(commit, options)).toEqual(index);
  });

  it('writes its own file again when the file held for it is its own one, removed since (retention)', async () => {
    const store = indexStore(path.join(tempDir('skillpin-adopt-'), 'one'));
    await store.save(index, options);
    const own = store.file(commit);
    await store.remove(commit);
    await store.adopt(own, index, options);
    expect(existsSync(own)).toBe(true);
    expect(await store.load(commit, options)).toEqual(index);
  });
});
